// The memory slot of a device (the descriptor, mapped once in context_create by attributes.h, is common/gpu_api.h's
// capabilities slot): Level Zero 1.0 has no free-memory query, so the free figure is the total
// less the device memory this backend holds (other processes' use is not seen).
#include "level_zero_backend.h"

namespace accel::level_zero {

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const Device* device = Unwrap(handle);
  const uint64_t total = device->capabilities.memory_total;
  const uint64_t used = device->allocated.load(std::memory_order_relaxed);
  *out_total = total;
  *out_free = used < total ? total - used : 0;
  return ACCEL_SUCCESS;
}

}  // namespace accel::level_zero
