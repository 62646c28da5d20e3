// Where the host device sits: the CPUs the process may use (hwloc's root cpuset)
// and the NUMA node, and the topology slots. The host backend has one device,
// so it has no links of its own (device_get_link stays NULL) and no fabric clique.
#include <hwloc.h>

#include <cstring>
#include <string>
#include <vector>

#include "device.h"

namespace accel::host {

std::string FitCpuList(const std::string& list, size_t capacity) {
  if (capacity == 0) return "";
  if (list.size() < capacity) return list;
  const size_t comma = list.rfind(',', capacity - 1);
  return comma == std::string::npos ? std::string() : list.substr(0, comma);
}

Placement DescribePlacement(const Topology& topology, int32_t numa_node, const HostServices& host) {
  Placement placement;
  placement.numa_node = numa_node;
  const hwloc_obj_t root = hwloc_get_root_obj(topology.get());
  if (root == nullptr || root->cpuset == nullptr) return placement;
  // The root's cpuset holds the PUs this process may run on (a cgroup or affinity mask shrinks it).
  const int length = hwloc_bitmap_list_snprintf(nullptr, 0, root->cpuset);
  if (length < 0) return placement;
  std::vector<char> text(static_cast<size_t>(length) + 1);
  hwloc_bitmap_list_snprintf(text.data(), text.size(), root->cpuset);
  const std::string full(text.data());
  placement.local_cpus = FitCpuList(full, ACCEL_CPU_LIST_SIZE);
  if (placement.local_cpus.size() == full.size()) {
    const int weight = hwloc_bitmap_weight(root->cpuset);
    placement.local_cpu_count = weight > 0 ? static_cast<uint32_t>(weight) : 0;
    return placement;
  }
  // Too long for the field: whole entries only, and the count of those.
  hwloc_bitmap_t kept = hwloc_bitmap_alloc();
  if (kept != nullptr && hwloc_bitmap_list_sscanf(kept, placement.local_cpus.c_str()) == 0) {
    const int weight = hwloc_bitmap_weight(kept);
    placement.local_cpu_count = weight > 0 ? static_cast<uint32_t>(weight) : 0;
  } else {
    placement.local_cpus.clear();
  }
  if (kept != nullptr) hwloc_bitmap_free(kept);
  host.Log(ACCEL_LOG_LEVEL_WARN, "the CPU list '" + full + "' is longer than " +
                                     std::to_string(ACCEL_CPU_LIST_SIZE - 1) + " characters; reporting '" +
                                     placement.local_cpus + "'");
  return placement;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept {
  const Device* device = Unwrap(handle);
  // What the core set (nearest_nic, domain_count, pcie_root) stays; the CPU has no PCI address.
  auto topology = ReadPrefix<accel_device_topology_t>(out_topology, out_topology->struct_size);
  std::memset(topology.pci_bus_id, 0, sizeof(topology.pci_bus_id));
  topology.numa_node = device->placement.numa_node;
  topology.local_cpu_count = device->placement.local_cpu_count;
  const std::string& cpus = device->placement.local_cpus;
  std::memset(topology.local_cpus, 0, sizeof(topology.local_cpus));
  std::memcpy(topology.local_cpus, cpus.data(), cpus.size() < sizeof(topology.local_cpus) ? cpus.size() : 0);
  WritePrefix(topology, out_topology);
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetClique(accel_bk_device_t handle, accel_domain_t* /*out_domain*/) noexcept {
  const Device* device = Unwrap(handle);
  return device->host->Fail(ACCEL_ERROR_NOT_FOUND, "the host CPU is joined to no device fabric");
}

}  // namespace accel::host
