// Where the device sits in the machine (docs/topology.md). Host memory has no
// PCI address and no NUMA node of its own; the core completes the rest (NICs,
// domains). One device, so device_get_link stays NULL, and there is no fabric
// clique (device_get_clique NULL).
#include "symbols.h"

namespace accel::template_backend {

accel_status_t DeviceGetTopology(accel_bk_device_t /*device*/, accel_device_topology_t* out_topology) noexcept {
  // The core passes a zeroed struct of its own size with numa_node and nearest_nic -1; what the backend leaves
  // empty the core fills from the machine's PCI tree where it can. A PCI device writes pci_bus_id here.
  if (ACCEL_TEMPLATE_HAS_FIELD(out_topology, accel_device_topology_t, numa_node)) out_topology->numa_node = -1;
  return ACCEL_SUCCESS;
}

}  // namespace accel::template_backend
