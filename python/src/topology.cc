// Topology and the loader report for Python (docs/topology.md,
// docs/loader.md): Device.topology, Device.link(peer), Device.nic_link(i),
// accel.nics() and accel.loader_report(), each a plain dict.
#include <pybind11/stl.h>

#include "common.h"
#include "names.h"

namespace accelpy {

namespace {

std::string link_class_name(accel_link_class_t c) {
  const char* n = accel_link_class_name(c);
  return n != nullptr ? n : "UNKNOWN";
}

py::dict link_dict(const accel_device_link_t& link) {
  py::dict d;
  d["link_class"] = link_class_name(link.link_class);
  d["link_count"] = link.link_count;
  d["bandwidth"] = link.bandwidth;
  d["peer_access"] = link.peer_access != 0;
  d["fabric"] = accel::info::FixedString(link.fabric);
  return d;
}

accel_device_link_t empty_link() {
  auto link = accel::detail::sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
  return link;
}

py::dict topology(const Device& device) {
  auto t = accel::detail::sized<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
  check(accel_device_get_topology(device.handle, &t));
  py::dict d;
  d["pci_bus_id"] = accel::info::FixedString(t.pci_bus_id);
  d["pcie_root"] = accel::info::FixedString(t.pcie_root);
  d["numa_node"] = t.numa_node;
  d["local_cpus"] = accel::info::FixedString(t.local_cpus);
  d["local_cpu_count"] = t.local_cpu_count;
  d["nearest_nic"] = t.nearest_nic < 0 ? py::object(py::none()) : py::object(py::int_(t.nearest_nic));
  py::list domains;
  for (uint32_t i = 0; i < t.domain_count; ++i) {
    auto dom = accel::detail::sized<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN);
    check(accel_device_get_domain(device.handle, i, &dom));
    const char* level = accel_domain_level_name(dom.level);
    py::dict entry;
    entry["level"] = level != nullptr ? level : "unknown";
    entry["id"] = accel::info::FixedString(dom.id);
    domains.append(entry);
  }
  d["domains"] = domains;
  return d;
}

py::list nics() {
  auto inst = instance();
  uint32_t count = 0;
  check(accel_instance_get_nic_count(inst->handle, &count));
  py::list out;
  for (uint32_t i = 0; i < count; ++i) {
    auto nic = accel::detail::sized<accel_nic_properties_t>(ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES);
    check(accel_instance_get_nic(inst->handle, i, &nic));
    py::dict d;
    d["index"] = i;
    d["name"] = accel::info::FixedString(nic.name);
    d["kind"] = accel::info::FixedString(nic.kind);
    d["pci_bus_id"] = accel::info::FixedString(nic.pci_bus_id);
    d["pcie_root"] = accel::info::FixedString(nic.pcie_root);
    d["numa_node"] = nic.numa_node;
    out.append(d);
  }
  return out;
}

py::list loader_report() {
  auto inst = instance();
  uint32_t count = 0;
  check(accel_instance_get_loader_entry_count(inst->handle, &count));
  auto version = [](uint32_t v) -> py::object {
    if (v == 0) return py::none();
    return py::make_tuple(v >> 22, (v >> 12) & 0x3ff, v & 0xfff);
  };
  py::list out;
  for (uint32_t i = 0; i < count; ++i) {
    auto e = accel::detail::sized<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
    check(accel_instance_get_loader_entry(inst->handle, i, &e));
    py::dict d;
    d["backend"] = std::string(e.backend_name != nullptr ? e.backend_name : "");
    d["manifest"] = std::string(e.manifest_path != nullptr ? e.manifest_path : "");
    d["library"] = std::string(e.library_path != nullptr ? e.library_path : "");
    d["state"] = accel::info::LoaderStateName(e.state);
    d["status"] = static_cast<int>(e.status);
    d["status_name"] = accel_status_name(e.status);
    d["reason"] = std::string(e.reason != nullptr ? e.reason : "");
    d["negotiated_abi_version"] = version(e.negotiated_abi_version);
    d["backend_abi_version"] = version(e.backend_abi_version);
    d["device_count"] = e.device_count;
    out.append(d);
  }
  return out;
}

py::list loader_warnings() {
  auto inst = instance();
  uint32_t count = 0;
  check(accel_instance_get_loader_warning_count(inst->handle, &count));
  py::list out;
  for (uint32_t i = 0; i < count; ++i) {
    auto w = accel::detail::sized<accel_loader_warning_t>(ACCEL_STRUCTURE_TYPE_LOADER_WARNING);
    check(accel_instance_get_loader_warning(inst->handle, i, &w));
    py::dict d;
    d["setting"] = std::string(w.setting != nullptr ? w.setting : "");
    d["value"] = std::string(w.value != nullptr ? w.value : "");
    d["item"] = std::string(w.item != nullptr ? w.item : "");
    d["message"] = std::string(w.message != nullptr ? w.message : "");
    out.append(d);
  }
  return out;
}

}  // namespace

void init_topology(py::module_& m, py::class_<Device>& device) {
  device.def_property_readonly("topology", &topology)
      .def(
          "link",
          [](const Device& d, py::object peer) {
            Device p = resolve_device(peer);
            auto link = empty_link();
            check(accel_device_get_link(d.handle, p.handle, &link));
            return link_dict(link);
          },
          py::arg("peer"))
      .def(
          "nic_link",
          [](const Device& d, uint32_t nic) {
            auto link = empty_link();
            check(accel_device_get_nic_link(d.handle, nic, &link));
            return link_dict(link);
          },
          py::arg("nic"))
      .def_property_readonly("dlpack_device", [](const Device& d) {
        auto [type, id] = dlpack_device_of(d);
        return py::make_tuple(type, id);
      });
  m.def("nics", &nics, "The machine's NICs (index, name, kind, pci_bus_id, pcie_root, numa_node).");
  m.def("loader_report", &loader_report,
        "Each backend the loader considered: whether it loaded, was skipped or failed, and why.");
  m.def("loader_warnings", &loader_warnings,
        "The overrides (ACCEL_BACKENDS, ACCEL_VISIBLE_DEVICES, ...) that named nothing or could not be parsed.");
}

}  // namespace accelpy
