// C entry points: status names, the last error, the library version.
#include "api_common.h"
#include "backend.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

extern "C" {

ACCEL_API const char* accel_status_name(accel_status_t status) { return StatusName(status); }

ACCEL_API const char* accel_last_error(void) { return LastErrorMessage(); }

ACCEL_API accel_status_t accel_last_error_status(void) { return LastErrorStatus(); }

ACCEL_API accel_status_t accel_set_last_error(accel_status_t status, const char* message) {
  return SetLastErrorText(status, message);
}

ACCEL_API accel_status_t accel_version_get(accel_version_info_t* out_info) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_TRY(CheckOutStruct(out_info, ACCEL_STRUCTURE_TYPE_VERSION_INFO, "out_info"));
    accel_version_info_t v{};
    v.library_version =
        ACCEL_MAKE_VERSION(ACCEL_LIBRARY_VERSION_MAJOR, ACCEL_LIBRARY_VERSION_MINOR, ACCEL_LIBRARY_VERSION_PATCH);
    v.abi_version = ACCEL_ABI_VERSION;
    v.backend_abi_min = kCoreBackendAbiMin;
    v.backend_abi_max = kCoreBackendAbiMax;
    v.build = ACCEL_BUILD_DESCRIPTION;
    FillOutStruct(out_info, v);
    return Status::Ok();
  });
}

}  // extern "C"
