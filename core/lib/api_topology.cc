// C entry points: where devices sit in the machine, the links between them
// and to NICs, and the domains above the node (docs/topology.md).
#include "api_common.h"
#include "identity.h"
#include "names.h"

#include <map>

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

accel_device_topology_t EmptyTopology() {
  accel_device_topology_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  t.struct_size = sizeof(t);
  t.numa_node = -1;
  t.nearest_nic = -1;
  return t;
}

template <size_t N>
void CopyString(char (&to)[N], const std::string& from) {
  const size_t n = std::min(from.size(), N - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

// What the backend says about the device, completed from the machine.
Expected<Placement> PlacementOf(const Device& dev) {
  accel_device_topology_t t = EmptyTopology();
  Status s = ACCEL_SLOT(*dev.backend, device_get_topology, dev.bk, &t);
  Placement p;
  if (s.ok()) {
    p.pci_bus_id = std::string(t.pci_bus_id, strnlen(t.pci_bus_id, sizeof(t.pci_bus_id)));
    p.pcie_root = std::string(t.pcie_root, strnlen(t.pcie_root, sizeof(t.pcie_root)));
    p.numa_node = t.numa_node;
    p.local_cpus = std::string(t.local_cpus, strnlen(t.local_cpus, sizeof(t.local_cpus)));
    p.local_cpu_count = t.local_cpu_count;
  } else if (s.code() == ACCEL_ERROR_UNIMPLEMENTED) {
    // The descriptor's own placement is the best there is.
    p.pci_bus_id = std::string(dev.caps.pci_bus_id, strnlen(dev.caps.pci_bus_id, sizeof(dev.caps.pci_bus_id)));
    p.numa_node = dev.caps.numa_node;
  } else {
    return OnDevice(dev, s);
  }
  InstanceOf(dev).machine().Complete(&p);
  return p;
}

accel_domain_t MakeDomain(accel_domain_level_t level, const std::string& id) {
  accel_domain_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
  d.struct_size = sizeof(d);
  d.level = level;
  CopyString(d.id, id);
  return d;
}

// A domain as a backend wrote it, with the header and the id's NUL made safe.
accel_domain_t Sanitised(accel_domain_t d, accel_domain_level_t level) {
  d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
  d.struct_size = sizeof(d);
  d.next = nullptr;
  d.level = level;
  d.id[sizeof(d.id) - 1] = '\0';
  return d;
}

// What the backend says of the device's domains: device_get_domains, else device_get_clique.
Expected<std::vector<accel_domain_t>> BackendDomainsOf(const Device& dev) {
  std::vector<accel_domain_t> out;
  if (dev.backend->api().device_get_domains != nullptr) {
    std::vector<accel_domain_t> got;
    Status s = dev.backend->Enumerate("device_get_domains", dev.backend->api().device_get_domains, dev.bk,
                                      kMaxDeviceDomains, MakeDomain(ACCEL_DOMAIN_LEVEL_NODE, ""), &got);
    if (!s.ok()) return OnDevice(dev, s);
    for (const accel_domain_t& d : got) {
      if (accel_domain_level_name(d.level) == nullptr || d.id[0] == '\0') continue;  // unknown level or no id
      out.push_back(Sanitised(d, d.level));
    }
    return out;
  }
  accel_domain_t clique = MakeDomain(ACCEL_DOMAIN_LEVEL_CLIQUE, "");
  Status s = ACCEL_SLOT(*dev.backend, device_get_clique, dev.bk, &clique);
  if (s.ok()) {
    out.push_back(Sanitised(clique, ACCEL_DOMAIN_LEVEL_CLIQUE));
  } else if (s.code() != ACCEL_ERROR_NOT_FOUND && s.code() != ACCEL_ERROR_UNIMPLEMENTED) {
    return OnDevice(dev, s);
  }
  return out;
}

// The device's domains, innermost first: the backend's levels, then the node (this machine) and the
// ACCEL_TOPOLOGY_DOMAINS levels for every level the backend did not give.
Expected<std::vector<accel_domain_t>> DomainsOf(const Device& dev) {
  auto own = BackendDomainsOf(dev);
  if (!own.ok()) return own.status();
  std::map<int, accel_domain_t> by_level;
  for (const accel_domain_t& d : own.value()) by_level.emplace(static_cast<int>(d.level), d);
  by_level.emplace(static_cast<int>(ACCEL_DOMAIN_LEVEL_NODE), MakeDomain(ACCEL_DOMAIN_LEVEL_NODE, MachineId()));
  for (const accel_domain_t& d : InstanceOf(dev).domains()) by_level.emplace(static_cast<int>(d.level), d);
  std::vector<accel_domain_t> out;
  for (const auto& [level, d] : by_level) out.push_back(d);
  return out;
}

accel_device_link_t EmptyLink() {
  accel_device_link_t l{};
  l.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  l.struct_size = sizeof(l);
  return l;
}

Status ResolveNic(const Instance& instance, uint32_t index, const Instance::NicEntry** out) {
  const auto& nics = instance.nics();
  if (index >= nics.size()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'nic_index' {} is out of range: the machine has {} NIC(s)", index,
                 nics.size());
  }
  *out = &nics[index];
  return Status::Ok();
}

// The path from a device at `placement` to one NIC. A backend's own NIC is reached only from that backend's devices
// (through its device_get_nic_link slot, else from the two placements); the machine's NICs are not neighbours of a
// backend that describes NICs of its own, nor of a simulated device the machine's PCI tree does not have.
Expected<accel_device_link_t> NicLinkOf(const Device& dev, const Placement& placement, const Instance::NicEntry& nic) {
  accel_device_link_t link = EmptyLink();
  const Instance& instance = InstanceOf(dev);
  if (nic.backend != nullptr && nic.backend != dev.backend.get()) {
    link.link_class = ACCEL_LINK_CLASS_NONE;
    return link;
  }
  // A simulated device is on this machine only where the machine's PCI tree has it (a fixture); a backend that
  // describes NICs of its own models a node of its own.
  const bool simulated_elsewhere =
      (dev.caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0 && !instance.machine().HasPci(placement.pci_bus_id);
  if (nic.backend == nullptr && (instance.HasOwnNics(dev.backend.get()) || simulated_elsewhere)) {
    link.link_class = ACCEL_LINK_CLASS_NONE;
    return link;
  }
  if (nic.backend != nullptr) {
    Status s = ACCEL_SLOT(*dev.backend, device_get_nic_link, dev.bk, nic.backend_index, &link);
    if (!s.ok() && s.code() != ACCEL_ERROR_UNIMPLEMENTED) return OnDevice(dev, s);
    link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
    link.struct_size = sizeof(link);
    link.next = nullptr;
    link.fabric[sizeof(link.fabric) - 1] = '\0';
    if (accel_link_class_name(link.link_class) == nullptr) link.link_class = ACCEL_LINK_CLASS_UNKNOWN;  // no class
    if (s.ok() && link.link_class != ACCEL_LINK_CLASS_UNKNOWN) return link;
  }
  link.link_class = instance.machine().Classify(placement, nic.nic.placement);
  return link;
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_device_get_topology(accel_device_t device, accel_device_topology_t* out_topology) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_TRY(CheckOutStruct(out_topology, ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY, "out_topology"));
    auto placement = PlacementOf(*dev);
    if (!placement.ok()) return placement.status();
    const Placement& p = placement.value();
    auto domains = DomainsOf(*dev);
    if (!domains.ok()) return domains.status();
    accel_device_topology_t t = EmptyTopology();
    CopyString(t.pci_bus_id, p.pci_bus_id);
    CopyString(t.pcie_root, p.pcie_root);
    CopyString(t.local_cpus, p.local_cpus);
    t.numa_node = p.numa_node;
    t.local_cpu_count = p.local_cpu_count;
    const auto& nics = InstanceOf(*dev).nics();
    accel_link_class_t best = ACCEL_LINK_CLASS_NONE;
    for (size_t i = 0; i < nics.size(); ++i) {
      auto link = NicLinkOf(*dev, p, nics[i]);
      if (!link.ok()) return link.status();
      const accel_link_class_t c = link.value().link_class;
      if (c != ACCEL_LINK_CLASS_UNKNOWN && c < best) {
        best = c;
        t.nearest_nic = static_cast<int32_t>(i);
      }
    }
    t.domain_count = static_cast<uint32_t>(domains.value().size());
    FillOutStruct(out_topology, t);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_link(accel_device_t device, accel_device_t peer,
                                               accel_device_link_t* out_link) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_RESOLVE(other, Device, peer);
    ACCEL_TRY(CheckOutStruct(out_link, ACCEL_STRUCTURE_TYPE_DEVICE_LINK, "out_link"));
    ACCEL_REQUIRE(dev->instance == other->instance, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'device' and 'peer' belong to different instances");
    accel_device_link_t link = EmptyLink();
    if (dev == other || dev->physical == other->physical) {
      link.link_class = ACCEL_LINK_CLASS_SELF;
      link.peer_access = 1;
      FillOutStruct(out_link, link);
      return Status::Ok();
    }
    if (dev->backend == other->backend) {
      Status s = ACCEL_SLOT(*dev->backend, device_get_link, dev->bk, other->bk, &link);
      if (!s.ok() && s.code() != ACCEL_ERROR_UNIMPLEMENTED) return OnDevice(*dev, s);
      link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
      link.struct_size = sizeof(link);
      link.next = nullptr;
      link.fabric[sizeof(link.fabric) - 1] = '\0';
      // A value this core does not name is no class: derived from the PCI tree, as for UNKNOWN.
      if (accel_link_class_name(link.link_class) == nullptr) link.link_class = ACCEL_LINK_CLASS_UNKNOWN;
      if (link.link_class != ACCEL_LINK_CLASS_UNKNOWN) {
        FillOutStruct(out_link, link);
        return Status::Ok();
      }
    }
    auto a = PlacementOf(*dev);
    if (!a.ok()) return a.status();
    auto b = PlacementOf(*other);
    if (!b.ok()) return b.status();
    if (dev->backend != other->backend) {
      // No API moves data between two backends' memory: copies go through the host.
      link.link_class = ACCEL_LINK_CLASS_HOST_STAGED;
      link.peer_access = 0;
    } else {
      link.link_class = InstanceOf(*dev).machine().Classify(a.value(), b.value());
      if (link.link_class == ACCEL_LINK_CLASS_UNKNOWN && link.peer_access == 0) {
        link.link_class = ACCEL_LINK_CLASS_HOST_STAGED;
      }
    }
    FillOutStruct(out_link, link);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_nic_count(accel_instance_t instance, uint32_t* out_count) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_NOT_NULL(out_count);
    *out_count = static_cast<uint32_t>(self->nics().size());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_nic(accel_instance_t instance, uint32_t index,
                                                accel_nic_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES, "out_properties"));
    const auto& nics = self->nics();
    ACCEL_REQUIRE(index < nics.size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: the machine has {} NIC(s)", index, nics.size());
    const Nic& nic = nics[index].nic;
    accel_nic_properties_t p{};
    CopyString(p.name, nic.name);
    CopyString(p.kind, nic.kind);
    CopyString(p.pci_bus_id, nic.placement.pci_bus_id);
    CopyString(p.pcie_root, nic.placement.pcie_root);
    p.numa_node = nic.placement.numa_node;
    FillOutStruct(out_properties, p);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_nic_link(accel_device_t device, uint32_t nic_index,
                                                   accel_device_link_t* out_link) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_TRY(CheckOutStruct(out_link, ACCEL_STRUCTURE_TYPE_DEVICE_LINK, "out_link"));
    const Instance::NicEntry* nic = nullptr;
    ACCEL_TRY(ResolveNic(InstanceOf(*dev), nic_index, &nic));
    auto p = PlacementOf(*dev);
    if (!p.ok()) return p.status();
    auto link = NicLinkOf(*dev, p.value(), *nic);
    if (!link.ok()) return link.status();
    FillOutStruct(out_link, link.value());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_domain(accel_device_t device, uint32_t index, accel_domain_t* out_domain) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_TRY(CheckOutStruct(out_domain, ACCEL_STRUCTURE_TYPE_DOMAIN, "out_domain"));
    auto domains = DomainsOf(*dev);
    if (!domains.ok()) return domains.status();
    ACCEL_REQUIRE(index < domains.value().size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: the device has {} domain level(s)", index, domains.value().size());
    FillOutStruct(out_domain, domains.value()[index]);
    return Status::Ok();
  });
}

ACCEL_API const char* accel_link_class_name(accel_link_class_t link_class) {
  return accel::info::LinkClassName(link_class);
}

ACCEL_API const char* accel_domain_level_name(accel_domain_level_t level) {
  return accel::info::DomainLevelName(level);
}

}  // extern "C"
