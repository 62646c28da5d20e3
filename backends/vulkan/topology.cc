// Where a Vulkan device sits in the machine (docs/topology.md): its PCI bus id
// from VK_EXT_pci_bus_info where the driver has it (the core finds the PCIe
// root, NUMA node and CPUs from it); lavapipe has none, and the core counts
// it as an access path of the host's CPU. Two Vulkan devices are two
// VkDevices without a peer path: copies between them go through host memory.
#include "symbols.h"

namespace accel::vulkan {

accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept {
  // The core passes a zeroed struct of its own size with numa_node and nearest_nic -1; what the backend leaves
  // empty the core fills from the machine's PCI tree where it can.
  const Device* device = Unwrap(handle);
  if (ACCEL_BACKEND_HAS_FIELD(out_topology, accel_device_topology_t, pci_bus_id)) {
    CopyString(out_topology->pci_bus_id, sizeof(out_topology->pci_bus_id), device->capabilities.pci_bus_id);
  }
  if (ACCEL_BACKEND_HAS_FIELD(out_topology, accel_device_topology_t, numa_node)) out_topology->numa_node = -1;
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetLink(accel_bk_device_t /*device*/, accel_bk_device_t /*peer*/,
                             accel_device_link_t* out_link) noexcept {
  // No device groups or external-memory sharing between the backend's VkDevices: a copy between two of them is
  // staged through the host (stream_copy_buffer does so), and neither reaches the other's memory.
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, link_class)) {
    out_link->link_class = ACCEL_LINK_CLASS_HOST_STAGED;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, link_count)) out_link->link_count = 0;
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, bandwidth)) out_link->bandwidth = 0;
  if (ACCEL_BACKEND_HAS_FIELD(out_link, accel_device_link_t, peer_access)) out_link->peer_access = 0;
  return ACCEL_SUCCESS;
}

}  // namespace accel::vulkan
