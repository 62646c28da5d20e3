// Where simulated devices sit and how they connect: the profile's placement,
// links, NICs and domains. A pair the profile does not link is derived from
// the placements (one PCIe switch: PIX; one root: PHB; one NUMA node: NODE;
// else SYS), without peer access; with no placement at all the class stays
// UNKNOWN and the core derives it from the machine's PCI tree (tests load
// hwloc XML fixtures that way).
#include <algorithm>
#include <cstring>
#include <string>

#include "sim_backend.h"

namespace accel::sim {
namespace {

template <size_t N>
void Copy(char (&to)[N], const std::string& from) {
  const size_t n = std::min(from.size(), N - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

accel_link_class_t Derive(const std::string& switch_a, const std::string& switch_b, const std::string& root_a,
                          const std::string& root_b, int32_t numa_a, int32_t numa_b) {
  if (!switch_a.empty() && switch_a == switch_b) return ACCEL_LINK_CLASS_PIX;
  if (!root_a.empty() && root_a == root_b) return ACCEL_LINK_CLASS_PHB;
  if (numa_a >= 0 && numa_b >= 0) return numa_a == numa_b ? ACCEL_LINK_CLASS_NODE : ACCEL_LINK_CLASS_SYS;
  return ACCEL_LINK_CLASS_UNKNOWN;
}

void FillLink(const LinkSpec& spec, accel_device_link_t* out) {
  auto link = host::ReadPrefix<accel_device_link_t>(out, out->struct_size);
  link.link_class = spec.link_class;
  link.link_count = spec.link_count;
  link.bandwidth = spec.bandwidth;
  link.peer_access = spec.peer_access ? 1 : 0;
  std::memset(link.fabric, 0, sizeof(link.fabric));
  Copy(link.fabric, spec.fabric);
  host::WritePrefix(link, out);
}

}  // namespace

LinkSpec Context::Link(size_t a, size_t b) const {
  const size_t lo = std::min(a, b);
  const size_t hi = std::max(a, b);
  for (const LinkSpec& l : profile_.links) {
    if (l.a == lo && l.b == hi) return l;
  }
  const DeviceSpec& x = profile_.devices[a];
  const DeviceSpec& y = profile_.devices[b];
  LinkSpec derived;
  derived.a = lo;
  derived.b = hi;
  derived.link_class =
      Derive(x.pcie_switch, y.pcie_switch, x.pcie_root, y.pcie_root, x.caps.numa_node, y.caps.numa_node);
  return derived;
}

LinkSpec Context::NicLink(size_t device, size_t nic) const {
  for (const LinkSpec& l : profile_.nic_links) {
    if (l.a == device && l.b == nic) return l;
  }
  const DeviceSpec& d = profile_.devices[device];
  const NicSpec& n = profile_.nics[nic];
  LinkSpec derived;
  derived.a = device;
  derived.b = nic;
  derived.link_class = Derive(d.pcie_switch, n.pcie_switch, d.pcie_root, n.pcie_root, d.caps.numa_node, n.numa_node);
  return derived;
}

accel_status_t DeviceGetTopology(accel_bk_device_t handle, accel_device_topology_t* out_topology) noexcept {
  const SimDevice* device = Sim(handle);
  const DeviceSpec& spec = device->spec();
  auto t = host::ReadPrefix<accel_device_topology_t>(out_topology, out_topology->struct_size);
  Copy(t.pci_bus_id, spec.caps.pci_bus_id);
  Copy(t.pcie_root, spec.pcie_root);
  t.numa_node = spec.caps.numa_node;
  Copy(t.local_cpus, device->engine.placement.local_cpus);
  t.local_cpu_count = device->engine.placement.local_cpu_count;
  host::WritePrefix(t, out_topology);
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetLink(accel_bk_device_t handle, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept {
  const SimDevice* a = Sim(handle);
  const SimDevice* b = Sim(peer);
  FillLink(a->context()->Link(a->index(), b->index()), out_link);
  return ACCEL_SUCCESS;
}

accel_status_t ContextGetNics(accel_bk_context_t handle, uint32_t* inout_count,
                              accel_nic_properties_t* out_nics) noexcept {
  const Context* context = Unwrap(handle);
  const auto& nics = context->profile().nics;
  const auto count = static_cast<uint32_t>(nics.size());
  if (out_nics == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  const uint32_t n = std::min(*inout_count, count);
  for (uint32_t i = 0; i < n; ++i) {
    auto p = host::ReadPrefix<accel_nic_properties_t>(&out_nics[i], out_nics[i].struct_size);
    Copy(p.name, nics[i].name);
    Copy(p.kind, nics[i].kind);
    Copy(p.pci_bus_id, nics[i].pci_bus_id);
    Copy(p.pcie_root, nics[i].pcie_root);
    p.numa_node = nics[i].numa_node;
    host::WritePrefix(p, &out_nics[i]);
  }
  *inout_count = n;
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetNicLink(accel_bk_device_t handle, uint32_t nic_index, accel_device_link_t* out_link) noexcept {
  const SimDevice* device = Sim(handle);
  const Context* context = device->context();
  if (nic_index >= context->profile().nics.size()) {
    return context->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "NIC " + std::to_string(nic_index) +
                                                                  " is not one of the profile's " +
                                                                  std::to_string(context->profile().nics.size()));
  }
  FillLink(context->NicLink(device->index(), nic_index), out_link);
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetDomains(accel_bk_device_t handle, uint32_t* inout_count, accel_domain_t* out_domains) noexcept {
  const SimDevice* device = Sim(handle);
  const Profile& profile = device->context()->profile();
  std::vector<accel_domain_t> levels;
  auto add = [&](accel_domain_level_t level, const std::string& id) {
    accel_domain_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
    d.struct_size = sizeof(d);
    d.level = level;
    Copy(d.id, id);
    levels.push_back(d);
  };
  if (!device->spec().clique.empty()) add(ACCEL_DOMAIN_LEVEL_CLIQUE, device->spec().clique);
  if (!profile.node_id.empty()) add(ACCEL_DOMAIN_LEVEL_NODE, profile.node_id);
  for (const accel_domain_t& d : profile.domains_above_node) levels.push_back(d);
  const auto count = static_cast<uint32_t>(levels.size());
  if (out_domains == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  const uint32_t n = std::min(*inout_count, count);
  for (uint32_t i = 0; i < n; ++i) {
    host::WritePrefix(levels[i], &out_domains[i]);
  }
  *inout_count = n;
  return ACCEL_SUCCESS;
}

}  // namespace accel::sim
