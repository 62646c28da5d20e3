// The machine around the devices: NUMA nodes, CPU sets, the PCI tree and
// the NICs, from hwloc, and the link class between any two places in it
// (docs/topology.md).
#ifndef ACCEL_CORE_MACHINE_TOPOLOGY_H_
#define ACCEL_CORE_MACHINE_TOPOLOGY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accel/accel.h"
#include "log.h"

namespace accel::core {

// Where something sits in the machine: the facts the link classes are
// derived from. Plain value.
struct Placement {
  std::string pci_bus_id;  // "" none (a CPU, or a device hwloc does not see)
  std::string pcie_root;   // "pci0000:00"; "" unknown
  int32_t numa_node = -1;  // -1 unknown or several
  std::string local_cpus;  // cpulist; "" unknown
  uint32_t local_cpu_count = 0;
};

// One NIC with a PCI address. Plain value.
struct Nic {
  std::string name;  // "eth0", "mlx5_0"
  std::string kind;  // "ethernet", "infiniband"
  Placement placement;
};

// One loaded hwloc topology with I/O objects, and what Accel reads from it.
// Immutable after Load; thread-safe.
class MachineTopology {
 public:
  // Loads this machine's topology, or the hwloc XML file `xml_path` (tests).
  // Never fails: without hwloc data the topology is empty and says so in the log.
  static std::unique_ptr<MachineTopology> Load(const Logger& log, const char* xml_path = nullptr);
  ~MachineTopology();
  MachineTopology(const MachineTopology&) = delete;
  MachineTopology& operator=(const MachineTopology&) = delete;

  const std::vector<Nic>& nics() const { return nics_; }

  // Completes `placement` from the PCI tree when its bus id is known to hwloc:
  // the root, the NUMA node and the CPUs, each only where still unknown.
  void Complete(Placement* placement) const;

  // Whether hwloc knows a PCI device at `bus_id` on this machine.
  bool HasPci(const std::string& bus_id) const;

  // The class of the path between two places (never SELF: the caller knows
  // when two places are one device).
  accel_link_class_t Classify(const Placement& a, const Placement& b) const;

 private:
  MachineTopology() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<Nic> nics_;
};

// Parses "rack=r12,block=b3" into domains, innermost level first. Entries
// with an unknown level or an empty id are ignored, each appended to
// `ignored` with the reason (entry, reason).
std::vector<accel_domain_t> ParseDomains(const std::string& text,
                                         std::vector<std::pair<std::string, std::string>>* ignored);

// The domains of the files `<dir>/*.json` (docs/topology.md, "Domains above the
// node"), read in name order, a later file's level replacing an earlier one's:
// each file is {"domains": {"rack": "r12", "block": "b3"}}. A file that does
// not parse, or an entry with an unknown level or a bad id, is logged with the
// file and the reason and skipped. A missing folder gives none.
std::vector<accel_domain_t> ReadDomainFiles(const std::string& dir, const Logger& log);

// The domains of one such file's `text` (`file` names it in the warnings),
// innermost level first, a repeated level keeping its last id. A text that
// does not parse gives none; it and each entry skipped append a warning.
std::vector<accel_domain_t> ParseDomainFile(std::string_view text, const std::string& file,
                                            std::vector<std::string>* warnings);

// `base` with each level of `over` replacing or added to it, innermost first.
std::vector<accel_domain_t> MergeDomains(const std::vector<accel_domain_t>& base,
                                         const std::vector<accel_domain_t>& over);

}  // namespace accel::core

#endif  // ACCEL_CORE_MACHINE_TOPOLOGY_H_
