#include "cluster_file.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace accel::planner {
namespace {

using nlohmann::json;

// A field error, carried out of the nested readers.
struct FieldError {
  std::string field;
  std::string reason;
};

std::string TypeName(const json& v) {
  if (v.is_number_unsigned()) return "an unsigned integer";
  if (v.is_number_integer()) return "a negative integer";
  if (v.is_number()) return "a number";
  return std::string(v.is_string()    ? "a string"
                     : v.is_object()  ? "an object"
                     : v.is_array()   ? "an array"
                     : v.is_boolean() ? "a boolean"
                                      : "null");
}

const json* Field(const json& obj, const char* key, const std::string& path, bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) throw FieldError{path + key, "missing (required)"};
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> String(const json& obj, const char* key, const std::string& path, bool required) {
  const json* v = Field(obj, key, path, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw FieldError{path + key, "expected a string, got " + TypeName(*v)};
  return v->get<std::string>();
}

std::optional<uint64_t> Unsigned(const json& obj, const char* key, const std::string& path, bool required) {
  const json* v = Field(obj, key, path, required);
  if (!v) return std::nullopt;
  if (!v->is_number_unsigned()) throw FieldError{path + key, "expected an unsigned integer, got " + TypeName(*v)};
  return v->get<uint64_t>();
}

std::optional<selector::NameSet> Names(const json& obj, const char* key, const std::string& path) {
  const json* v = Field(obj, key, path, false);
  if (!v) return std::nullopt;
  if (!v->is_array()) throw FieldError{path + key, "expected an array of strings, got " + TypeName(*v)};
  selector::NameSet set;
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      throw FieldError{fmt::format("{}{}[{}]", path, key, i), "expected a string, got " + TypeName((*v)[i])};
    }
    set.names.push_back((*v)[i].get<std::string>());
  }
  return set;
}

void CheckVersion(const json& obj, const std::string& path) {
  const std::optional<std::string> version = String(obj, "format_version", path, true);  // required: never empty
  const std::string v = version.value_or("");
  if (v != "1" && v.rfind("1.", 0) != 0) throw FieldError{path + "format_version", "'" + v + "' is not 1.x"};
}

DeviceSpec ReadDevice(const json& d, const std::string& path) {
  if (!d.is_object()) throw FieldError{path.substr(0, path.size() - 1), "expected an object, got " + TypeName(d)};
  DeviceSpec dev;
  dev.id = *String(d, "id", path, true);
  if (dev.id.empty()) throw FieldError{path + "id", "empty"};
  dev.memory = *Unsigned(d, "memory", path, true);
  auto& a = dev.attributes;
  for (const char* key : {"kind", "name", "vendor", "sku"}) a.Set(key, *String(d, key, path, true));
  a.Set("compute_units", *Unsigned(d, "compute_units", path, true));
  a.Set("memory_total", dev.memory);
  a.Set("physical_device_id", dev.id);
  for (const char* key : {"architecture", "uuid", "pci_bus_id"}) {
    if (auto v = String(d, key, path, false)) a.Set(key, *v);
  }
  for (const char* key : {"vendor_id", "device_id", "clock_mhz", "subgroup_size"}) {
    if (auto v = Unsigned(d, key, path, false)) a.Set(key, *v);
  }
  for (const char* key : {"numeric_formats", "kernel_formats", "features"}) {
    a.Set(key, Names(d, key, path).value_or(selector::NameSet{}));
  }
  if (const json* numa = Field(d, "numa_node", path, false)) {
    if (!numa->is_number_integer()) throw FieldError{path + "numa_node", "expected an integer, got " + TypeName(*numa)};
    // -1 (unknown) to 65535: 2^64 - 1 read as int64_t was -1 and passed as unknown, as did any negative value.
    const bool in_range = numa->is_number_unsigned() ? numa->get<uint64_t>() <= 65535
                                                     : numa->get<int64_t>() >= -1 && numa->get<int64_t>() <= 65535;
    if (!in_range) throw FieldError{path + "numa_node", numa->dump() + " is outside -1..65535"};
    dev.numa_node = numa->get<int64_t>();
  }
  a.Set("numa_node", dev.numa_node);
  dev.clique = String(d, "clique", path, false).value_or("");
  dev.pcie_root = String(d, "pcie_root", path, false).value_or("");
  return dev;
}

NodeSpec ReadNode(const json& desc, const std::string& path, size_t index) {
  if (!desc.is_object()) throw FieldError{path.substr(0, path.size() - 1), "expected an object, got " + TypeName(desc)};
  CheckVersion(desc, path);
  NodeSpec node;
  if (const json* n = Field(desc, "node", path, false)) {
    if (!n->is_object()) throw FieldError{path + "node", "expected an object, got " + TypeName(*n)};
    node.id = String(*n, "id", path + "node.", false).value_or("");
  }
  if (node.id.empty()) node.id = String(desc, "name", path, false).value_or(fmt::format("node{}", index));
  if (const json* domains = Field(desc, "domains", path, false)) {
    if (!domains->is_array()) throw FieldError{path + "domains", "expected an array, got " + TypeName(*domains)};
    for (size_t i = 0; i < domains->size(); ++i) {
      const std::string p = fmt::format("{}domains[{}].", path, i);
      const json& dom = (*domains)[i];
      if (!dom.is_object()) throw FieldError{p.substr(0, p.size() - 1), "expected an object, got " + TypeName(dom)};
      const std::string level = *String(dom, "level", p, true);
      const std::string id = *String(dom, "id", p, true);
      // An empty id was ignored (the node then had no such domain), a level given twice kept the last.
      if (id.empty()) throw FieldError{p + "id", "empty"};
      std::string* slot = level == "rack"    ? &node.rack
                          : level == "block" ? &node.block
                          : level == "clique"
                              ? &node.fabric_clique  // a clique spanning nodes (docs/planner.md, "Model")
                              : nullptr;
      if (slot != nullptr && !slot->empty()) {
        throw FieldError{p + "level", "'" + level + "' is given twice for this node"};
      }
      if (slot != nullptr) *slot = id;
    }
  }
  const json& devices = *Field(desc, "devices", path, true);
  if (!devices.is_array()) throw FieldError{path + "devices", "expected an array, got " + TypeName(devices)};
  for (size_t i = 0; i < devices.size(); ++i) {
    node.devices.push_back(ReadDevice(devices[i], fmt::format("{}devices[{}].", path, i)));
  }
  return node;
}

}  // namespace

Expected<Cluster> ParseCluster(std::string_view text, std::string_view source) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again for the position and the parser's reason.
    try {
      const json again = json::parse(text);
      (void)again;
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number such as 1e999
      return Error{fmt::format("{}: not valid JSON: {}", source, e.what())};
    }
    return Error{fmt::format("{}: not valid JSON", source)};
  }
  return ParseClusterDocument(doc, source);
}

Expected<Cluster> ParseClusterDocument(const json& doc, std::string_view source) {
  std::vector<NodeSpec> nodes;
  try {
    if (!doc.is_object()) throw FieldError{"(top level)", "expected an object, got " + TypeName(doc)};
    if (doc.contains("devices")) {
      nodes.push_back(ReadNode(doc, "", 0));  // one topology description: a one-node cluster
    } else {
      CheckVersion(doc, "");
      const json& list = *Field(doc, "nodes", "", true);
      if (!list.is_array()) throw FieldError{"nodes", "expected an array, got " + TypeName(list)};
      for (size_t i = 0; i < list.size(); ++i) nodes.push_back(ReadNode(list[i], fmt::format("nodes[{}].", i), i));
    }
  } catch (const FieldError& e) {
    return Error{fmt::format("{}: {}: {}", source, e.field, e.reason)};
  } catch (const json::exception& e) {
    return Error{fmt::format("{}: {}", source, e.what())};
  }
  auto cluster = Cluster::Build(std::move(nodes));
  if (!cluster) return Error{fmt::format("{}: {}", source, cluster.error().message)};
  return cluster;
}

Expected<Cluster> LoadCluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("{}: cannot open", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCluster(ss.str(), path);
}

}  // namespace accel::planner
