// The topology description a simulated node is built from (docs/topology.md,
// "The topology description"): devices, NUMA nodes, NICs, links and domains,
// read from a sim profile or from the "topology" member of `accel-info --json`.
// Parsing is a pure function of the text, so tests and the fuzzer call it
// directly.
#ifndef ACCEL_BACKENDS_SIM_PROFILE_H_
#define ACCEL_BACKENDS_SIM_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/accel.h"

namespace accel::sim {

// One NUMA node of the simulated machine. Plain value.
struct NumaNode {
  int32_t id = 0;
  std::string cpus;  // Linux cpulist, "0-55,112-167"
  uint32_t cpu_count = 0;
};

// One simulated device: what its descriptor and placement say. Plain value.
struct DeviceSpec {
  std::string id;                      // unique within the profile; links and NIC links name it
  accel_device_capabilities_t caps{};  // every backend-owned field; kernel_formats is native-host
  std::string pcie_root;               // "pci0000:15"; "" unknown
  std::string pcie_switch;             // devices and NICs under one switch are PIX; "" none
  std::string clique;                  // fabric clique id; "" none
};

// One NIC of the simulated machine. Plain value.
struct NicSpec {
  std::string name;  // unique within the profile
  std::string kind;  // "rdma", "ethernet", "infiniband"
  std::string pci_bus_id;
  std::string pcie_root;
  std::string pcie_switch;
  int32_t numa_node = -1;
};

// A link between two devices, or from a device to a NIC. Plain value.
struct LinkSpec {
  size_t a = 0;  // device index
  size_t b = 0;  // device index, or NIC index for a NIC link
  accel_link_class_t link_class = ACCEL_LINK_CLASS_UNKNOWN;
  uint32_t link_count = 0;
  uint64_t bandwidth = 0;  // bytes/s one way
  bool peer_access = false;
  std::string fabric;
};

// Injected faults (docs/sim.md, "Faults"): deterministic under `seed`. Plain value.
struct FaultSpec {
  uint64_t seed = 0;
  double allocation_failure_probability = 0.0;  // each allocation fails with this probability
  uint64_t device_lost_after = 0;               // 0: never; else the device is lost after this many operations
  uint64_t stream_error_after = 0;              // 0: never; else each stream fails its operation past this many
  accel_status_t stream_error_status = ACCEL_ERROR_INTERNAL;
  double slow_copy_probability = 0.0;  // each copy waits slow_copy_delay_us on its stream first with this probability
  uint64_t slow_copy_delay_us = 1000;
  std::vector<std::string> devices;       // device ids the faults apply to; empty: every device
  std::vector<std::string> lost_devices;  // those of `devices` device_lost_after applies to; empty: all of them
  bool Any() const {
    return allocation_failure_probability > 0.0 || device_lost_after > 0 || stream_error_after > 0 ||
           slow_copy_probability > 0.0;
  }
};

// A whole simulated node. Plain value.
struct Profile {
  std::string name;
  std::string description;
  std::string node_id;  // the node domain's id; "" lets the core use the machine id
  std::vector<NumaNode> numa_nodes;
  std::vector<DeviceSpec> devices;
  std::vector<NicSpec> nics;
  std::vector<LinkSpec> links;                     // device pairs, a < b, each pair at most once
  std::vector<LinkSpec> nic_links;                 // a = device, b = NIC
  std::vector<accel_domain_t> domains_above_node;  // the node's chain, innermost (rack) first
  FaultSpec faults;
};

// Parses `text` as a profile; `source` names it in messages (a file path). Accepts a profile document or a whole
// `accel-info --json` document (its "topology" member). On failure returns nullopt and sets *error to
// "<source>: <field>: <reason>".
std::optional<Profile> ParseProfile(std::string_view text, const std::string& source, std::string* error);

// Parses an ACCEL_SIM_FAULTS value ("seed=7,alloc_fail=0.25,device_lost_after=100,stream_error_after=20,
// stream_error=internal,slow_copy=0.1,slow_copy_us=500,devices=gpu0+gpu3,lost_devices=gpu3") over `faults`. On failure
// returns false and sets *error.
bool ParseFaults(std::string_view text, FaultSpec* faults, std::string* error);

}  // namespace accel::sim

#endif  // ACCEL_BACKENDS_SIM_PROFILE_H_
