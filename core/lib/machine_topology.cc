// The machine topology from hwloc: NICs, PCI placement and link classes.
#include "machine_topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

namespace accel::core {

struct MachineTopology::Impl {
  hwloc_topology_t topology = nullptr;
  ~Impl() {
    if (topology != nullptr) hwloc_topology_destroy(topology);
  }
};

namespace {

std::string BusId(hwloc_obj_t pci) {
  char text[ACCEL_PCI_BUS_ID_SIZE];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return text;
}

bool IsHostBridge(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

bool IsPciBridge(hwloc_obj_t obj) { return obj->type == HWLOC_OBJ_BRIDGE && !IsHostBridge(obj); }

bool IsIo(hwloc_obj_t obj) {
  return obj->type == HWLOC_OBJ_BRIDGE || obj->type == HWLOC_OBJ_PCI_DEVICE || obj->type == HWLOC_OBJ_OS_DEVICE;
}

std::string CpuList(hwloc_const_bitmap_t set) {
  if (set == nullptr || hwloc_bitmap_iszero(set)) return "";
  int n = hwloc_bitmap_list_snprintf(nullptr, 0, set);
  if (n <= 0) return "";
  std::string text(static_cast<size_t>(n) + 1, '\0');
  hwloc_bitmap_list_snprintf(text.data(), text.size(), set);
  text.resize(static_cast<size_t>(n));
  return text;
}

int32_t SingleNode(hwloc_const_bitmap_t nodeset) {
  if (nodeset == nullptr || hwloc_bitmap_weight(nodeset) != 1) return -1;
  return hwloc_bitmap_first(nodeset);
}

// Fills the placement of a PCI object: its bus id, root complex, NUMA node and CPUs.
void PlaceFromPci(hwloc_topology_t topology, hwloc_obj_t pci, Placement* p, bool overwrite) {
  if (p->pci_bus_id.empty()) p->pci_bus_id = BusId(pci);
  for (hwloc_obj_t up = pci->parent; up != nullptr && (overwrite || p->pcie_root.empty()); up = up->parent) {
    if (IsHostBridge(up)) {
      char root[ACCEL_PCI_BUS_ID_SIZE];
      std::snprintf(root, sizeof(root), "pci%04x:%02x", up->attr->bridge.downstream.pci.domain,
                    up->attr->bridge.downstream.pci.secondary_bus);
      p->pcie_root = root;
      break;
    }
  }
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (anchor == nullptr) return;
  if (overwrite || p->numa_node < 0) p->numa_node = SingleNode(anchor->nodeset);
  if (overwrite || p->local_cpus.empty()) {
    p->local_cpus = CpuList(anchor->cpuset);
    p->local_cpu_count = static_cast<uint32_t>(std::max(0, hwloc_bitmap_weight(anchor->cpuset)));
  }
}

hwloc_obj_t FindPci(hwloc_topology_t topology, const std::string& bus_id) {
  if (topology == nullptr || bus_id.empty()) return nullptr;
  return hwloc_get_pcidev_by_busidstring(topology, bus_id.c_str());
}

// The nearest object that is an ancestor of both (or one of them). hwloc_get_common_ancestor_obj compares depths,
// which I/O objects do not have (theirs are virtual and negative), so walk the parent chains instead.
hwloc_obj_t CommonAncestor(hwloc_obj_t a, hwloc_obj_t b) {
  for (hwloc_obj_t x = a; x != nullptr; x = x->parent) {
    for (hwloc_obj_t y = b; y != nullptr; y = y->parent) {
      if (x == y) return x;
    }
  }
  return nullptr;
}

// Bridges strictly between `obj` and its ancestor `top`.
int BridgesBetween(hwloc_obj_t obj, hwloc_obj_t top) {
  int n = 0;
  for (hwloc_obj_t up = obj->parent; up != nullptr && up != top; up = up->parent) {
    if (up->type == HWLOC_OBJ_BRIDGE) ++n;
  }
  return n;
}

// NODE when two CPU lists share a CPU, SYS when they do not, UNKNOWN without both.
accel_link_class_t ClassifyByCpus(const Placement& a, const Placement& b) {
  if (a.numa_node >= 0 && b.numa_node >= 0)
    return a.numa_node == b.numa_node ? ACCEL_LINK_CLASS_NODE : ACCEL_LINK_CLASS_SYS;
  if (a.local_cpus.empty() || b.local_cpus.empty()) return ACCEL_LINK_CLASS_UNKNOWN;
  hwloc_bitmap_t x = hwloc_bitmap_alloc();
  hwloc_bitmap_t y = hwloc_bitmap_alloc();
  accel_link_class_t result = ACCEL_LINK_CLASS_UNKNOWN;
  if (x != nullptr && y != nullptr && hwloc_bitmap_list_sscanf(x, a.local_cpus.c_str()) == 0 &&
      hwloc_bitmap_list_sscanf(y, b.local_cpus.c_str()) == 0) {
    result = hwloc_bitmap_intersects(x, y) ? ACCEL_LINK_CLASS_NODE : ACCEL_LINK_CLASS_SYS;
  }
  hwloc_bitmap_free(x);
  hwloc_bitmap_free(y);
  return result;
}

}  // namespace

std::unique_ptr<MachineTopology> MachineTopology::Load(const Logger& log, const char* xml_path) {
  std::unique_ptr<MachineTopology> machine(new MachineTopology());
  machine->impl_ = std::make_unique<Impl>();
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) {
    log.Log(ACCEL_LOG_LEVEL_WARN, "topology: hwloc_topology_init failed; no PCI or NIC placement");
    return machine;
  }
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // PCI placement comes from the Linux sysfs reader. The libpciaccess
  // component adds nothing Accel uses and leaks when unloaded; the GPU
  // components would open vendor runtimes in every process that asks.
  for (const char* component : {"pci", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero"}) {
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
  }
  if (xml_path != nullptr && hwloc_topology_set_xml(t, xml_path) != 0) {
    log.Log(ACCEL_LOG_LEVEL_WARN, "topology: cannot read hwloc XML '{}'", xml_path);
  }
  if (hwloc_topology_load(t) != 0) {
    log.Log(ACCEL_LOG_LEVEL_WARN, "topology: hwloc_topology_load failed; no PCI or NIC placement");
    hwloc_topology_destroy(t);
    return machine;
  }
  machine->impl_->topology = t;

  // NICs: one per PCI function; an RDMA device's name wins over its netdev's.
  std::map<std::string, Nic> by_bus;
  for (hwloc_obj_t os = hwloc_get_next_osdev(t, nullptr); os != nullptr; os = hwloc_get_next_osdev(t, os)) {
    const auto type = os->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    hwloc_obj_t pci = os->parent;
    while (pci != nullptr && pci->type != HWLOC_OBJ_PCI_DEVICE) pci = pci->parent;
    if (pci == nullptr || os->name == nullptr) continue;
    Nic nic;
    nic.name = os->name;
    nic.kind = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? "rdma" : "ethernet";
    PlaceFromPci(t, pci, &nic.placement, true);
    auto [it, inserted] = by_bus.emplace(nic.placement.pci_bus_id, nic);
    if (!inserted && type == HWLOC_OBJ_OSDEV_OPENFABRICS) it->second = nic;
  }
  for (auto& [bus, nic] : by_bus) machine->nics_.push_back(std::move(nic));
  log.Log(ACCEL_LOG_LEVEL_DEBUG, "topology: {} NIC(s) with a PCI address", machine->nics_.size());
  return machine;
}

MachineTopology::~MachineTopology() = default;

void MachineTopology::Complete(Placement* placement) const {
  hwloc_obj_t pci = FindPci(impl_->topology, placement->pci_bus_id);
  if (pci != nullptr) PlaceFromPci(impl_->topology, pci, placement, false);
}

bool MachineTopology::HasPci(const std::string& bus_id) const { return FindPci(impl_->topology, bus_id) != nullptr; }

accel_link_class_t MachineTopology::Classify(const Placement& a, const Placement& b) const {
  hwloc_obj_t x = FindPci(impl_->topology, a.pci_bus_id);
  hwloc_obj_t y = FindPci(impl_->topology, b.pci_bus_id);
  if (x == nullptr || y == nullptr) return ClassifyByCpus(a, b);
  hwloc_obj_t common = CommonAncestor(x, y);
  if (common == nullptr) return ACCEL_LINK_CLASS_UNKNOWN;
  if (IsIo(common)) {
    if (IsHostBridge(common)) return ACCEL_LINK_CLASS_PHB;
    // Under one PCIe switch: both hang off ports of `common` (at most one
    // bridge below it on either side) is PIX; deeper trees are PXB.
    if (IsPciBridge(common) || common->type == HWLOC_OBJ_PCI_DEVICE) {
      return BridgesBetween(x, common) <= 1 && BridgesBetween(y, common) <= 1 ? ACCEL_LINK_CLASS_PIX
                                                                              : ACCEL_LINK_CLASS_PXB;
    }
  }
  Placement pa = a;
  Placement pb = b;
  Complete(&pa);
  Complete(&pb);
  const accel_link_class_t by_cpus = ClassifyByCpus(pa, pb);
  return by_cpus == ACCEL_LINK_CLASS_UNKNOWN ? ACCEL_LINK_CLASS_SYS : by_cpus;
}

namespace {

constexpr std::pair<const char*, accel_domain_level_t> kLevels[] = {
    {"rack", ACCEL_DOMAIN_LEVEL_RACK},
    {"block", ACCEL_DOMAIN_LEVEL_BLOCK},
    {"slice", ACCEL_DOMAIN_LEVEL_SLICE},
    {"zone", ACCEL_DOMAIN_LEVEL_ZONE},
};

accel_domain_t Domain(accel_domain_level_t level, const std::string& id) {
  accel_domain_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
  d.struct_size = sizeof(d);
  d.level = level;
  std::memcpy(d.id, id.data(), std::min(id.size(), sizeof(d.id) - 1));
  return d;
}

}  // namespace

std::vector<accel_domain_t> MergeDomains(const std::vector<accel_domain_t>& base,
                                         const std::vector<accel_domain_t>& over) {
  std::map<int, accel_domain_t> by_level;
  for (const accel_domain_t& d : base) by_level[static_cast<int>(d.level)] = d;
  for (const accel_domain_t& d : over) by_level[static_cast<int>(d.level)] = d;
  std::vector<accel_domain_t> out;
  for (const auto& [level, d] : by_level) out.push_back(d);
  return out;
}

std::vector<accel_domain_t> ParseDomainFile(std::string_view text, const std::string& file,
                                            std::vector<std::string>* warnings) {
  // allow_exceptions=false still throws out_of_range for a number too large for any type.
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, nullptr, false);
  } catch (const nlohmann::json::exception&) {
    doc = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("domains") || !doc["domains"].is_object()) {
    warnings->push_back(
        fmt::format("topology: {} ignored: expected a JSON object {{\"domains\": {{\"rack\": \"r12\"}}}}", file));
    return {};
  }
  std::vector<accel_domain_t> levels;
  for (const auto& item : doc["domains"].items()) {
    const std::string& level = item.key();  // not a structured binding: clang 14 (the fuzz build) cannot capture one
    const nlohmann::json& id = item.value();
    const auto* known =
        std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return level == l.first; });
    // A NUL ("\u0000") would cut the id short in accel_domain_t: "r\u0000x" read as "r", "\u0000" as no id at all
    // (seen reading the parser for its fuzz target, whose id check catches it).
    if (known == std::end(kLevels) || !id.is_string() || id.get<std::string>().empty() ||
        id.get<std::string>().size() >= ACCEL_SHORT_STRING_SIZE ||
        id.get<std::string>().find('\0') != std::string::npos) {
      warnings->push_back(
          fmt::format("topology: {}: domains.{} ignored: expected level rack, block, slice or zone with an id of 1 to "
                      "{} characters, none of them NUL",
                      file, level, ACCEL_SHORT_STRING_SIZE - 1));
      continue;
    }
    levels.push_back(Domain(known->second, id.get<std::string>()));
  }
  return MergeDomains({}, levels);
}

std::vector<accel_domain_t> ReadDomainFiles(const std::string& dir, const Logger& log) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<accel_domain_t> out;
  for (const auto& file : files) {
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> warnings;
    const std::vector<accel_domain_t> levels = ParseDomainFile(text, file.string(), &warnings);
    for (const std::string& w : warnings) log.Log(ACCEL_LOG_LEVEL_WARN, "{}", w);
    out = MergeDomains(out, levels);
  }
  return out;
}

std::vector<accel_domain_t> ParseDomains(const std::string& text,
                                         std::vector<std::pair<std::string, std::string>>* ignored) {
  std::map<int, accel_domain_t> by_level;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string level = entry.substr(0, eq);
    const std::string id = eq == std::string::npos ? "" : entry.substr(eq + 1);
    const auto* known =
        std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return level == l.first; });
    if (known == std::end(kLevels) || id.empty() || id.size() >= ACCEL_SHORT_STRING_SIZE) {
      ignored->emplace_back(entry, fmt::format("'{}' is ignored: expected <level>=<id> with level rack, block, slice "
                                               "or zone and an id of 1 to {} characters",
                                               entry, ACCEL_SHORT_STRING_SIZE - 1));
      continue;
    }
    by_level[static_cast<int>(known->second)] = Domain(known->second, id);
  }
  std::vector<accel_domain_t> out;
  for (const auto& [level, d] : by_level) out.push_back(d);
  return out;
}

}  // namespace accel::core
