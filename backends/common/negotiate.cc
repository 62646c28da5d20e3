// The body of accel_backend_get_api (negotiate.h).
#include "common/negotiate.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/prefix.h"
#include "common/services.h"

namespace accel::backend {

accel_status_t NegotiateApi(accel_backend_get_api_args_t* args, const accel_backend_api_t* api,
                            const char* backend_name) noexcept {
  if (args == nullptr) return ACCEL_ERROR_INVALID_ARGUMENT;
  const HostServices host(ACCEL_BACKEND_HAS_FIELD(args, accel_backend_get_api_args_t, host) ? args->host : nullptr,
                          backend_name);
  return Guard(host, ACCEL_BACKEND_ENTRY_POINT_NAME, [&]() -> accel_status_t {
    if (args->stype != ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "arguments have stype " + std::to_string(args->stype) +
                                                         ", expected " +
                                                         std::to_string(ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS));
    }
    if (!ACCEL_BACKEND_HAS_FIELD(args, accel_backend_get_api_args_t, out_api)) {
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

}  // namespace accel::backend
