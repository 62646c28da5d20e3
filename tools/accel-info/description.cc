// The topology description of the node (docs/topology.md, "The topology
// description"): the "topology" member of `accel-info --json`, in the format
// the sim backend reads as a profile, so that a node's description, used as
// ACCEL_SIM_PROFILE, reproduces its devices, links and domains.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "names.h"
#include "output.h"

namespace accel::info {
namespace {

using json = nlohmann::ordered_json;

bool IsZero(const uint8_t (&uuid)[ACCEL_UUID_SIZE]) {
  return std::all_of(std::begin(uuid), std::end(uuid), [](uint8_t b) { return b == 0; });
}

// A device's id in the description: its physical device's stable id, which is unique and at most 63 characters.
std::string DeviceId(const PhysicalDevice& device) { return FixedString(device.props.stable_id); }

json DeviceJson(const PhysicalDevice& device, const TopoDevice* topo) {
  const accel_device_capabilities_t& c = device.access_paths.front().caps;
  const bool simulated = (c.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0;
  json d = {
      {"id", DeviceId(device)},
      {"kind", KindName(c.kind)},
      {"name", FixedString(c.name)},
      {"vendor", FixedString(c.vendor).empty() ? "unknown" : FixedString(c.vendor)},
      {"sku", FixedString(c.sku).empty() ? "unknown" : FixedString(c.sku)},
  };
  if (!FixedString(c.architecture).empty()) d["architecture"] = FixedString(c.architecture);
  if (!FixedString(c.driver_version).empty()) d["driver_version"] = FixedString(c.driver_version);
  if (c.vendor_id != 0 && c.vendor_id <= 0xFFFF) d["vendor_id"] = c.vendor_id;
  if (c.device_id != 0 && c.device_id <= 0xFFFF) d["device_id"] = c.device_id;
  if (!IsZero(c.uuid) && (c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0) d["uuid"] = UuidHex(c.uuid);
  if (!FixedString(c.pci_bus_id).empty()) d["pci_bus_id"] = FixedString(c.pci_bus_id);
  if (topo != nullptr && !FixedString(topo->topology.pcie_root).empty()) {
    d["pcie_root"] = FixedString(topo->topology.pcie_root);
  }
  const int32_t numa = topo != nullptr ? topo->topology.numa_node : device.props.numa_node;
  if (numa >= 0) d["numa_node"] = numa;
  // Counted once, as the physical device has it (for a CPU, the host's memory).
  d["memory"] = device.props.memory_total;
  if (c.max_allocation != 0 && c.max_allocation < device.props.memory_total) d["max_allocation"] = c.max_allocation;
  d["compute_units"] = std::max<uint32_t>(1, device.props.compute_units);
  if (c.clock_mhz != 0) d["clock_mhz"] = c.clock_mhz;
  d["local_memory_size"] = c.local_memory_size;
  d["max_work_group_size"] = std::clamp<uint32_t>(c.max_work_group_size, 1, 65536);
  if (c.subgroup_size != 0) d["subgroup_size"] = c.subgroup_size;
  d["numeric_formats"] = FlagNames(NumericFormatNames(), c.numeric_formats);
  // What the part executes: for a simulated device, the modeled part's formats.
  d["kernel_formats"] = FlagNames(KernelFormatNames(), simulated ? c.modeled_kernel_formats : c.kernel_formats);
  // Event timing is every simulated device's own; the rest is the part's.
  d["features"] = FlagNames(DeviceFeatureNames(), c.features & ~ACCEL_DEVICE_FEATURE_EVENT_TIMING);
  if (topo != nullptr) {
    for (const accel_domain_t& dom : topo->domains) {
      if (dom.level == ACCEL_DOMAIN_LEVEL_CLIQUE) d["clique"] = FixedString(dom.id);
    }
  }
  return d;
}

json LinkJson(const accel_device_link_t& link) {
  json l = {{"class", ClassName(link.link_class)}};
  if (link.link_class == ACCEL_LINK_CLASS_FABRIC) {
    if (!FixedString(link.fabric).empty()) l["fabric"] = FixedString(link.fabric);
    l["link_count"] = link.link_count;
  }
  if (link.bandwidth != 0) l["bandwidth"] = link.bandwidth;
  l["peer_access"] = link.peer_access != 0;
  return l;
}

}  // namespace

nlohmann::ordered_json TopologyDescription(const Report& report, const TopoReport& topo) {
  // Each physical device is described once, placed as its first visible access path.
  std::vector<const PhysicalDevice*> devices;
  std::vector<int> topo_index;
  for (const PhysicalDevice& p : report.physical_devices) {
    if (p.access_paths.empty()) continue;
    const std::string first = FixedString(p.access_paths.front().caps.stable_id);
    int index = -1;
    for (size_t i = 0; i < topo.devices.size(); ++i) {
      if (topo.devices[i].stable_id == first) index = static_cast<int>(i);
    }
    devices.push_back(&p);
    topo_index.push_back(index);
  }
  auto topo_of = [&](size_t i) { return topo_index[i] >= 0 ? &topo.devices[topo_index[i]] : nullptr; };

  json doc = {{"format_version", "1.0"}};
  // The node and the domains above it: those of the first device that has them.
  json node = json::object();
  json domains = json::array();
  for (size_t i = 0; i < devices.size() && node.empty(); ++i) {
    const TopoDevice* t = topo_of(i);
    if (t == nullptr) continue;
    std::vector<const accel_domain_t*> above;
    for (const accel_domain_t& d : t->domains) {
      if (d.level == ACCEL_DOMAIN_LEVEL_NODE) node["id"] = FixedString(d.id);
      if (d.level > ACCEL_DOMAIN_LEVEL_NODE) above.push_back(&d);
    }
    if (!above.empty()) node["domain"] = FixedString(above.front()->id);
    for (size_t k = 0; k < above.size(); ++k) {
      json d = {{"level", LevelName(above[k]->level)}, {"id", FixedString(above[k]->id)}};
      if (k + 1 < above.size()) d["parent"] = FixedString(above[k + 1]->id);
      domains.push_back(std::move(d));
    }
  }
  if (!node.empty()) doc["node"] = node;

  // NUMA nodes: every node a device or NIC sits on, with the CPUs the devices report for it.
  std::map<int32_t, std::string> numa;
  for (size_t i = 0; i < devices.size(); ++i) {
    const TopoDevice* t = topo_of(i);
    if (t != nullptr && t->topology.numa_node >= 0) {
      std::string& cpus = numa[t->topology.numa_node];
      if (cpus.empty()) cpus = FixedString(t->topology.local_cpus);
    }
  }

  // NICs that some described device reaches (the machine's NICs are not a simulated node's).
  std::vector<size_t> nics;
  for (size_t k = 0; k < topo.nics.size(); ++k) {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (topo_index[i] >= 0 && topo.nic_links[topo_index[i]][k].link_class != ACCEL_LINK_CLASS_NONE) {
        nics.push_back(k);
        break;
      }
    }
  }
  json nic_array = json::array();
  std::set<std::string> nic_names;
  std::map<size_t, std::string> nic_name_of;
  for (size_t k : nics) {
    const accel_nic_properties_t& n = topo.nics[k];
    std::string name = FixedString(n.name);
    for (int suffix = 2; !nic_names.insert(name).second; ++suffix)
      name = fmt::format("{}#{}", FixedString(n.name), suffix);
    nic_name_of[k] = name;
    json j = {{"name", name}, {"kind", FixedString(n.kind)}};
    if (!FixedString(n.pci_bus_id).empty()) j["pci_bus_id"] = FixedString(n.pci_bus_id);
    if (!FixedString(n.pcie_root).empty()) j["pcie_root"] = FixedString(n.pcie_root);
    if (n.numa_node >= 0) {
      j["numa_node"] = n.numa_node;
      numa.emplace(n.numa_node, "");
    }
    nic_array.push_back(std::move(j));
  }
  json numa_array = json::array();
  for (const auto& [id, cpus] : numa) numa_array.push_back({{"id", id}, {"cpus", cpus}});
  doc["numa_nodes"] = std::move(numa_array);

  json device_array = json::array();
  for (size_t i = 0; i < devices.size(); ++i) device_array.push_back(DeviceJson(*devices[i], topo_of(i)));
  doc["devices"] = std::move(device_array);
  doc["nics"] = std::move(nic_array);

  json links = json::array();
  for (size_t a = 0; a < devices.size(); ++a) {
    for (size_t b = a + 1; b < devices.size(); ++b) {
      if (topo_index[a] < 0 || topo_index[b] < 0) continue;
      const accel_device_link_t& l = topo.links[topo_index[a]][topo_index[b]];
      if (l.link_class == ACCEL_LINK_CLASS_UNKNOWN || l.link_class == ACCEL_LINK_CLASS_SELF) continue;
      json j = {{"devices", json::array({DeviceId(*devices[a]), DeviceId(*devices[b])})}};
      j.update(LinkJson(l));
      links.push_back(std::move(j));
    }
  }
  doc["links"] = std::move(links);

  json nic_links = json::array();
  for (size_t i = 0; i < devices.size(); ++i) {
    if (topo_index[i] < 0) continue;
    for (size_t k : nics) {
      const accel_device_link_t& l = topo.nic_links[topo_index[i]][k];
      if (l.link_class == ACCEL_LINK_CLASS_UNKNOWN || l.link_class == ACCEL_LINK_CLASS_FABRIC) continue;
      nic_links.push_back(
          {{"device", DeviceId(*devices[i])}, {"nic", nic_name_of[k]}, {"class", ClassName(l.link_class)}});
    }
  }
  doc["nic_links"] = std::move(nic_links);
  if (!domains.empty()) doc["domains"] = std::move(domains);
  return doc;
}

}  // namespace accel::info
