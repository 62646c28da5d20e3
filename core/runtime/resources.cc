// The resource model, from libaccel's public API.
#include "resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "capabilities.h"

namespace accel::runtime {

namespace {

std::string Field(const char* text, size_t size) { return std::string(text, strnlen(text, size)); }

planner::Error ApiError(const char* what) { return planner::Error{fmt::format("{}: {}", what, accel_last_error())}; }

}  // namespace

planner::Expected<Resources> ReadResources(accel_instance_t instance) {
  uint32_t count = 0;
  if (accel_instance_enumerate_physical_devices(instance, &count, nullptr) != ACCEL_SUCCESS) {
    return ApiError("reading the physical devices");
  }
  std::vector<accel_physical_device_t> physical(count);
  if (count > 0 && accel_instance_enumerate_physical_devices(instance, &count, physical.data()) != ACCEL_SUCCESS) {
    return ApiError("reading the physical devices");
  }

  planner::NodeSpec node;
  node.id = "local";
  std::vector<Resource> resources;
  for (accel_physical_device_t p : physical) {
    accel_physical_device_properties_t props{};
    props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
    props.struct_size = sizeof(props);
    uint32_t paths = 0;
    if (accel_physical_device_get_properties(p, &props) != ACCEL_SUCCESS ||
        accel_physical_device_enumerate_devices(p, &paths, nullptr) != ACCEL_SUCCESS || paths == 0) {
      return ApiError("reading a physical device");
    }
    std::vector<accel_device_t> devices(paths);
    if (accel_physical_device_enumerate_devices(p, &paths, devices.data()) != ACCEL_SUCCESS) {
      return ApiError("reading a physical device's access paths");
    }
    planner::DeviceSpec spec;
    spec.id = Field(props.stable_id, sizeof(props.stable_id));
    spec.numa_node = props.numa_node;
    for (size_t i = 0; i < devices.size(); ++i) {
      accel_device_capabilities_t caps{};
      caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
      caps.struct_size = sizeof(caps);
      if (accel_device_get_capabilities(devices[i], &caps) != ACCEL_SUCCESS) {
        return ApiError("reading an access path's capabilities");
      }
      if (i == 0) {
        spec.attributes = selector::CapabilityAttributes(caps);
      } else {
        selector::MergeAccessPath(spec.attributes, caps);
      }
    }
    spec.attributes.Set("stable_id", spec.id);
    spec.attributes.Set("physical_device_id", spec.id);
    spec.attributes.Set("memory_total", props.memory_total);
    spec.attributes.Set("compute_units", uint64_t{props.compute_units});

    // Topology of the first access path: PCIe root, and the domains.
    accel_device_topology_t topo{};
    topo.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
    topo.struct_size = sizeof(topo);
    if (accel_device_get_topology(devices[0], &topo) == ACCEL_SUCCESS) {
      spec.pcie_root = Field(topo.pcie_root, sizeof(topo.pcie_root));
      if (spec.numa_node < 0) spec.numa_node = topo.numa_node;
      for (uint32_t d = 0; d < topo.domain_count; ++d) {
        accel_domain_t domain{};
        domain.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
        domain.struct_size = sizeof(domain);
        if (accel_device_get_domain(devices[0], d, &domain) != ACCEL_SUCCESS) continue;
        const std::string id = Field(domain.id, sizeof(domain.id));
        switch (domain.level) {
          case ACCEL_DOMAIN_LEVEL_CLIQUE: spec.clique = id; break;
          case ACCEL_DOMAIN_LEVEL_NODE: node.id = id.empty() ? node.id : id; break;
          case ACCEL_DOMAIN_LEVEL_RACK: node.rack = id; break;
          case ACCEL_DOMAIN_LEVEL_BLOCK: node.block = id; break;
          default: break;
        }
      }
    }

    accel_memory_usage_t usage{};
    usage.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
    usage.struct_size = sizeof(usage);
    uint64_t memory = props.memory_total;
    if (accel_physical_device_get_memory_usage(p, &usage) == ACCEL_SUCCESS && usage.limit != ACCEL_MEMORY_UNLIMITED) {
      memory = std::min(memory, usage.limit);
    }
    spec.memory = memory;

    Resource r;
    r.physical = p;
    r.path = devices[0];
    r.id = spec.id;
    r.label = fmt::format("physical device {} ({})", props.index, Field(props.name, sizeof(props.name)));
    r.memory = memory;
    resources.push_back(std::move(r));
    node.devices.push_back(std::move(spec));
  }

  auto cluster = planner::Cluster::Build({node});
  if (!cluster) return cluster.error();
  Resources out;
  out.cluster = std::make_unique<planner::Cluster>(std::move(cluster).value());
  // The cluster orders devices by rank (clique first); index the resources the same way.
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < resources.size(); ++i) by_id[resources[i].id] = i;
  for (const planner::Device& d : out.cluster->devices()) out.devices.push_back(resources[by_id.at(d.id)]);
  return out;
}

}  // namespace accel::runtime
