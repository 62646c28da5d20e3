// The memory slot of a device (its descriptor, mapped once in context_create by attributes.h, is common/gpu_api.h's
// capabilities slot): live memory figures from hipMemGetInfo with the device current.
#include "hip_backend.h"

namespace accel::hip {

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const Device* device = Unwrap(handle);
  return Guard(*device->host, "device_get_memory_info", [&] {
    const HipApi& hip = device->runtime->hip;
    ScopedDevice scope(device);
    if (scope.result() != hipSuccess) {
      return device->host->Fail(StatusFromHip(scope.result()), HipFailure(hip, "hipSetDevice", scope.result()));
    }
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    const hipError_t r = hip.hipMemGetInfo(&free_bytes, &total_bytes);
    if (r != hipSuccess) return device->host->Fail(StatusFromHip(r), HipFailure(hip, "hipMemGetInfo", r));
    *out_free = free_bytes;
    // memory_total is hipDeviceTotalMem, the same figure hipMemGetInfo gives as the total.
    *out_total = device->capabilities.memory_total;
    if (*out_free > *out_total) *out_free = *out_total;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::hip
