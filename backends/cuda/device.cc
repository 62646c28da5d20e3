// The memory slot of a device (its descriptor, mapped once in context_create by attributes.h, is common/gpu_api.h's
// capabilities slot): live memory figures from cuMemGetInfo in the device's primary context.
#include "cuda_backend.h"

namespace accel::cuda {

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const Device* device = Unwrap(handle);
  return Guard(*device->host, "device_get_memory_info", [&] {
    const CuApi& cu = device->runtime->cu;
    ScopedContext scope(device);
    if (scope.result() != CUDA_SUCCESS) {
      return device->host->Fail(StatusFromCu(scope.result()), CuFailure(cu, "cuCtxPushCurrent", scope.result()));
    }
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    const CUresult r = cu.cuMemGetInfo(&free_bytes, &total_bytes);
    if (r != CUDA_SUCCESS) return device->host->Fail(StatusFromCu(r), CuFailure(cu, "cuMemGetInfo", r));
    *out_free = free_bytes;
    // memory_total is cuDeviceTotalMem, the same figure cuMemGetInfo gives as the total.
    *out_total = device->capabilities.memory_total;
    if (*out_free > *out_total) *out_free = *out_total;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::cuda
