// libFuzzer target for cluster files and topology descriptions as the planner
// reads them (core/planner/cluster_file.h): any text either builds a cluster
// or is rejected with "<source>: <field>: <reason>". A cluster that builds is
// consistent (every device in one domain per level, every domain's devices
// real ones), and writing it back out as a cluster file and reading that
// again gives the same cluster (parse -> serialize -> parse).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "cluster_file.h"

namespace {

using nlohmann::json;

json AttributeValue(const accel::selector::Value& value) {
  if (const auto* u = std::get_if<uint64_t>(&value)) return *u;
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::get<accel::selector::NameSet>(value).names;
}

// The cluster as a cluster file (docs/planner.md, "Cluster file").
std::string Serialize(const accel::planner::Cluster& cluster) {
  json nodes = json::array();
  for (const auto& node : cluster.nodes()) {
    json n = {{"format_version", "1.0"}, {"node", {{"id", node.id}}}, {"domains", json::array()}};
    if (!node.rack.empty()) n["domains"].push_back({{"level", "rack"}, {"id", node.rack}});
    if (!node.block.empty()) n["domains"].push_back({{"level", "block"}, {"id", node.block}});
    json devices = json::array();
    for (const auto& d : node.devices) {
      json dev = json::object();
      for (const auto& [key, value] : d.attributes.values()) dev[key] = AttributeValue(value);
      dev["id"] = d.id;
      dev["memory"] = d.memory;
      dev["numa_node"] = d.numa_node;
      if (!d.clique.empty()) dev["clique"] = d.clique;
      if (!d.pcie_root.empty()) dev["pcie_root"] = d.pcie_root;
      devices.push_back(std::move(dev));
    }
    n["devices"] = std::move(devices);
    nodes.push_back(std::move(n));
  }
  return json{{"format_version", "1.0"}, {"nodes", std::move(nodes)}}.dump();
}

void CheckConsistent(const accel::planner::Cluster& cluster) {
  size_t device_count = 0;
  for (const auto& node : cluster.nodes()) device_count += node.devices.size();
  if (cluster.devices().size() != device_count) __builtin_trap();
  for (const auto& device : cluster.devices()) {
    if (device.node >= cluster.nodes().size()) __builtin_trap();
    for (size_t l = 0; l < accel::planner::kLevelCount; ++l) {
      if (device.domain[l] >= cluster.domains(accel::planner::kAllLevels[l]).size()) __builtin_trap();
    }
  }
  for (auto level : accel::planner::kAllLevels) {
    for (const auto& domain : cluster.domains(level)) {
      for (uint32_t d : domain.devices) {
        if (d >= cluster.devices().size()) __builtin_trap();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cluster = accel::planner::ParseCluster(text, "fuzz.json");
  if (!cluster) {
    if (cluster.error().message.rfind("fuzz.json: ", 0) != 0) __builtin_trap();  // names the source
    return 0;
  }
  CheckConsistent(cluster.value());
  const std::string once = Serialize(cluster.value());
  auto again = accel::planner::ParseCluster(once, "again.json");
  if (!again) __builtin_trap();  // what was read can be written and read back
  CheckConsistent(again.value());
  if (Serialize(again.value()) != once) __builtin_trap();
  return 0;
}
