// The topology description parser: JSON (nlohmann) to a Profile, every field
// checked, every failure named by file, field and reason.
#include "profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "names.h"

namespace accel::sim {
namespace {

using nlohmann::json;

// A failed check: the field's path and the reason. Thrown inside the parser only, caught by ParseProfile.
struct Invalid {
  std::string field;
  std::string reason;
};

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer: return v.get<int64_t>() < 0 ? "a negative integer" : "an integer";
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number with a fraction";
    default: return "something else";
  }
}

// One JSON object being read, with the path that names it in messages. Every key must be read or allowed, so
// that a misspelt field is an error rather than a silent default.
class Object {
 public:
  Object(const json& value, std::string path) : value_(value), path_(std::move(path)) {
    if (!value_.is_object())
      throw Invalid{path_.empty() ? "(document)" : path_, std::string("expected an object, got ") + TypeName(value_)};
  }

  std::string Field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& path() const { return path_; }
  bool Has(const std::string& key) const { return value_.contains(key); }

  const json* Find(const std::string& key) {
    seen_.insert(key);
    auto it = value_.find(key);
    return it == value_.end() ? nullptr : &*it;
  }
  const json& Need(const std::string& key) {
    const json* v = Find(key);
    if (v == nullptr) throw Invalid{Field(key), "missing (required)"};
    return *v;
  }

  std::string String(const std::string& key, size_t max_length, bool required, std::string fallback = "") {
    const json* v = required ? &Need(key) : Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) throw Invalid{Field(key), std::string("expected a string, got ") + TypeName(*v)};
    std::string s = v->get<std::string>();
    if (required && s.empty()) throw Invalid{Field(key), "must not be empty"};
    if (s.size() > max_length) {
      throw Invalid{Field(key),
                    "is " + std::to_string(s.size()) + " characters, more than " + std::to_string(max_length)};
    }
    return s;
  }

  // An optional string that, when given, is not empty (the schema's minLength 1: "" names nothing).
  std::string NonEmptyString(const std::string& key, size_t max_length, std::string fallback = "") {
    const json* v = Find(key);
    if (v != nullptr && v->is_string() && v->get_ref<const std::string&>().empty()) {
      throw Invalid{Field(key), "must not be empty (leave it out instead)"};
    }
    return String(key, max_length, false, std::move(fallback));
  }

  uint64_t Unsigned(const std::string& key, bool required, uint64_t fallback = 0, uint64_t max = UINT64_MAX) {
    const json* v = required ? &Need(key) : Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
      throw Invalid{Field(key), std::string("expected an unsigned integer, got ") + TypeName(*v)};
    }
    const uint64_t n = v->get<uint64_t>();
    if (n > max) throw Invalid{Field(key), std::to_string(n) + " is more than " + std::to_string(max)};
    return n;
  }

  int32_t Integer(const std::string& key, int32_t fallback, int32_t min, int32_t max) {
    const json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer()) throw Invalid{Field(key), std::string("expected an integer, got ") + TypeName(*v)};
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max)) {
      // Read as int64_t, 2^64 - 1 would become -1 and pass as "unknown".
      throw Invalid{Field(key), std::to_string(v->get<uint64_t>()) + " is outside " + std::to_string(min) + ".." +
                                    std::to_string(max)};
    }
    const int64_t n = v->get<int64_t>();
    if (n < min || n > max) {
      throw Invalid{Field(key), std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max)};
    }
    return static_cast<int32_t>(n);
  }

  bool Bool(const std::string& key, bool fallback) {
    const json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) throw Invalid{Field(key), std::string("expected true or false, got ") + TypeName(*v)};
    return v->get<bool>();
  }

  double Probability(const std::string& key) {
    const json* v = Find(key);
    if (v == nullptr) return 0.0;
    if (!v->is_number()) throw Invalid{Field(key), std::string("expected a number, got ") + TypeName(*v)};
    const double p = v->get<double>();
    if (!(p >= 0.0 && p <= 1.0)) throw Invalid{Field(key), "must lie in 0..1"};
    return p;
  }

  // The array at `key` (empty when absent and not required).
  const json& Array(const std::string& key, bool required) {
    static const json kEmpty = json::array();
    const json* v = required ? &Need(key) : Find(key);
    if (v == nullptr) return kEmpty;
    if (!v->is_array()) throw Invalid{Field(key), std::string("expected an array, got ") + TypeName(*v)};
    return *v;
  }

  // Every key of the object was read, or is one of `extra` (documentation fields).
  void NoOthers(std::initializer_list<const char*> extra = {}) const {
    for (auto it = value_.begin(); it != value_.end(); ++it) {
      if (seen_.contains(it.key())) continue;
      if (std::any_of(extra.begin(), extra.end(), [&](const char* e) { return it.key() == e; })) continue;
      throw Invalid{Field(it.key()), "unknown field"};
    }
  }

 private:
  const json& value_;
  std::string path_;
  std::set<std::string> seen_;
};

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// A set of named bits from an array of names.
uint64_t Bits(Object& o, const std::string& key, std::span<const info::FlagName> table) {
  uint64_t bits = 0;
  const json& names = o.Array(key, false);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string field = Index(o.Field(key), i);
    if (!names[i].is_string()) throw Invalid{field, std::string("expected a string, got ") + TypeName(names[i])};
    const std::string name = names[i].get<std::string>();
    const auto hit = std::find_if(table.begin(), table.end(), [&](const info::FlagName& f) { return name == f.name; });
    if (hit == table.end()) {
      std::string known;
      for (const auto& f : table) known += std::string(known.empty() ? "" : ", ") + f.name;
      throw Invalid{field, "unknown name '" + name + "' (known: " + known + ")"};
    }
    bits |= hit->bit;
  }
  return bits;
}

template <size_t N>
void Copy(char (&to)[N], const std::string& from) {
  const size_t n = std::min(from.size(), N - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// "0000:3b:00.0": domain, bus, device and function in hex.
bool IsPciBusId(const std::string& s) {
  if (s.size() != 12) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 4 || i == 7) {
      if (c != ':') return false;
    } else if (i == 10) {
      if (c != '.') return false;
    } else if (!IsHex(c)) {
      return false;
    }
  }
  return true;
}

// The 8-4-4-4-12 hex form into 16 bytes.
bool ParseUuid(const std::string& s, uint8_t (&out)[ACCEL_UUID_SIZE]) {
  if (s.size() != 36) return false;
  size_t byte = 0;
  for (size_t i = 0; i < s.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
      ++i;
      continue;
    }
    if (!IsHex(s[i]) || !IsHex(s[i + 1]) || byte >= ACCEL_UUID_SIZE) return false;
    unsigned value = 0;
    std::from_chars(s.data() + i, s.data() + i + 2, value, 16);
    out[byte++] = static_cast<uint8_t>(value);
    i += 2;
  }
  return byte == ACCEL_UUID_SIZE;
}

// Counts the CPUs of a Linux cpulist ("0-3,8"); nullopt when it does not parse.
std::optional<uint32_t> CountCpus(const std::string& list) {
  if (list.empty()) return 0;
  std::vector<bool> seen(65536, false);  // a CPU listed twice ("0-3,2-5") counts once
  uint64_t count = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string part = list.substr(start, end - start);
    unsigned lo = 0;
    unsigned hi = 0;
    const size_t dash = part.find('-');
    const std::string a = part.substr(0, dash);
    const std::string b = dash == std::string::npos ? a : part.substr(dash + 1);
    auto ra = std::from_chars(a.data(), a.data() + a.size(), lo);
    auto rb = std::from_chars(b.data(), b.data() + b.size(), hi);
    if (a.empty() || b.empty() || ra.ptr != a.data() + a.size() || rb.ptr != b.data() + b.size() || hi < lo ||
        hi > 65535) {
      return std::nullopt;
    }
    for (unsigned cpu = lo; cpu <= hi; ++cpu) {
      if (!seen[cpu]) ++count;
      seen[cpu] = true;
    }
    start = end + 1;
    if (end == list.size()) break;
  }
  return static_cast<uint32_t>(count);
}

std::optional<accel_link_class_t> LinkClassNamed(const std::string& name) {
  for (int c = ACCEL_LINK_CLASS_FABRIC; c <= ACCEL_LINK_CLASS_NONE; ++c) {
    if (name == info::LinkClassName(static_cast<accel_link_class_t>(c))) return static_cast<accel_link_class_t>(c);
  }
  return std::nullopt;
}

accel_link_class_t LinkClass(Object& o, const std::string& key) {
  const std::string name = o.String(key, 32, true);
  auto c = LinkClassNamed(name);
  if (!c) {
    throw Invalid{o.Field(key),
                  "unknown link class '" + name + "' (known: FABRIC, PIX, PXB, PHB, NODE, SYS, HOST_STAGED, NONE)"};
  }
  return *c;
}

std::optional<accel_device_kind_t> KindNamed(const std::string& name) {
  for (int k = ACCEL_DEVICE_KIND_CPU; k <= ACCEL_DEVICE_KIND_FPGA; ++k) {
    if (name == info::KindName(static_cast<uint32_t>(k))) return static_cast<accel_device_kind_t>(k);
  }
  return std::nullopt;
}

std::optional<accel_domain_level_t> AboveNodeLevelNamed(const std::string& name) {
  for (int l = ACCEL_DOMAIN_LEVEL_RACK; l <= ACCEL_DOMAIN_LEVEL_ZONE; ++l) {
    if (name == info::DomainLevelName(static_cast<accel_domain_level_t>(l))) {
      return static_cast<accel_domain_level_t>(l);
    }
  }
  return std::nullopt;
}

std::optional<accel_status_t> ErrorStatusNamed(std::string name) {
  static const std::pair<const char*, accel_status_t> kErrors[] = {
      {"internal", ACCEL_ERROR_INTERNAL},
      {"device_lost", ACCEL_ERROR_DEVICE_LOST},
      {"resource_exhausted", ACCEL_ERROR_RESOURCE_EXHAUSTED},
      {"timeout", ACCEL_ERROR_TIMEOUT},
      {"failed_precondition", ACCEL_ERROR_FAILED_PRECONDITION},
  };
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.rfind("accel_error_", 0) == 0) name = name.substr(12);
  for (const auto& [n, s] : kErrors) {
    if (name == n) return s;
  }
  return std::nullopt;
}

constexpr size_t kIdMax = ACCEL_SHORT_STRING_SIZE - 1;

DeviceSpec ReadDevice(const json& value, const std::string& path, const std::set<int32_t>& numa_ids) {
  Object o(value, path);
  DeviceSpec d;
  accel_device_capabilities_t& c = d.caps;
  c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  c.struct_size = sizeof(c);
  d.id = o.String("id", kIdMax, true);
  const std::string kind = o.String("kind", 16, true);
  auto k = KindNamed(kind);
  if (!k) throw Invalid{o.Field("kind"), "unknown kind '" + kind + "' (known: cpu, gpu, npu, tpu, fpga)"};
  c.kind = *k;
  Copy(c.name, o.String("name", ACCEL_NAME_SIZE - 1, true));
  Copy(c.vendor, o.String("vendor", ACCEL_SHORT_STRING_SIZE - 1, true));
  Copy(c.sku, o.String("sku", ACCEL_SHORT_STRING_SIZE - 1, true));
  Copy(c.architecture, o.String("architecture", ACCEL_SHORT_STRING_SIZE - 1, false));
  Copy(c.driver_version, o.String("driver_version", ACCEL_SHORT_STRING_SIZE - 1, false, "sim"));
  c.vendor_id = static_cast<uint32_t>(o.Unsigned("vendor_id", false, 0, 0xFFFF));
  c.device_id = static_cast<uint32_t>(o.Unsigned("device_id", false, 0, 0xFFFF));
  c.flags = ACCEL_DEVICE_FLAG_SIMULATED;
  const std::string uuid = o.String("uuid", 36, false);
  if (!uuid.empty()) {
    if (!ParseUuid(uuid, c.uuid)) {
      throw Invalid{o.Field("uuid"), "'" + uuid + "' is not a UUID (8-4-4-4-12 hexadecimal digits)"};
    }
    c.flags |= ACCEL_DEVICE_FLAG_UUID_UNIQUE;
  }
  const std::string bus = o.String("pci_bus_id", 12, false);
  if (!bus.empty() && !IsPciBusId(bus)) {
    throw Invalid{o.Field("pci_bus_id"), "'" + bus + "' is not a PCI bus id (dddd:bb:dd.f in hexadecimal)"};
  }
  Copy(c.pci_bus_id, bus);
  d.pcie_root = o.String("pcie_root", ACCEL_PCI_BUS_ID_SIZE - 1, false);
  d.pcie_switch = o.NonEmptyString("pcie_switch", kIdMax);
  c.numa_node = o.Integer("numa_node", -1, -1, 4095);
  if (c.numa_node >= 0 && !numa_ids.empty() && !numa_ids.contains(c.numa_node)) {
    throw Invalid{o.Field("numa_node"), "NUMA node " + std::to_string(c.numa_node) + " is not in 'numa_nodes'"};
  }
  c.memory_total = o.Unsigned("memory", true);
  if (c.memory_total == 0) throw Invalid{o.Field("memory"), "must be more than 0 bytes"};
  c.max_allocation = o.Unsigned("max_allocation", false, c.memory_total);
  if (c.max_allocation == 0 || c.max_allocation > c.memory_total) {
    throw Invalid{o.Field("max_allocation"), "must lie in 1..memory (" + std::to_string(c.memory_total) + ")"};
  }
  c.max_buffer_range = c.max_allocation;
  c.compute_units = static_cast<uint32_t>(o.Unsigned("compute_units", true, 0, UINT32_MAX));
  if (c.compute_units == 0) throw Invalid{o.Field("compute_units"), "must be more than 0"};
  c.clock_mhz = static_cast<uint32_t>(o.Unsigned("clock_mhz", false, 0, UINT32_MAX));
  c.local_memory_size = o.Unsigned("local_memory_size", false, 65536, uint64_t{1} << 30);
  c.max_work_group_size = static_cast<uint32_t>(o.Unsigned("max_work_group_size", false, 1024, 65536));
  if (c.max_work_group_size == 0) throw Invalid{o.Field("max_work_group_size"), "must be more than 0"};
  c.subgroup_size = static_cast<uint32_t>(o.Unsigned("subgroup_size", false, 0, 1024));
  c.max_work_group_dims[0] = c.max_work_group_size;
  c.max_work_group_dims[1] = c.max_work_group_size;
  c.max_work_group_dims[2] = std::min<uint32_t>(c.max_work_group_size, 64);
  c.max_grid_dims[0] = 2147483647;
  c.max_grid_dims[1] = 65535;
  c.max_grid_dims[2] = 65535;
  c.max_argument_size = 4096;
  c.numeric_formats = Bits(o, "numeric_formats", info::NumericFormatNames());
  c.modeled_kernel_formats = Bits(o, "kernel_formats", info::KernelFormatNames());
  c.kernel_formats = ACCEL_KERNEL_FORMAT_NATIVE_HOST;  // what the simulated device really executes
  c.features = Bits(o, "features", info::DeviceFeatureNames());
  // Streams of the engine time their events; host memory backs every buffer.
  c.features |= ACCEL_DEVICE_FEATURE_EVENT_TIMING;
  d.clique = o.NonEmptyString("clique", kIdMax);
  o.NoOthers({"comment"});
  return d;
}

void ReadLinks(Object& top, Profile* p, const std::map<std::string, size_t>& device_index) {
  const json& links = top.Array("links", false);
  std::map<std::pair<size_t, size_t>, std::string> seen;
  for (size_t i = 0; i < links.size(); ++i) {
    Object o(links[i], Index("links", i));
    const json& ids = o.Array("devices", true);
    if (ids.size() < 2)
      throw Invalid{o.Field("devices"), "names " + std::to_string(ids.size()) +
                                            " device(s); a link joins at least 2 (every pair of the list)"};
    std::vector<size_t> members;
    for (size_t j = 0; j < ids.size(); ++j) {
      const std::string field = Index(o.Field("devices"), j);
      if (!ids[j].is_string()) throw Invalid{field, std::string("expected a device id, got ") + TypeName(ids[j])};
      auto it = device_index.find(ids[j].get<std::string>());
      if (it == device_index.end()) throw Invalid{field, "unknown device '" + ids[j].get<std::string>() + "'"};
      if (std::find(members.begin(), members.end(), it->second) != members.end()) {
        throw Invalid{field, "device '" + ids[j].get<std::string>() + "' is listed twice"};
      }
      members.push_back(it->second);
    }
    LinkSpec link;
    link.link_class = LinkClass(o, "class");
    link.fabric = o.NonEmptyString("fabric", kIdMax);
    link.link_count = static_cast<uint32_t>(o.Unsigned("link_count", false, 0, 1024));
    link.bandwidth = o.Unsigned("bandwidth", false, 0);
    link.peer_access = o.Bool("peer_access", link.link_class == ACCEL_LINK_CLASS_FABRIC);
    if (link.link_class != ACCEL_LINK_CLASS_FABRIC && (!link.fabric.empty() || link.link_count != 0)) {
      throw Invalid{o.Field(link.fabric.empty() ? "link_count" : "fabric"), "is for FABRIC links only"};
    }
    if (link.link_class == ACCEL_LINK_CLASS_HOST_STAGED || link.link_class == ACCEL_LINK_CLASS_NONE) {
      if (link.peer_access) throw Invalid{o.Field("peer_access"), "a HOST_STAGED or NONE link has no peer access"};
    }
    o.NoOthers({"comment"});
    for (size_t x = 0; x < members.size(); ++x) {
      for (size_t y = x + 1; y < members.size(); ++y) {
        LinkSpec l = link;
        l.a = std::min(members[x], members[y]);
        l.b = std::max(members[x], members[y]);
        auto [it, inserted] = seen.emplace(std::make_pair(l.a, l.b), o.path());
        if (!inserted) {
          throw Invalid{o.Field("devices"), "the pair '" + p->devices[l.a].id + "', '" + p->devices[l.b].id +
                                                "' already has a link in " + it->second};
        }
        p->links.push_back(std::move(l));
      }
    }
  }
}

void ReadNicLinks(Object& top, Profile* p, const std::map<std::string, size_t>& device_index,
                  const std::map<std::string, size_t>& nic_index) {
  const json& links = top.Array("nic_links", false);
  std::set<std::pair<size_t, size_t>> seen;
  for (size_t i = 0; i < links.size(); ++i) {
    Object o(links[i], Index("nic_links", i));
    const std::string dev = o.String("device", kIdMax, true);
    const std::string nic = o.String("nic", kIdMax, true);
    auto d = device_index.find(dev);
    if (d == device_index.end()) throw Invalid{o.Field("device"), "unknown device '" + dev + "'"};
    auto n = nic_index.find(nic);
    if (n == nic_index.end()) throw Invalid{o.Field("nic"), "unknown NIC '" + nic + "'"};
    LinkSpec link;
    link.a = d->second;
    link.b = n->second;
    link.link_class = LinkClass(o, "class");
    if (link.link_class == ACCEL_LINK_CLASS_FABRIC) throw Invalid{o.Field("class"), "a NIC link is not FABRIC"};
    if (!seen.emplace(link.a, link.b).second) {
      throw Invalid{o.path(), "device '" + dev + "' and NIC '" + nic + "' already have a link"};
    }
    o.NoOthers({"comment"});
    p->nic_links.push_back(link);
  }
}

// The domains above the node: each {level, id, parent}; the node's "domain" names the innermost. The chain from it
// must end (no cycle), rise in level at each step, and name each level once.
void ReadDomains(Object& top, const std::string& node_domain, const std::string& node_field, Profile* p) {
  struct Entry {
    accel_domain_level_t level;
    std::string parent;
    std::string path;
  };
  std::map<std::string, Entry> by_id;
  const json& domains = top.Array("domains", false);
  for (size_t i = 0; i < domains.size(); ++i) {
    Object o(domains[i], Index("domains", i));
    const std::string level = o.String("level", 16, true);
    auto l = AboveNodeLevelNamed(level);
    if (!l)
      throw Invalid{o.Field("level"), "unknown level '" + level + "' (known above the node: rack, block, slice, zone)"};
    const std::string id = o.String("id", kIdMax, true);
    const std::string parent = o.NonEmptyString("parent", kIdMax);
    o.NoOthers({"comment"});
    auto [it, inserted] = by_id.emplace(id, Entry{*l, parent, o.path()});
    if (!inserted) throw Invalid{o.Field("id"), "duplicate domain id '" + id + "' (also " + it->second.path + ")"};
  }
  for (const auto& [id, e] : by_id) {
    if (!e.parent.empty() && !by_id.contains(e.parent)) {
      throw Invalid{e.path + ".parent", "unknown domain '" + e.parent + "'"};
    }
  }
  if (node_domain.empty()) {
    if (!by_id.empty())
      throw Invalid{node_field, "missing: 'domains' is given, so the node must name its innermost domain"};
    return;
  }
  std::set<std::string> visited;
  std::string at = node_domain;
  int last_level = ACCEL_DOMAIN_LEVEL_NODE;
  std::string from = node_field;
  while (!at.empty()) {
    auto it = by_id.find(at);
    if (it == by_id.end()) throw Invalid{from, "unknown domain '" + at + "'"};
    if (!visited.insert(at).second) throw Invalid{from, "the domain chain has a cycle through '" + at + "'"};
    const Entry& e = it->second;
    if (static_cast<int>(e.level) <= last_level) {
      throw Invalid{e.path + ".level", std::string("'") + info::DomainLevelName(e.level) + "' cannot lie above '" +
                                           info::DomainLevelName(static_cast<accel_domain_level_t>(last_level)) +
                                           "': levels rise from node to rack, block, slice and zone, each once"};
    }
    last_level = e.level;
    accel_domain_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
    d.struct_size = sizeof(d);
    d.level = e.level;
    Copy(d.id, at);
    p->domains_above_node.push_back(d);
    from = e.path + ".parent";
    at = e.parent;
  }
  for (const auto& [id, e] : by_id) {
    if (!visited.contains(id)) throw Invalid{e.path, "domain '" + id + "' is not on the node's chain"};
  }
}

void ReadFaults(Object& top, const std::map<std::string, size_t>& device_index, FaultSpec* f) {
  const json* v = top.Find("faults");
  if (v == nullptr) return;
  Object o(*v, "faults");
  f->seed = o.Unsigned("seed", false, 0);
  f->allocation_failure_probability = o.Probability("allocation_failure_probability");
  f->device_lost_after = o.Unsigned("device_lost_after", false, 0);
  f->stream_error_after = o.Unsigned("stream_error_after", false, 0);
  const std::string status = o.String("stream_error_status", 40, false, "internal");
  auto s = ErrorStatusNamed(status);
  if (!s) throw Invalid{o.Field("stream_error_status"), "unknown error '" + status + "'"};
  f->stream_error_status = *s;
  f->slow_copy_probability = o.Probability("slow_copy_probability");
  f->slow_copy_delay_us = o.Unsigned("slow_copy_delay_us", false, 1000);
  for (const char* name : {"devices", "device_lost_devices"}) {
    std::vector<std::string>* out = std::string_view(name) == "devices" ? &f->devices : &f->lost_devices;
    const json& ids = o.Array(name, false);
    for (size_t i = 0; i < ids.size(); ++i) {
      const std::string field = Index(o.Field(name), i);
      if (!ids[i].is_string() || !device_index.contains(ids[i].get<std::string>())) {
        throw Invalid{field, "expected the id of a device of the profile"};
      }
      out->push_back(ids[i].get<std::string>());
    }
  }
  o.NoOthers({"comment"});
}

Profile Read(const json& document) {
  const json* root = &document;
  if (document.is_object() && document.contains("topology") && document.contains("physical_devices")) {
    root = &document["topology"];  // a whole `accel-info --json` document
  }
  Object top(*root, "");
  Profile p;
  const std::string version = top.String("format_version", 16, true);
  if (version.rfind("1.", 0) != 0) {
    throw Invalid{"format_version", "'" + version + "' is not a 1.x topology description this backend reads"};
  }
  p.name = top.NonEmptyString("name", kIdMax);
  p.description = top.String("description", 512, false);
  std::string node_domain;
  if (const json* node = top.Find("node")) {
    Object o(*node, "node");
    p.node_id = o.NonEmptyString("id", kIdMax);
    node_domain = o.NonEmptyString("domain", kIdMax);
    o.NoOthers({"comment"});
  }

  std::set<int32_t> numa_ids;
  const json& numa = top.Array("numa_nodes", false);
  for (size_t i = 0; i < numa.size(); ++i) {
    Object o(numa[i], Index("numa_nodes", i));
    NumaNode n;
    n.id = o.Integer("id", -1, 0, 4095);
    if (!o.Has("id")) throw Invalid{o.Field("id"), "missing (required)"};
    n.cpus = o.String("cpus", ACCEL_CPU_LIST_SIZE - 1, false);
    auto count = CountCpus(n.cpus);
    if (!count) throw Invalid{o.Field("cpus"), "'" + n.cpus + "' is not a Linux CPU list (\"0-15,32-47\")"};
    n.cpu_count = *count;
    o.NoOthers({"comment", "cpu_count"});
    if (!numa_ids.insert(n.id).second) throw Invalid{o.Field("id"), "duplicate NUMA node " + std::to_string(n.id)};
    p.numa_nodes.push_back(std::move(n));
  }

  std::map<std::string, size_t> device_index;
  const json& devices = top.Array("devices", true);
  if (devices.empty()) throw Invalid{"devices", "is empty; a simulated node has at least one device"};
  for (size_t i = 0; i < devices.size(); ++i) {
    DeviceSpec d = ReadDevice(devices[i], Index("devices", i), numa_ids);
    if (!device_index.emplace(d.id, i).second)
      throw Invalid{Index("devices", i) + ".id", "duplicate device id '" + d.id + "'"};
    p.devices.push_back(std::move(d));
  }
  // Two devices at one PCI address or with one UUID would be one chip.
  std::map<std::string, size_t> buses;
  std::map<std::string, size_t> uuids;
  for (size_t i = 0; i < p.devices.size(); ++i) {
    if ((p.devices[i].caps.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0) {
      const std::string uuid(reinterpret_cast<const char*>(p.devices[i].caps.uuid), sizeof(p.devices[i].caps.uuid));
      auto [it, inserted] = uuids.emplace(uuid, i);
      if (!inserted) {
        throw Invalid{Index("devices", i) + ".uuid",
                      "is also the UUID of device '" + p.devices[it->second].id + "' (one UUID is one chip)"};
      }
    }
    const std::string bus = p.devices[i].caps.pci_bus_id;
    if (bus.empty()) continue;
    auto [it, inserted] = buses.emplace(bus, i);
    if (!inserted) {
      throw Invalid{Index("devices", i) + ".pci_bus_id",
                    "'" + bus + "' is also the PCI bus id of device '" + p.devices[it->second].id + "'"};
    }
  }

  std::map<std::string, size_t> nic_index;
  const json& nics = top.Array("nics", false);
  for (size_t i = 0; i < nics.size(); ++i) {
    Object o(nics[i], Index("nics", i));
    NicSpec n;
    n.name = o.String("name", kIdMax, true);
    n.kind = o.NonEmptyString("kind", kIdMax, "ethernet");
    n.pci_bus_id = o.String("pci_bus_id", 12, false);
    if (!n.pci_bus_id.empty() && !IsPciBusId(n.pci_bus_id)) {
      throw Invalid{o.Field("pci_bus_id"), "'" + n.pci_bus_id + "' is not a PCI bus id (dddd:bb:dd.f in hexadecimal)"};
    }
    n.pcie_root = o.String("pcie_root", ACCEL_PCI_BUS_ID_SIZE - 1, false);
    n.pcie_switch = o.NonEmptyString("pcie_switch", kIdMax);
    n.numa_node = o.Integer("numa_node", -1, -1, 4095);
    if (n.numa_node >= 0 && !numa_ids.empty() && !numa_ids.contains(n.numa_node)) {
      throw Invalid{o.Field("numa_node"), "NUMA node " + std::to_string(n.numa_node) + " is not in 'numa_nodes'"};
    }
    o.NoOthers({"comment"});
    if (!nic_index.emplace(n.name, i).second) throw Invalid{o.Field("name"), "duplicate NIC name '" + n.name + "'"};
    p.nics.push_back(std::move(n));
  }

  ReadLinks(top, &p, device_index);
  ReadNicLinks(top, &p, device_index, nic_index);
  ReadDomains(top, node_domain, "node.domain", &p);
  ReadFaults(top, device_index, &p.faults);
  top.NoOthers({"comment", "sources", "$schema"});
  return p;
}

}  // namespace

std::optional<Profile> ParseProfile(std::string_view text, const std::string& source, std::string* error) {
  json document;
  try {
    document = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    *error = source + ": not JSON: byte " + std::to_string(e.byte) + ": " + e.what();
    return std::nullopt;
  } catch (const json::exception& e) {  // out_of_range 406: a number too large for any JSON number type
    *error = source + ": not JSON: " + e.what();
    return std::nullopt;
  }
  try {
    return Read(document);
  } catch (const Invalid& invalid) {
    *error = source + ": " + invalid.field + ": " + invalid.reason;
  } catch (const json::exception& e) {
    *error = source + ": " + e.what();
  }
  return std::nullopt;
}

bool ParseFaults(std::string_view text, FaultSpec* faults, std::string* error) {
  size_t start = 0;
  const std::string all(text);
  while (start < all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    const std::string entry = all.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    const size_t eq = entry.find('=');
    const std::string key = entry.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    auto number = [&](uint64_t* out) {
      auto r = std::from_chars(value.data(), value.data() + value.size(), *out);
      return !value.empty() && r.ec == std::errc() && r.ptr == value.data() + value.size();
    };
    auto probability = [&](double* out) {
      // from_chars, not strtod: "0.5" must not depend on the process's locale (a decimal comma under de_DE).
      double p = -1.0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), p);
      const bool valid =
          !value.empty() && r.ec == std::errc() && r.ptr == value.data() + value.size() && p >= 0.0 && p <= 1.0;
      if (valid) *out = p;
      return valid;
    };
    bool ok = true;
    if (key == "seed") {
      ok = number(&faults->seed);
    } else if (key == "alloc_fail") {
      ok = probability(&faults->allocation_failure_probability);
    } else if (key == "device_lost_after") {
      ok = number(&faults->device_lost_after);
    } else if (key == "stream_error_after") {
      ok = number(&faults->stream_error_after);
    } else if (key == "stream_error") {
      auto s = ErrorStatusNamed(value);
      ok = s.has_value();
      if (ok) faults->stream_error_status = *s;
    } else if (key == "slow_copy") {
      ok = probability(&faults->slow_copy_probability);
    } else if (key == "slow_copy_us") {
      ok = number(&faults->slow_copy_delay_us);
    } else if (key == "devices" || key == "lost_devices") {
      std::vector<std::string>* ids = key == "devices" ? &faults->devices : &faults->lost_devices;
      ids->clear();
      size_t from = 0;
      while (from <= value.size()) {
        size_t plus = value.find('+', from);
        if (plus == std::string::npos) plus = value.size();
        if (plus > from) ids->push_back(value.substr(from, plus - from));
        from = plus + 1;
      }
      ok = !ids->empty();
    } else {
      *error = "ACCEL_SIM_FAULTS: unknown key '" + key +
               "' (known: seed, alloc_fail, device_lost_after, stream_error_after, stream_error, slow_copy, "
               "slow_copy_us, devices, lost_devices)";
      return false;
    }
    if (!ok) {
      *error = "ACCEL_SIM_FAULTS: '" + entry + "' has a bad value";
      return false;
    }
  }
  return true;
}

}  // namespace accel::sim
