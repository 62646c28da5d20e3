// The body of context_get_devices for a backend whose context holds its devices in a vector of unique_ptr (the
// cuda, hip and level_zero backends). Part of accel_backend_support (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_DEVICE_LIST_H_
#define ACCEL_BACKENDS_COMMON_DEVICE_LIST_H_

#include <accel_backend.h>

#include <memory>
#include <string>
#include <vector>

#include "common/services.h"

namespace accel::backend {

// With `out_devices` NULL, the count; else the handles, or INVALID_ARGUMENT when `*inout_count` is too small (with
// the count needed in it).
template <typename Device>
accel_status_t ListDevices(const HostServices& host, const std::vector<std::unique_ptr<Device>>& devices,
                           uint32_t* inout_count, accel_bk_device_t* out_devices) {
  const auto count = static_cast<uint32_t>(devices.size());
  if (out_devices == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < count) {
    *inout_count = count;
    return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                     "the device array holds fewer than " + std::to_string(count) + " devices");
  }
  for (uint32_t i = 0; i < count; ++i) out_devices[i] = reinterpret_cast<accel_bk_device_t>(devices[i].get());
  *inout_count = count;
  return ACCEL_SUCCESS;
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_DEVICE_LIST_H_
