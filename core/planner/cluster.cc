#include "cluster.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace accel::planner {
namespace {

// Interns the domains of one level by key; a new one is shown as `id`.
class Interner {
 public:
  explicit Interner(std::vector<Domain>* domains) : domains_(domains) {}
  uint32_t Get(const std::string& key, const std::string& id) {
    auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(domains_->size()));
    if (inserted) domains_->push_back(Domain{id, {}, {}});
    return it->second;
  }

 private:
  std::vector<Domain>* domains_;
  std::unordered_map<std::string, uint32_t> index_;
};

// A domain's key: a tag ('u' an id the input gave, 's' one made up for a device or node without it, 'f' a fabric
// clique) and each part with its length. The display ids joined parts with '/' and made up ids with '~': node "a/b"
// with clique "c" and node "a" with clique "b/c" were one clique, and a rack named "~node:n1" was node n1's own rack,
// so a gang that must stay in one domain was placed across two.
std::string Key(char tag, std::initializer_list<std::string_view> parts) {
  std::string key(1, tag);
  for (std::string_view part : parts) key += fmt::format("{}:{}", part.size(), part);
  return key;
}

void AddChild(Domain& parent, uint32_t child) {
  if (std::find(parent.children.begin(), parent.children.end(), child) == parent.children.end()) {
    parent.children.push_back(child);
  }
}

}  // namespace

Expected<Cluster> Cluster::Build(std::vector<NodeSpec> nodes) {
  Cluster c;
  std::unordered_map<std::string, size_t> node_ids;
  std::map<std::string, std::pair<std::string, size_t>> rack_block;  // rack -> (block, first node)
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeSpec& node = nodes[n];
    if (node.id.empty()) return Error{fmt::format("nodes[{}].id: empty", n)};
    if (auto [it, ok] = node_ids.emplace(node.id, n); !ok) {
      return Error{fmt::format("nodes[{}].id: duplicate '{}' (also nodes[{}])", n, node.id, it->second)};
    }
    std::unordered_map<std::string, size_t> device_ids;
    for (size_t d = 0; d < node.devices.size(); ++d) {
      const std::string& id = node.devices[d].id;
      if (id.empty()) return Error{fmt::format("nodes[{}].devices[{}].id: empty", n, d)};
      if (!device_ids.emplace(id, d).second) {
        return Error{fmt::format("nodes[{}].devices[{}].id: duplicate '{}' in node '{}'", n, d, id, node.id)};
      }
    }
    if (node.fabric_clique.find('/') != std::string::npos) {
      return Error{fmt::format("nodes[{}].fabric_clique: '{}' has a '/' (node-local clique ids are <node>/<clique>)", n,
                               node.fabric_clique)};
    }
    if (!node.rack.empty()) {
      auto [it, ok] = rack_block.try_emplace(node.rack, node.block, n);
      if (!ok && it->second.first != node.block) {
        return Error{fmt::format("nodes[{}].block: rack '{}' is in block '{}' here but in '{}' in nodes[{}]", n,
                                 node.rack, node.block, it->second.first, it->second.second)};
      }
    }
  }

  std::array<Interner, kLevelCount> interners = {Interner(&c.domains_[0]), Interner(&c.domains_[1]),
                                                 Interner(&c.domains_[2]), Interner(&c.domains_[3]),
                                                 Interner(&c.domains_[4]), Interner(&c.domains_[5])};
  auto at = [](Level l) { return static_cast<size_t>(l); };
  for (size_t n = 0; n < nodes.size(); ++n) {
    const NodeSpec& node = nodes[n];
    // Rank within the node: clique id, then position.
    std::vector<uint32_t> order(node.devices.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return node.devices[a].clique < node.devices[b].clique; });
    const std::string rack = node.rack.empty() ? "~node:" + node.id : node.rack;
    const std::string block = node.block.empty() ? "~rack:" + rack : node.block;
    const std::string rack_key = node.rack.empty() ? Key('s', {node.id}) : Key('u', {node.rack});
    const std::string block_key = node.block.empty() ? Key('s', {rack_key}) : Key('u', {node.block});
    for (uint32_t i : order) {
      const DeviceSpec& spec = node.devices[i];
      Device dev;
      dev.id = spec.id;
      dev.node = static_cast<uint32_t>(n);
      dev.index = i;
      dev.memory = spec.memory;
      dev.attributes = spec.attributes;
      const std::string prefix = node.id + "/";
      dev.domain[at(Level::kClique)] =
          spec.clique.empty() ? interners[at(Level::kClique)].Get(Key('s', {node.id, spec.id}), prefix + "~" + spec.id)
          : node.fabric_clique.empty()
              ? interners[at(Level::kClique)].Get(Key('u', {node.id, spec.clique}), prefix + spec.clique)
              : interners[at(Level::kClique)].Get(Key('f', {node.fabric_clique}), node.fabric_clique);
      dev.domain[at(Level::kPcieRoot)] =
          spec.pcie_root.empty()
              ? interners[at(Level::kPcieRoot)].Get(Key('s', {node.id, spec.id}), prefix + "~" + spec.id)
              : interners[at(Level::kPcieRoot)].Get(Key('u', {node.id, spec.pcie_root}), prefix + spec.pcie_root);
      const std::string numa = fmt::format("numa{}", spec.numa_node);
      dev.domain[at(Level::kNuma)] =
          spec.numa_node < 0 ? interners[at(Level::kNuma)].Get(Key('s', {node.id, spec.id}), prefix + "~" + spec.id)
                             : interners[at(Level::kNuma)].Get(Key('u', {node.id, numa}), prefix + numa);
      dev.domain[at(Level::kNode)] = interners[at(Level::kNode)].Get(Key('u', {node.id}), node.id);
      dev.domain[at(Level::kRack)] = interners[at(Level::kRack)].Get(rack_key, rack);
      dev.domain[at(Level::kBlock)] = interners[at(Level::kBlock)].Get(block_key, block);
      const auto rank = static_cast<uint32_t>(c.devices_.size());
      for (size_t l = 0; l < kLevelCount; ++l) c.domains_[l][dev.domain[l]].devices.push_back(rank);
      Domain& clique = c.domains_[at(Level::kClique)][dev.domain[at(Level::kClique)]];
      if (clique.nodes.empty() || clique.nodes.back() != dev.domain[at(Level::kNode)]) {
        clique.nodes.push_back(dev.domain[at(Level::kNode)]);
      }
      AddChild(c.domains_[at(Level::kNode)][dev.domain[at(Level::kNode)]], dev.domain[at(Level::kClique)]);
      AddChild(c.domains_[at(Level::kRack)][dev.domain[at(Level::kRack)]], dev.domain[at(Level::kNode)]);
      AddChild(c.domains_[at(Level::kBlock)][dev.domain[at(Level::kBlock)]], dev.domain[at(Level::kRack)]);
      if (std::find(c.blocks_.begin(), c.blocks_.end(), dev.domain[at(Level::kBlock)]) == c.blocks_.end()) {
        c.blocks_.push_back(dev.domain[at(Level::kBlock)]);
      }
      c.devices_.push_back(std::move(dev));
    }
  }
  c.nodes_ = std::move(nodes);
  return c;
}

}  // namespace accel::planner
