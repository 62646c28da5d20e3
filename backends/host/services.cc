// The engine's shared helpers: status names, versions, the core's host
// services and deadlines. Part of the host engine that the host and sim
// backends share (backends/host/README.md).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "host_backend.h"

namespace accel::host {

const char* StatusName(accel_status_t status) noexcept {
  switch (status) {
    case ACCEL_SUCCESS: return "ACCEL_SUCCESS";
    case ACCEL_NOT_READY: return "ACCEL_NOT_READY";
    case ACCEL_ERROR_INVALID_ARGUMENT: return "ACCEL_ERROR_INVALID_ARGUMENT";
    case ACCEL_ERROR_INVALID_HANDLE: return "ACCEL_ERROR_INVALID_HANDLE";
    case ACCEL_ERROR_INVALID_ENUM: return "ACCEL_ERROR_INVALID_ENUM";
    case ACCEL_ERROR_UNSUPPORTED: return "ACCEL_ERROR_UNSUPPORTED";
    case ACCEL_ERROR_UNIMPLEMENTED: return "ACCEL_ERROR_UNIMPLEMENTED";
    case ACCEL_ERROR_NOT_FOUND: return "ACCEL_ERROR_NOT_FOUND";
    case ACCEL_ERROR_RESOURCE_EXHAUSTED: return "ACCEL_ERROR_RESOURCE_EXHAUSTED";
    case ACCEL_ERROR_FAILED_PRECONDITION: return "ACCEL_ERROR_FAILED_PRECONDITION";
    case ACCEL_ERROR_TIMEOUT: return "ACCEL_ERROR_TIMEOUT";
    case ACCEL_ERROR_DEVICE_LOST: return "ACCEL_ERROR_DEVICE_LOST";
    case ACCEL_ERROR_BACKEND_UNAVAILABLE: return "ACCEL_ERROR_BACKEND_UNAVAILABLE";
    case ACCEL_ERROR_INCOMPATIBLE_VERSION: return "ACCEL_ERROR_INCOMPATIBLE_VERSION";
    case ACCEL_ERROR_INTERNAL: return "ACCEL_ERROR_INTERNAL";
    case ACCEL_STATUS_FORCE32: break;
  }
  return "ACCEL_STATUS_UNKNOWN";
}

std::string VersionString(uint32_t version) {
  return std::to_string(ACCEL_VERSION_MAJOR(version)) + "." + std::to_string(ACCEL_VERSION_MINOR(version)) + "." +
         std::to_string(ACCEL_VERSION_PATCH(version));
}

HostServices::HostServices(const accel_host_services_t* services, const char* backend_name) noexcept
    : backend_name_(backend_name) {
  if (services == nullptr) return;
  if (ACCEL_HOST_HAS_FIELD(services, accel_host_services_t, context)) context_ = services->context;
  if (ACCEL_HOST_HAS_FIELD(services, accel_host_services_t, log)) log_ = services->log;
  if (ACCEL_HOST_HAS_FIELD(services, accel_host_services_t, set_error)) set_error_ = services->set_error;
  if (ACCEL_HOST_HAS_FIELD(services, accel_host_services_t, get_setting)) get_setting_ = services->get_setting;
}

const char* HostServices::Setting(const char* name) const noexcept {
  return get_setting_ != nullptr ? get_setting_(context_, name) : nullptr;
}

void HostServices::Log(accel_log_level_t level, const char* message) const noexcept {
  if (log_ != nullptr) log_(context_, level, message);
}

accel_status_t HostServices::Fail(accel_status_t status, const char* message) const noexcept {
  if (set_error_ != nullptr) set_error_(context_, status, message);
  return status;
}

Deadline::Deadline(uint64_t timeout_ns) {
  // Timeouts past ~146 years cannot be added to steady_clock::now() without overflow; they are infinite in practice.
  constexpr uint64_t kLongestFinite = uint64_t{1} << 62;
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE || timeout_ns > kLongestFinite) return;
  end_ = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(timeout_ns));
}

// Negotiation: the major of the core's newest version must be ours; the answer is the older of the two newest.
accel_status_t NegotiateApi(accel_backend_get_api_args_t* args, const accel_backend_api_t* api,
                            const char* backend_name) noexcept {
  if (args == nullptr) return ACCEL_ERROR_INVALID_ARGUMENT;
  const HostServices host(ACCEL_HOST_HAS_FIELD(args, accel_backend_get_api_args_t, host) ? args->host : nullptr,
                          backend_name);
  return Guard(host, ACCEL_BACKEND_ENTRY_POINT_NAME, [&]() -> accel_status_t {
    if (args->stype != ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "arguments have stype " + std::to_string(args->stype) +
                                                         ", expected " +
                                                         std::to_string(ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS));
    }
    if (!ACCEL_HOST_HAS_FIELD(args, accel_backend_get_api_args_t, out_api)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "arguments are " + std::to_string(args->struct_size) + " bytes, too small for ABI 1.0 (" +
                           std::to_string(offsetof(accel_backend_get_api_args_t, out_api) + sizeof(args->out_api)) +
                           " bytes)");
    }
    args->out_abi_version = 0;
    args->out_api = nullptr;
    const uint32_t core_min = args->core_abi_version_min;
    const uint32_t core_max = args->core_abi_version_max;
    if (ACCEL_VERSION_MAJOR(core_max) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
      return host.Fail(ACCEL_ERROR_INCOMPATIBLE_VERSION,
                       "the core speaks backend ABI up to " + VersionString(core_max) + ", the " +
                           std::string(backend_name) + " backend speaks " + VersionString(ACCEL_BACKEND_ABI_VERSION) +
                           ": the major versions differ");
    }
    const uint32_t negotiated = core_max < ACCEL_BACKEND_ABI_VERSION ? core_max : ACCEL_BACKEND_ABI_VERSION;
    if (negotiated < core_min) {
      return host.Fail(ACCEL_ERROR_INCOMPATIBLE_VERSION, "the core accepts backend ABI " + VersionString(core_min) +
                                                             " to " + VersionString(core_max) + ", the " +
                                                             std::string(backend_name) + " backend implements up to " +
                                                             VersionString(ACCEL_BACKEND_ABI_VERSION));
    }
    args->out_abi_version = negotiated;
    args->out_api = api;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::host
