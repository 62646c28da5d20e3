// The two device slots: the descriptor mapped once in context_create (attributes.h, pure functions unit-tested in
// tests/level_zero), and memory figures: Level Zero 1.0 has no free-memory query, so the free figure is the total
// less the device memory this backend holds (other processes' use is not seen).
#include "level_zero_backend.h"

namespace accel::level_zero {

accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
  // The core passes a zeroed struct of its own size, numa_node preset; write only what it covers.
  const Device* device = Unwrap(handle);
  WritePrefix(device->capabilities, out);
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const Device* device = Unwrap(handle);
  const uint64_t total = device->capabilities.memory_total;
  const uint64_t used = device->allocated.load(std::memory_order_relaxed);
  *out_total = total;
  *out_free = used < total ? total - used : 0;
  return ACCEL_SUCCESS;
}

}  // namespace accel::level_zero
