// `accel-info export`: the node's devices as Kubernetes Node Feature Discovery
// feature lines, as a Kubernetes DRA ResourceSlice, and as `ray start` options
// (docs/exports.md). Each is a pure function of the report and the topology;
// names and values are cut and cleaned to fit the upstream syntax rules.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A Kubernetes label value (also a label name's name part and an NFD feature name): at most 63 characters of
// [A-Za-z0-9-_.], starting and ending with a letter or digit. Other characters become '-'.
std::string LabelValue(const std::string& text) {
  std::string out;
  for (char c : text) out += IsAlnum(c) || c == '-' || c == '_' || c == '.' ? c : '-';
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !IsAlnum(out[start])) ++start;
  return out.substr(start);
}

// At most `bytes` bytes of `text`, cut at a character boundary of UTF-8 (a lone lead byte is not JSON's to write).
std::string CutUtf8(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t n = bytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;  // text[n] starts the cut-off char
  return text.substr(0, n);
}

// A DNS label (RFC 1123): lowercase letters, digits and '-', at most 63, alphanumeric at both ends.
std::string DnsLabel(const std::string& text) {
  std::string out;
  for (char c : text) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') ? l : '-';
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  size_t start = 0;
  while (start < out.size() && out[start] == '-') ++start;
  out = out.substr(start);
  return out.empty() ? "device" : out;
}

// A DNS subdomain (RFC 1123), as Kubernetes node and object names are: dot-separated DNS labels, at most 253
// characters. A name that is one already (a node name from spec.nodeName) is kept as it is; else each dot-separated
// part becomes a DNS label, and the whole is cut to 253.
std::string DnsSubdomain(const std::string& text) {
  std::string out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find('.', begin), text.size());
    const std::string part = text.substr(begin, end - begin);
    if (!part.empty()) out += (out.empty() ? "" : ".") + DnsLabel(part);
    begin = end + 1;
  }
  if (out.size() > 253) out.resize(253);
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  return out.empty() ? "node" : out;
}

// "fp8-e4m3" -> "fp8E4m3": a C identifier, as DRA attribute names are.
std::string Identifier(const std::string& name) {
  std::string out;
  bool upper = false;
  for (char c : name) {
    if (!IsAlnum(c)) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

struct NodeView {
  std::string node;                                        // the node domain's id
  std::vector<std::pair<std::string, std::string>> above;  // level, id: rack, block, slice, zone
};

NodeView NodeOf(const TopoReport& topo) {
  NodeView v;
  for (const TopoDevice& d : topo.devices) {
    for (const accel_domain_t& dom : d.domains) {
      if (dom.level == ACCEL_DOMAIN_LEVEL_NODE && v.node.empty()) v.node = FixedString(dom.id);
    }
    if (!v.node.empty()) {
      for (const accel_domain_t& dom : d.domains) {
        if (dom.level > ACCEL_DOMAIN_LEVEL_NODE) v.above.emplace_back(LevelName(dom.level), FixedString(dom.id));
      }
      break;
    }
  }
  return v;
}

const accel_device_capabilities_t& Caps(const PhysicalDevice& d) { return d.access_paths.front().caps; }

bool Simulated(const PhysicalDevice& d) { return (d.props.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0; }

// What a device's part executes: for a simulated device, the modeled part's formats.
uint64_t PartFormats(const PhysicalDevice& d) {
  const auto& c = Caps(d);
  return Simulated(d) ? c.modeled_kernel_formats : c.kernel_formats;
}

std::vector<const PhysicalDevice*> Devices(const Report& report) {
  std::vector<const PhysicalDevice*> out;
  for (const PhysicalDevice& d : report.physical_devices) {
    if (!d.access_paths.empty()) out.push_back(&d);
  }
  return out;
}

// --- NFD -------------------------------------------------------------------------------------------------------------

void PrintNfd(const Report& report, const TopoReport& topo) {
  std::map<std::string, std::string> features;  // sorted, each name once
  const auto devices = Devices(report);
  auto set = [&](const std::string& name, const std::string& value) { features[LabelValue(name)] = LabelValue(value); };
  set("accel-device-count", std::to_string(devices.size()));
  std::map<std::string, uint32_t> by_kind;
  std::map<std::string, uint32_t> by_sku;
  std::map<std::string, uint64_t> min_memory;
  bool any_simulated = false;
  uint64_t numeric = 0;
  uint64_t formats = 0;
  uint64_t feats = 0;
  for (const PhysicalDevice* d : devices) {
    const std::string kind = KindName(d->props.kind);
    ++by_kind[kind];
    ++by_sku[FixedString(Caps(*d).sku)];
    auto [it, inserted] = min_memory.emplace(kind, d->props.memory_total);
    if (!inserted) it->second = std::min(it->second, d->props.memory_total);
    any_simulated = any_simulated || Simulated(*d);
    numeric |= Caps(*d).numeric_formats;
    formats |= PartFormats(*d);
    feats |= Caps(*d).features;
  }
  for (const auto& [kind, n] : by_kind) {
    set("accel-" + kind + "-count", std::to_string(n));
    set("accel-" + kind + "-memory-gib", std::to_string(min_memory[kind] >> 30));
  }
  for (const auto& [sku, n] : by_sku) set("accel-sku-" + sku, std::to_string(n));
  for (const auto& name : FlagNames(NumericFormatNames(), numeric)) set("accel-numeric-" + name, "true");
  for (const auto& name : FlagNames(KernelFormatNames(), formats)) set("accel-kernel-format-" + name, "true");
  for (const auto& name : FlagNames(DeviceFeatureNames(), feats)) set("accel-feature-" + name, "true");
  std::set<std::string> fabrics;
  for (const auto& row : topo.links) {
    for (const auto& l : row) {
      if (l.link_class == ACCEL_LINK_CLASS_FABRIC && !FixedString(l.fabric).empty())
        fabrics.insert(FixedString(l.fabric));
    }
  }
  for (const auto& f : fabrics) set("accel-fabric-" + f, "true");
  if (any_simulated) set("accel-simulated", "true");
  const NodeView node = NodeOf(topo);
  for (const auto& [level, id] : node.above) set("accel-domain-" + level, id);
  fmt::print("# Accel capabilities for Node Feature Discovery's local source (docs/exports.md): write to\n");
  fmt::print("# /etc/kubernetes/node-feature-discovery/features.d/accel; NFD prefixes each name with\n");
  fmt::print("# feature.node.kubernetes.io/.\n");
  for (const auto& [name, value] : features) {
    if (name.empty()) continue;
    fmt::print("{}={}\n", name, value);
  }
}

// --- DRA -------------------------------------------------------------------------------------------------------------

// Kubernetes: at most 32 attributes and capacities together per device.
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kMaxStringAttribute = 64;
constexpr size_t kMaxDevicesPerSlice = 128;

void PrintDra(const Report& report, const TopoReport& topo, const std::string& node_name) {
  const std::string node = DnsSubdomain(node_name);  // a node name may hold dots (ip-10-0-1-23.ec2.internal)
  json devices = json::array();
  std::set<std::string> names;
  for (const PhysicalDevice* d : Devices(report)) {
    const auto& c = Caps(*d);
    const TopoDevice* t = nullptr;
    for (const TopoDevice& td : topo.devices) {
      if (td.stable_id == FixedString(c.stable_id)) t = &td;
    }
    json attributes = json::object();
    auto str = [&](const char* key, const std::string& value) {
      if (!value.empty()) attributes[key] = {{"string", CutUtf8(value, kMaxStringAttribute)}};
    };
    str("productName", FixedString(c.name));
    str("sku", FixedString(c.sku));
    str("kind", KindName(d->props.kind));
    str("vendor", FixedString(c.vendor));
    str("architecture", FixedString(c.architecture));
    str("stableId", FixedString(d->props.stable_id));
    if ((c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0) str("uuid", UuidHex(c.uuid));
    str("pciBusID", FixedString(c.pci_bus_id));
    if (t != nullptr) str("pcieRoot", FixedString(t->topology.pcie_root));
    const int32_t numa = t != nullptr ? t->topology.numa_node : d->props.numa_node;
    if (numa >= 0) attributes["numaNode"] = {{"int", numa}};
    attributes["computeUnits"] = {{"int", d->props.compute_units}};
    attributes["simulated"] = {{"bool", Simulated(*d)}};
    str("kernelFormats", Join(FlagNames(KernelFormatNames(), PartFormats(*d)), ","));
    if (t != nullptr) {
      for (const accel_domain_t& dom : t->domains) {
        if (dom.level == ACCEL_DOMAIN_LEVEL_CLIQUE) str("clique", FixedString(dom.id));
      }
    }
    attributes["peerAccess"] = {{"bool", (c.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS) != 0}};
    for (const auto& name : FlagNames(NumericFormatNames(), c.numeric_formats)) {
      if (attributes.size() + 1 >= kMaxAttributesAndCapacities) break;  // room for the memory capacity
      attributes[Identifier(name)] = {{"bool", true}};
    }
    std::string name = DnsLabel(FixedString(d->props.stable_id));
    for (int n = 2; !names.insert(name).second; ++n) name = DnsLabel(fmt::format("{}-{}", name, n));
    devices.push_back({{"name", name},
                       {"attributes", std::move(attributes)},
                       {"capacity", {{"memory", {{"value", std::to_string(d->props.memory_total)}}}}}});
  }
  // A slice holds at most 128 devices: a node with more publishes its pool as several slices, printed as one List
  // (what `kubectl apply -f` takes), each slice named with its index.
  const size_t slice_count = std::max<size_t>(1, (devices.size() + kMaxDevicesPerSlice - 1) / kMaxDevicesPerSlice);
  json slices = json::array();
  for (size_t i = 0; i < slice_count; ++i) {
    const size_t first = i * kMaxDevicesPerSlice;
    const size_t last = std::min(devices.size(), first + kMaxDevicesPerSlice);
    json part = json::array();
    for (size_t k = first; k < last; ++k) part.push_back(std::move(devices[k]));
    const std::string suffix = slice_count == 1 ? "-accel" : fmt::format("-accel-{}", i);
    slices.push_back({
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceSlice"},
        {"metadata", {{"name", DnsSubdomain(node.substr(0, 253 - suffix.size()) + suffix)}}},
        {"spec",
         {{"driver", "accel.dev"},
          {"nodeName", node},
          {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", slice_count}}},
          {"devices", std::move(part)}}},
    });
  }
  if (slice_count == 1) {
    fmt::print("{}\n", slices[0].dump(2));
  } else {
    fmt::print("{}\n", json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(slices)}}.dump(2));
  }
}

// --- Ray -------------------------------------------------------------------------------------------------------------

void PrintRay(const Report& report, const TopoReport& topo, const std::string& node_name, bool as_json) {
  json resources = json::object();
  json labels = json::object();
  const NodeView node = NodeOf(topo);
  const std::string node_id = node_name.empty() ? node.node : node_name;
  if (!node_id.empty()) labels["accel.dev/node"] = LabelValue(node_id);
  for (const auto& [level, id] : node.above) labels["accel.dev/" + level] = LabelValue(id);
  std::set<std::string> unit;
  bool simulated = false;
  for (const PhysicalDevice* d : Devices(report)) {
    simulated = simulated || Simulated(*d);
    if (d->props.kind == ACCEL_DEVICE_KIND_CPU) continue;  // Ray counts CPUs itself
    const std::string kind = KindName(d->props.kind);
    const std::string name = "accel_" + kind;
    unit.insert(name);
    // Ray's unit instance k of accel_<kind> is this node's k-th device of that kind: the label names its physical
    // id, which the worker puts in ACCEL_VISIBLE_DEVICES (python/accel/ray).
    const int k = resources.value(name, 0);
    labels[fmt::format("accel.dev/{}-{}", kind, k)] = LabelValue(FixedString(d->props.stable_id));
    resources[name] = k + 1;
    resources["accelerator_type:" + LabelValue(FixedString(Caps(*d).sku))] = 1;
  }
  if (simulated) labels["accel.dev/simulated"] = "true";
  std::string units;
  for (const auto& u : unit) units += (units.empty() ? "" : ",") + u;
  json env = json::object();
  if (!units.empty()) env["RAY_custom_unit_instance_resources"] = units;
  const std::string command = fmt::format("{}ray start --resources='{}' --labels='{}'",
                                          units.empty() ? "" : "RAY_custom_unit_instance_resources=" + units + " ",
                                          resources.dump(), labels.dump());
  if (as_json) {
    fmt::print("{}\n", json{{"resources", resources}, {"labels", labels}, {"env", env}, {"command", command}}.dump(2));
    return;
  }
  fmt::print("# `ray start` options for this node (docs/exports.md). The unit-instance variable makes Ray hand out\n");
  fmt::print("# device indices for the accel_* resources, as it does for GPU.\n");
  fmt::print("{}\n", command);
}

}  // namespace

int PrintExport(const ExportOptions& options, const Report& report, const TopoReport& topo) {
  if (options.format == "nfd") {
    PrintNfd(report, topo);
  } else if (options.format == "dra") {
    PrintDra(report, topo, options.node_name.empty() ? options.host_name : options.node_name);
  } else if (options.format == "ray") {
    PrintRay(report, topo, options.node_name, options.json);
  } else {
    return 1;
  }
  return 0;
}

}  // namespace accel::info
