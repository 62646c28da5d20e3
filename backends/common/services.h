// The core's host services as a backend sees them, the guard that keeps exceptions from crossing the C ABI, and
// status and version names. Part of accel_backend_support (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_SERVICES_H_
#define ACCEL_BACKENDS_COMMON_SERVICES_H_

#include <accel_backend.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

namespace accel::backend {

// "ACCEL_ERROR_INTERNAL"; "ACCEL_STATUS_UNKNOWN" for a value this build does not know (a backend cannot call
// libaccel's accel_status_name).
const char* StatusName(accel_status_t status) noexcept;

// "1.0.0" for a packed ACCEL_MAKE_VERSION value.
std::string VersionString(uint32_t version);

// What a host callback's return value makes of its operation: ACCEL_SUCCESS, or the status its stream takes, with
// `*message` saying why ("returned ACCEL_ERROR_INTERNAL"). A positive value is not an error: ACCEL_ERROR_INTERNAL.
accel_status_t HostCallbackResult(accel_status_t returned, std::string* message);

// The core's services, read field by field as far as the core's struct_size reaches; a missing service is a no-op.
// Immutable after construction; the core's services may be called from any thread.
class HostServices {
 public:
  // `backend_name` is static; messages say "the <name> backend".
  HostServices(const accel_host_services_t* services, const char* backend_name) noexcept;

  const char* backend_name() const noexcept { return backend_name_; }
  // The instance's value of an ACCEL_* setting, or NULL (accel_host_services_t::get_setting).
  const char* Setting(const char* name) const noexcept;
  // ACCEL_CACHE_DIR as the core passed it, or NULL when it passed none.
  const char* cache_dir() const noexcept { return cache_dir_; }

  void Log(accel_log_level_t level, const char* message) const noexcept;
  void Log(accel_log_level_t level, const std::string& message) const noexcept { Log(level, message.c_str()); }

  // Hands `message` to the core as the calling thread's error for the slot in progress and returns `status`.
  accel_status_t Fail(accel_status_t status, const char* message) const noexcept;
  accel_status_t Fail(accel_status_t status, const std::string& message) const noexcept {
    return Fail(status, message.c_str());
  }

 private:
  const char* backend_name_;
  void* context_ = nullptr;
  void (*log_)(void*, accel_log_level_t, const char*) = nullptr;
  void (*set_error_)(void*, accel_status_t, const char*) = nullptr;
  const char* (*get_setting_)(void*, const char*) = nullptr;
  const char* cache_dir_ = nullptr;
};

// Runs a slot's body and turns an escaping exception into a status with a message, so none crosses the C ABI.
template <typename Body>
accel_status_t Guard(const HostServices& host, const char* slot, Body&& body) noexcept {
  char message[512];
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::snprintf(message, sizeof(message), "%s: out of host memory", slot);
    return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, message);
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: %s", slot, host.backend_name(),
                  e.what());
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: unknown exception", slot,
                  host.backend_name());
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  }
}

// Guard for the slots that return nothing (the destroy slots): an escaping exception is logged as an error.
template <typename Body>
void GuardVoid(const HostServices& host, const char* slot, Body&& body) noexcept {
  char message[512];
  try {
    body();
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: %s", slot, host.backend_name(),
                  e.what());
    host.Log(ACCEL_LOG_LEVEL_ERROR, message);
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: unknown exception", slot,
                  host.backend_name());
    host.Log(ACCEL_LOG_LEVEL_ERROR, message);
  }
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_SERVICES_H_
