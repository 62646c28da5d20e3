#include "generator.h"

#include <algorithm>

#include <fmt/format.h>

namespace accel::planner {

std::vector<NodeSpec> GenerateNodes(const GeneratorSpec& spec) {
  std::vector<NodeSpec> nodes(spec.nodes);
  const uint32_t per_clique = std::max(1u, spec.devices_per_node / std::max(1u, spec.cliques_per_node));
  const uint32_t per_numa = std::max(1u, spec.devices_per_node / std::max(1u, spec.numa_per_node));
  for (uint32_t n = 0; n < spec.nodes; ++n) {
    NodeSpec& node = nodes[n];
    node.id = fmt::format("n{}", n);
    const uint32_t rack = n / std::max(1u, spec.nodes_per_rack);
    node.rack = fmt::format("r{}", rack);
    node.block = fmt::format("b{}", rack / std::max(1u, spec.racks_per_block));
    if (spec.nodes_per_fabric > 0) node.fabric_clique = fmt::format("f{}", n / spec.nodes_per_fabric);
    for (uint32_t j = 0; j < spec.devices_per_node; ++j) {
      DeviceSpec d;
      d.id = fmt::format("gpu{}", j);
      d.clique = fmt::format("nvl{}", j / per_clique);
      d.numa_node = j / per_numa;
      d.pcie_root = fmt::format("pci{}", j);
      d.memory = spec.memory;
      d.attributes.Set("kind", std::string("gpu"));
      d.attributes.Set("sku", std::string("sim-gpu"));
      d.attributes.Set("vendor", std::string("Sim"));
      d.attributes.Set("memory_total", spec.memory);
      d.attributes.Set("numa_node", d.numa_node);
      node.devices.push_back(std::move(d));
    }
  }
  return nodes;
}

}  // namespace accel::planner
