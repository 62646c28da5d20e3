// Topology: the PCI bus id (common/gpu_api.h's topology slot; the core completes the root, NUMA node and CPUs), xGMI
// (Infinity Fabric) links and cliques from hipExtGetLinkTypeAndHopCount, peer access from hipDeviceCanAccessPeer
// (backend.cc reads both at context_create; attributes.h maps them).
#include <cstring>

#include "hip_backend.h"

namespace accel::hip {

accel_status_t DeviceGetLink(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept {
  const accel_device_link_t link = LinkBetween(*Unwrap(device), *Unwrap(peer));
  WritePrefix(&link, out_link, out_link->struct_size, sizeof(link));
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetClique(accel_bk_device_t handle, accel_domain_t* out_domain) noexcept {
  const Device* device = Unwrap(handle);
  const std::string clique = CliqueOf(*device);
  if (clique.empty()) {
    return device->host->Fail(ACCEL_ERROR_NOT_FOUND, device->label + " has no xGMI peer among the backend's devices");
  }
  accel_domain_t domain = *out_domain;
  std::snprintf(domain.id, sizeof(domain.id), "%s", clique.c_str());
  WritePrefix(&domain, out_domain, out_domain->struct_size, sizeof(domain));
  return ACCEL_SUCCESS;
}

}  // namespace accel::hip
