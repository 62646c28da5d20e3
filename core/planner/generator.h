// A synthetic cluster for tests and the bench: N nodes of identical devices
// with cliques, NUMA nodes, racks and blocks. Pure function: thread-safe.
#ifndef ACCEL_CORE_PLANNER_GENERATOR_H_
#define ACCEL_CORE_PLANNER_GENERATOR_H_

#include <cstdint>
#include <vector>

#include "cluster.h"

namespace accel::planner {

struct GeneratorSpec {
  uint32_t nodes = 1024;
  uint32_t devices_per_node = 8;
  uint32_t cliques_per_node = 1;  // devices split evenly, in order
  uint32_t numa_per_node = 2;
  uint32_t nodes_per_rack = 8;
  uint32_t racks_per_block = 16;
  // 0: cliques are node-local; else every run of this many consecutive nodes shares fabric clique "f<i / N>" (an
  // NVL72 rack: 18 nodes of 4 devices).
  uint32_t nodes_per_fabric = 0;
  uint64_t memory = uint64_t{80} << 30;
};

// Node "n<i>" in rack "r<i / nodes_per_rack>" in block "b<rack / racks_per_block>";
// device "gpu<j>", kind gpu, sku "sim-gpu", clique "nvl<c>", its own PCIe root.
std::vector<NodeSpec> GenerateNodes(const GeneratorSpec& spec);

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_GENERATOR_H_
