// The resource model (docs/scheduler.md, "Resources"): the physical devices
// of an instance as a one-node planner cluster, read through libaccel's
// public API only. Built once; immutable afterwards, so thread-safe.
#ifndef ACCEL_RUNTIME_RESOURCES_H_
#define ACCEL_RUNTIME_RESOURCES_H_

#include <accel/accel.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster.h"
#include "expected.h"

namespace accel::runtime {

// One physical device as a resource. Plain value.
struct Resource {
  accel_physical_device_t physical = nullptr;
  accel_device_t path = nullptr;  // the first access path, which tasks get
  std::string id;                 // stable id
  std::string label;              // "physical device 3 (NVIDIA H100 80GB HBM3)"
  uint64_t memory = 0;            // what the runtime hands out: min(device memory, ACCEL_MEMORY_LIMIT)
};

struct Resources {
  // Indexed by rank (the cluster's device order).
  std::vector<Resource> devices;
  std::unique_ptr<planner::Cluster> cluster;
};

// Reads every physical device of `instance`: capabilities of each access
// path (merged as selectors see them), topology (clique, PCIe root, NUMA,
// rack and block domains) and memory.
planner::Expected<Resources> ReadResources(accel_instance_t instance);

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_RESOURCES_H_
