// The cluster the planner places gangs on (docs/planner.md, "Model"): nodes,
// their devices with selector attributes and capacity, and every device's
// domain at each level. Built once (from a cluster file, a generator or code)
// and immutable afterwards: every const member is thread-safe.
#ifndef ACCEL_CORE_PLANNER_CLUSTER_H_
#define ACCEL_CORE_PLANNER_CLUSTER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attributes.h"
#include "expected.h"
#include "level.h"

namespace accel::planner {

// One device as a node describes it. Plain value.
struct DeviceSpec {
  std::string id;                      // physical id within its node ("gpu3"), unique there
  std::string clique;                  // fabric clique id within the node; "" none (the device is a clique of its own)
  std::string pcie_root;               // "pci0000:15"; "" unknown (a root of its own)
  int64_t numa_node = -1;              // -1 unknown (a NUMA domain of its own)
  uint64_t memory = 0;                 // bytes the device offers to bundles
  selector::MapAttributes attributes;  // what selectors evaluate (docs/selectors.md keys)
};

// One node as its topology description says. Plain value.
struct NodeSpec {
  std::string id;     // unique in the cluster
  std::string rack;   // "" none: the node is a rack of its own
  std::string block;  // "" none: the node's rack is a block of its own
  // "" none; else the clique spanning nodes that this node's devices with a clique belong to, in place of their
  // node-local cliques: one fabric over several nodes' devices, as an NVL72 rack's NVLink domain over 18 trays.
  // Unique in the cluster, without '/' (node-local clique ids are "<node>/<clique>").
  std::string fabric_clique;
  std::vector<DeviceSpec> devices;
};

// A device of the built cluster.
struct Device {
  std::string id;
  uint32_t node = 0;   // index into Cluster::nodes()
  uint32_t index = 0;  // position within its node's description
  uint64_t memory = 0;
  selector::MapAttributes attributes;
  std::array<uint32_t, kLevelCount> domain{};  // domain index at each level (Cluster::domains)
};

// A domain at one level: the devices in it, in rank order, and (node, rack,
// block only) its children one packing level in.
struct Domain {
  std::string id;  // node-qualified for node-local levels: "n17/nvl0", "n17/numa1"; a fabric clique's own id
  std::vector<uint32_t> devices;
  std::vector<uint32_t> children;  // block: racks; rack: nodes; node: cliques (a fabric clique is a child of each)
  std::vector<uint32_t> nodes;     // the node domains it has devices in, in rank order (one but for a fabric clique)
};

class Cluster {
 public:
  // Checks and indexes `nodes`: node ids unique and non-empty, device ids
  // unique within a node and non-empty, a rack in one block only, fabric
  // clique ids without '/'. Errors name the node and the device
  // ("nodes[2].devices[5].id: duplicate 'gpu1'").
  static Expected<Cluster> Build(std::vector<NodeSpec> nodes);

  const std::vector<NodeSpec>& nodes() const { return nodes_; }
  // Devices in topology rank order: node (in the order given), then clique id,
  // then position within the node. A device's index here is its rank.
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Domain>& domains(Level level) const { return domains_[static_cast<size_t>(level)]; }
  // The blocks, in rank order: the root of the packing tree block > rack > node > clique.
  const std::vector<uint32_t>& blocks() const { return blocks_; }

 private:
  std::vector<NodeSpec> nodes_;
  std::vector<Device> devices_;
  std::array<std::vector<Domain>, kLevelCount> domains_;
  std::vector<uint32_t> blocks_;
};

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_CLUSTER_H_
