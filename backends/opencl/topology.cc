// Where the device sits in the machine (docs/topology.md): the PCI address the
// device reports (cl_khr_pci_bus_info, or NVIDIA's and AMD's attribute
// queries); the core completes the PCIe root, NUMA node, CPUs and NICs from
// the machine's PCI tree. A CPU device (PoCL) has no PCI address and no NUMA
// node of its own. Links between two devices are the core's to derive from
// the PCI tree; OpenCL offers no peer access between devices, so none is
// declared, and there is no fabric clique (device_get_clique stays NULL).
#include "opencl_backend.h"

namespace accel::opencl {

accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept {
  // The core passes a zeroed struct of its own size with numa_node and nearest_nic -1.
  const Device* device = Unwrap(handle);
  if (ACCEL_BACKEND_HAS_FIELD(out_topology, accel_device_topology_t, pci_bus_id)) {
    static_assert(sizeof(out_topology->pci_bus_id) == sizeof(device->capabilities.pci_bus_id));
    std::memcpy(out_topology->pci_bus_id, device->capabilities.pci_bus_id, sizeof(out_topology->pci_bus_id));
  }
  if (ACCEL_BACKEND_HAS_FIELD(out_topology, accel_device_topology_t, numa_node)) out_topology->numa_node = -1;
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetLink(accel_bk_device_t /*device*/, accel_bk_device_t /*peer*/,
                             accel_device_link_t* out_link) noexcept {
  // Two different devices of this backend: no peer access; the class is the core's (UNKNOWN: from the PCI tree).
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, link_class))
    out_link->link_class = ACCEL_LINK_CLASS_UNKNOWN;
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, peer_access)) out_link->peer_access = 0;
  return ACCEL_SUCCESS;
}

}  // namespace accel::opencl
