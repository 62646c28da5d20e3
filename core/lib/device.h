// Devices (one access path: a backend's device) and physical devices (the
// chip behind one or more access paths), docs/devices.md.
#ifndef ACCEL_CORE_DEVICE_H_
#define ACCEL_CORE_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "handle_table.h"
#include "memory_account.h"

namespace accel::core {

class Instance;
class PhysicalDevice;

// A backend device as the application sees it. Immutable after the instance
// is created, so thread-safe.
class Device : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kDevice;

  Instance* instance = nullptr;  // outlives the device
  std::shared_ptr<Backend> backend;
  accel_bk_device_t bk = nullptr;
  uint32_t backend_index = 0;          // position in the backend's own list
  uint32_t index = 0;                  // position in the instance's visible list
  accel_device_capabilities_t caps{};  // complete, with the core's fields
  std::string physical_id;
  PhysicalDevice* physical = nullptr;
  std::string label;  // "device 0 (host: AMD EPYC 7B13)"
};

// A group of access paths that reach one chip. Immutable after creation.
class PhysicalDevice : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kPhysicalDevice;

  accel_physical_device_properties_t props{};
  std::vector<std::shared_ptr<Device>> devices;  // visible access paths, in order
  // This process's device memory here, shared by all its instances, with
  // the ACCEL_MEMORY_LIMIT limit (docs/memory-limits.md).
  std::shared_ptr<MemoryAccount> account;
};

}  // namespace accel::core

#endif  // ACCEL_CORE_DEVICE_H_
