// Status and version names and the core's host services (services.h).
#include "common/services.h"

#include <cstdint>
#include <string>

#include "common/prefix.h"

namespace accel::backend {

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
    case ACCEL_ERROR_CANCELLED: return "ACCEL_ERROR_CANCELLED";
    case ACCEL_STATUS_FORCE32: break;
  }
  return "ACCEL_STATUS_UNKNOWN";
}

accel_status_t HostCallbackResult(accel_status_t returned, std::string* message) {
  if (returned == ACCEL_SUCCESS) return ACCEL_SUCCESS;
  *message = std::string("returned ") + StatusName(returned);
  if (returned > 0) {
    *message +=
        " (" + std::to_string(returned) + "), which is not an error; host callbacks return ACCEL_SUCCESS or an error";
    return ACCEL_ERROR_INTERNAL;
  }
  return returned;
}

std::string VersionString(uint32_t version) {
  return std::to_string(ACCEL_VERSION_MAJOR(version)) + "." + std::to_string(ACCEL_VERSION_MINOR(version)) + "." +
         std::to_string(ACCEL_VERSION_PATCH(version));
}

HostServices::HostServices(const accel_host_services_t* services, const char* backend_name) noexcept
    : backend_name_(backend_name) {
  if (services == nullptr) return;
  if (ACCEL_BACKEND_HAS_FIELD(services, accel_host_services_t, context)) context_ = services->context;
  if (ACCEL_BACKEND_HAS_FIELD(services, accel_host_services_t, log)) log_ = services->log;
  if (ACCEL_BACKEND_HAS_FIELD(services, accel_host_services_t, set_error)) set_error_ = services->set_error;
  if (ACCEL_BACKEND_HAS_FIELD(services, accel_host_services_t, get_setting)) get_setting_ = services->get_setting;
  if (ACCEL_BACKEND_HAS_FIELD(services, accel_host_services_t, cache_dir)) cache_dir_ = services->cache_dir;
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

}  // namespace accel::backend
