// Topology: the PCI bus id (common/gpu_api.h's topology slot; the core completes the root, NUMA node and CPUs) and peer
// access from zeDeviceCanAccessPeer both ways (backend.cc reads it at context_create). Xe Link fabric links (the fabric
// vertex and edge queries, an experimental extension) are not read: links are left to the core's PCI tree.
#include "level_zero_backend.h"

namespace accel::level_zero {

accel_status_t DeviceGetLink(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept {
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  link.link_class = ACCEL_LINK_CLASS_UNKNOWN;  // the core derives the PCI class
  link.peer_access = PeerAccess(*Unwrap(device), *Unwrap(peer)) ? 1 : 0;
  WritePrefix(&link, out_link, out_link->struct_size, sizeof(link));
  return ACCEL_SUCCESS;
}

}  // namespace accel::level_zero
