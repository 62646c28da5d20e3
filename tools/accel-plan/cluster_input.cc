#include "cluster_input.h"

#include <fmt/format.h>

#include <charconv>

#include "cluster_file.h"
#include "gangs_file.h"
#include "json_text.h"

namespace accel::plan {
namespace {

using planner::Error;
using planner::Expected;

// A positive decimal count, at most `max`.
Expected<uint32_t> Count(std::string_view item, std::string_view text, uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Error{fmt::format("--generate: {}: '{}' is not a count (digits)", item, text)};
  }
  if (value == 0 || value > max) {
    return Error{fmt::format("--generate: {}: {} is out of range (must be in [1, {}])", item, value, max)};
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

Expected<planner::Cluster> LoadClusterInput(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text) return text.error();
  // Parsed here first: to recognise the accel-info documents, and so that no
  // parser exception can escape planner::ParseCluster.
  auto doc = ParseJsonText(text.value(), path);
  if (!doc) return doc.error();
  const nlohmann::json& d = doc.value();
  if (d.is_object() && d.contains("topology") && d.contains("physical_devices")) {
    return planner::ParseClusterDocument(d["topology"], path + ": topology");  // a whole `accel-info --json`
  }
  if (d.is_object() && d.contains("schema_version") && d.contains("links") && !d.contains("format_version")) {
    return Error{fmt::format(
        "{}: this is `accel-info topo --json` output (the link matrix); give a topology description instead: "
        "`accel-info --json` output, its \"topology\" member, or a sim profile",
        path)};
  }
  return planner::ParseCluster(text.value(), path);
}

Expected<planner::GeneratorSpec> ParseGenerateSpec(std::string_view text) {
  planner::GeneratorSpec spec;
  const size_t comma = text.find(',');
  const std::string_view shape = text.substr(0, comma);
  const size_t x = shape.find('x');
  if (x == std::string_view::npos) {
    return Error{fmt::format("--generate: '{}' is not NODESxDEVICES (such as 64x8)", shape)};
  }
  auto nodes = Count("NODES", shape.substr(0, x), kMaxGeneratedDevices);
  if (!nodes) return nodes.error();
  auto devices = Count("DEVICES", shape.substr(x + 1), kMaxGeneratedDevices);
  if (!devices) return devices.error();
  spec.nodes = nodes.value();
  spec.devices_per_node = devices.value();
  spec.numa_per_node = spec.devices_per_node % 2 == 0 ? 2 : 1;
  if (uint64_t{spec.nodes} * spec.devices_per_node > kMaxGeneratedDevices) {
    return Error{fmt::format("--generate: {}: {} devices in all (at most {})", shape,
                             uint64_t{spec.nodes} * spec.devices_per_node, kMaxGeneratedDevices)};
  }
  std::string_view rest = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  while (comma != std::string_view::npos) {
    const size_t next = rest.find(',');
    const std::string_view item = rest.substr(0, next);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Error{fmt::format("--generate: '{}' is not key=value (cliques, numa, rack, block, fabric, memory)", item)};
    }
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (key == "memory") {
      auto bytes = ParseBytes(value);
      if (!bytes) return Error{fmt::format("--generate: memory: {}", bytes.error().message)};
      spec.memory = bytes.value();
    } else {
      uint32_t* field = key == "cliques"  ? &spec.cliques_per_node
                        : key == "numa"   ? &spec.numa_per_node
                        : key == "rack"   ? &spec.nodes_per_rack
                        : key == "block"  ? &spec.racks_per_block
                        : key == "fabric" ? &spec.nodes_per_fabric
                                          : nullptr;
      if (!field) {
        return Error{fmt::format("--generate: '{}' is not a key (cliques, numa, rack, block, fabric, memory)", key)};
      }
      auto n = Count(key, value, kMaxGeneratedDevices);
      if (!n) return n.error();
      *field = n.value();
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  if (spec.cliques_per_node > spec.devices_per_node || spec.devices_per_node % spec.cliques_per_node != 0) {
    return Error{fmt::format("--generate: cliques: {} cliques do not split {} devices evenly", spec.cliques_per_node,
                             spec.devices_per_node)};
  }
  if (spec.numa_per_node > spec.devices_per_node || spec.devices_per_node % spec.numa_per_node != 0) {
    return Error{fmt::format("--generate: numa: {} NUMA nodes do not split {} devices evenly", spec.numa_per_node,
                             spec.devices_per_node)};
  }
  return spec;
}

}  // namespace accel::plan
