#include "planner.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace accel::planner {
namespace {

constexpr size_t L(Level level) { return static_cast<size_t>(level); }

// The packing level one in from `level`: block > rack > node > clique.
Level Inner(Level level) {
  switch (level) {
    case Level::kBlock: return Level::kRack;
    case Level::kRack: return Level::kNode;
    default: return Level::kClique;
  }
}

// The looser level a preferred PACK falls back to; nullopt: the whole cluster.
std::optional<Level> Outer(Level level) {
  switch (level) {
    case Level::kClique:
    case Level::kPcieRoot:
    case Level::kNuma: return Level::kNode;
    case Level::kNode: return Level::kRack;
    case Level::kRack: return Level::kBlock;
    case Level::kBlock: return std::nullopt;
  }
  return std::nullopt;
}

// The order domains are filled in: those with `need` free first, the one with the least free of them first (best
// fit); then the freest; equal ones by index.
bool FillsBefore(int64_t free_x, uint32_t x, int64_t free_y, uint32_t y, int64_t need) {
  const bool fx = free_x >= need, fy = free_y >= need;
  if (fx != fy) return fx;
  if (free_x != free_y) return fx ? free_x < free_y : free_x > free_y;
  return x < y;
}

std::string Shares(int64_t share) { return fmt::format("{:.2f}", static_cast<double>(share) / kShareUnits); }

}  // namespace

// One Place call's tentative state.
struct Planner::Attempt {
  const PreparedGang* gang = nullptr;
  std::vector<char> placed;  // per unit
  size_t remaining = 0;
  int64_t remaining_share = 0;
  int64_t min_share = 0;     // the smallest unplaced unit's share (units are sorted)
  size_t budget = SIZE_MAX;  // at most this many units per fill
  std::vector<Assignment> taken;
  std::vector<std::vector<char>> matches;  // per selector, per device: 0 unknown, 1 match, 2 miss
};

Planner::Planner(const Cluster& cluster) : cluster_(cluster) {
  free_.reserve(cluster.devices().size());
  for (const Device& d : cluster.devices()) free_.push_back(Free{kShareUnits, d.memory});
  disabled_.assign(free_.size(), false);
  for (Level level : kAllLevels) {
    const auto& domains = cluster.domains(level);
    domain_free_[L(level)].resize(domains.size());
    for (size_t i = 0; i < domains.size(); ++i) {
      const auto share = static_cast<int64_t>(domains[i].devices.size()) * kShareUnits;
      domain_free_[L(level)][i] = share;
      by_free_[L(level)].emplace(share, static_cast<uint32_t>(i));
    }
  }
}

void Planner::Take(uint32_t device, int64_t share, uint64_t memory) {
  free_[device].share -= share;
  free_[device].memory -= memory;
  const Device& d = cluster_.devices()[device];
  for (size_t l = 0; l < kLevelCount; ++l) {
    const uint32_t dom = d.domain[l];
    by_free_[l].erase({domain_free_[l][dom], dom});
    domain_free_[l][dom] -= share;
    by_free_[l].emplace(domain_free_[l][dom], dom);
  }
}

void Planner::Give(uint32_t device, int64_t share, uint64_t memory) { Take(device, -share, 0 - memory); }

bool Planner::Fits(Attempt& a, uint32_t device, const Unit& unit) {
  if (free_[device].share < unit.share || free_[device].memory < unit.memory) return false;
  // The devices of one bundle are distinct devices, whatever their shares.
  for (const Assignment& t : a.taken) {
    if (t.device == device && t.bundle == unit.bundle) return false;
  }
  if (unit.selector < 0) return true;
  auto& cache = a.matches[static_cast<size_t>(unit.selector)];
  if (cache.empty()) cache.assign(free_.size(), 0);
  if (cache[device] == 0) {
    const bool m = a.gang->selectors[static_cast<size_t>(unit.selector)].Matches(cluster_.devices()[device].attributes);
    cache[device] = m ? 1 : 2;
  }
  return cache[device] == 1;
}

void Planner::FillDevices(Attempt& a, const std::vector<uint32_t>& devices, uint32_t node) {
  const auto& units = a.gang->units;
  for (uint32_t d : devices) {
    if (a.remaining == 0 || a.budget == 0) return;
    if (free_[d].share < a.min_share) continue;
    if (node != kAnyNode && cluster_.devices()[d].domain[L(Level::kNode)] != node) continue;
    for (size_t u = 0; u < units.size() && a.budget > 0; ++u) {
      if (a.placed[u] || !Fits(a, d, units[u])) continue;
      Take(d, units[u].share, units[u].memory);
      a.placed[u] = 1;
      --a.remaining;
      --a.budget;
      a.remaining_share -= units[u].share;
      a.taken.push_back(Assignment{units[u].bundle, d, units[u].share, units[u].memory});
    }
    // The smallest unplaced share bounds which devices are worth a look.
    for (size_t u = units.size(); u-- > 0;) {
      if (!a.placed[u]) {
        a.min_share = units[u].share;
        break;
      }
    }
  }
}

void Planner::FillDomain(Attempt& a, Level level, uint32_t domain, uint32_t node) {
  const Domain& dom = cluster_.domains(level)[domain];
  if (level == Level::kClique && node == kAnyNode && dom.nodes.size() > 1) {
    // A fabric clique from above: its nodes' parts best fit first (the smallest that holds the rest), then the
    // freest, so that a gang takes as few nodes as it can inside the fabric.
    std::vector<std::pair<int64_t, uint32_t>> parts;  // (free share in this clique, node domain)
    parts.reserve(dom.nodes.size());
    for (uint32_t n : dom.nodes) parts.emplace_back(0, n);
    // Both in rank order: each node's devices come together, in the order of `nodes`.
    size_t k = 0;
    for (uint32_t d : dom.devices) {
      while (parts[k].second != cluster_.devices()[d].domain[L(Level::kNode)]) ++k;
      parts[k].first += free_[d].share;
    }
    std::sort(parts.begin(), parts.end(), [&](const auto& x, const auto& y) {
      return FillsBefore(x.first, x.second, y.first, y.second, a.remaining_share);
    });
    for (const auto& [free_share, n] : parts) {
      if (a.remaining == 0 || a.budget == 0) return;
      if (free_share >= a.min_share) FillDevices(a, dom.devices, n);
    }
    return;
  }
  if (level == Level::kClique || level == Level::kPcieRoot || level == Level::kNuma) {
    FillDevices(a, dom.devices, node);
    return;
  }
  const Level inner = Inner(level);
  const auto& free = domain_free_[L(inner)];
  // Best fit first (the smallest child that holds the rest), then the freest.
  std::vector<uint32_t> order(dom.children);
  std::sort(order.begin(), order.end(),
            [&](uint32_t x, uint32_t y) { return FillsBefore(free[x], x, free[y], y, a.remaining_share); });
  for (uint32_t child : order) {
    if (a.remaining == 0 || a.budget == 0) return;
    if (free[child] < a.min_share) continue;
    // A node's cliques are filled with its own devices only (a fabric clique has other nodes' too).
    FillDomain(a, inner, child, level == Level::kNode ? domain : node);
  }
}

void Planner::FillCluster(Attempt& a) {
  const auto& free = domain_free_[L(Level::kBlock)];
  std::vector<uint32_t> order(cluster_.blocks());
  std::sort(order.begin(), order.end(),
            [&](uint32_t x, uint32_t y) { return FillsBefore(free[x], x, free[y], y, a.remaining_share); });
  for (uint32_t block : order) {
    if (a.remaining == 0) return;
    if (free[block] >= a.min_share) FillDomain(a, Level::kBlock, block, kAnyNode);
  }
}

void Planner::Rollback(Attempt& a) {
  for (const Assignment& t : a.taken) Give(t.device, t.share, t.memory);
  a.taken.clear();
  std::fill(a.placed.begin(), a.placed.end(), 0);
  a.remaining = a.placed.size();
  a.remaining_share = a.gang->total_share;
  a.min_share = a.gang->units.back().share;
  a.budget = SIZE_MAX;
}

bool Planner::TryPack(Attempt& a, Level level) {
  auto& set = by_free_[L(level)];
  for (auto it = set.lower_bound({a.gang->total_share, 0}); it != set.end();) {
    const auto key = *it;
    FillDomain(a, level, key.second, kAnyNode);
    if (a.remaining == 0) return true;
    Rollback(a);
    it = set.upper_bound(key);
  }
  return false;
}

bool Planner::TrySpread(Attempt& a, Level level, bool strict) {
  auto& set = by_free_[L(level)];
  std::vector<char> used(cluster_.domains(level).size(), 0);
  // Freest domain first, one unit per domain.
  auto it = set.end();
  while (a.remaining > 0 && it != set.begin()) {
    --it;
    const auto key = *it;
    if (key.first < a.min_share) break;
    if (!used[key.second]) {
      used[key.second] = 1;
      a.budget = 1;
      FillDomain(a, level, key.second, kAnyNode);
      a.budget = SIZE_MAX;
    }
    it = set.lower_bound(key);
  }
  if (a.remaining == 0) return true;
  if (strict) return false;
  FillCluster(a);
  return a.remaining == 0;
}

Expected<Placement> Planner::Place(const Gang& gang) {
  auto prepared = Prepare(gang);
  if (!prepared) return prepared.error();
  const PreparedGang& g = prepared.value();
  Attempt a;
  a.gang = &g;
  a.placed.assign(g.units.size(), 0);
  a.matches.resize(g.selectors.size());
  Rollback(a);  // initialises the counters

  bool ok = false;
  std::string why;
  const std::string level = std::string(LevelName(gang.level));
  auto pack_preferred = [&]() {
    for (std::optional<Level> l = gang.level; l; l = Outer(*l)) {
      if (TryPack(a, *l)) return true;
    }
    FillCluster(a);
    return a.remaining == 0;
  };
  switch (gang.strategy) {
    case Strategy::kPack: ok = pack_preferred(); break;
    case Strategy::kStrictPack:
      ok = TryPack(a, gang.level);
      if (!ok) {
        int64_t freest = by_free_[L(gang.level)].empty() ? 0 : by_free_[L(gang.level)].rbegin()->first;
        why = fmt::format(
            "STRICT_PACK at {}: no single {} can hold the gang ({} devices, share {}; the freest {} has {} free)",
            level, level, g.units.size(), Shares(g.total_share), level, Shares(freest));
        if (!gang.required) ok = pack_preferred();
      }
      break;
    case Strategy::kStrictSpread:
      ok = TrySpread(a, gang.level, true);
      if (!ok) {
        const size_t got = g.units.size() - a.remaining;
        Rollback(a);
        why = fmt::format("STRICT_SPREAD at {}: the gang needs {} distinct {} domains with room; only {} found", level,
                          g.units.size(), level, got);
        if (!gang.required) ok = TrySpread(a, gang.level, false);
      }
      break;
    case Strategy::kSpread: ok = TrySpread(a, gang.level, false); break;
  }
  if (!ok) {
    Rollback(a);
    if (why.empty() || !gang.required) {
      int64_t total = 0;
      for (const Free& f : free_) total += f.share;
      why = fmt::format("capacity: the gang needs {} device{} with share {} in all; the cluster has {} free",
                        g.units.size(), g.units.size() == 1 ? "" : "s", Shares(g.total_share), Shares(total));
      if (total >= g.total_share) why += " but not on devices that fit every bundle (share, memory, selector)";
    }
    return Error{why};
  }
  Placement p;
  p.id = next_id_++;
  p.assignments = std::move(a.taken);
  std::sort(p.assignments.begin(), p.assignments.end(), [](const Assignment& x, const Assignment& y) {
    return x.device != y.device ? x.device < y.device : x.bundle < y.bundle;
  });
  held_.emplace(p.id, p.assignments);
  return p;
}

Expected<bool> Planner::Release(uint64_t id) {
  auto it = held_.find(id);
  if (it == held_.end()) return Error{fmt::format("release: placement {} is not held", id)};
  for (const Assignment& t : it->second) {
    if (disabled_[t.device]) continue;
    if (reserved(t.device)) {
      aside_[t.device].share += t.share;
      aside_[t.device].memory += t.memory;
      continue;
    }
    Give(t.device, t.share, t.memory);
  }
  held_.erase(it);
  return true;
}

void Planner::Disable(uint32_t rank) {
  if (rank >= free_.size() || disabled_[rank]) return;
  if (reserved(rank)) aside_[rank] = {};  // what was set aside is lost with the device
  disabled_[rank] = true;
  Take(rank, free_[rank].share, free_[rank].memory);
}

void Planner::Reserve(uint32_t rank) {
  if (rank >= free_.size() || disabled_[rank] || reserved(rank)) return;
  if (aside_.empty()) aside_.resize(free_.size());
  aside_[rank] = {true, free_[rank].share, free_[rank].memory};
  Take(rank, free_[rank].share, free_[rank].memory);
}

void Planner::Unreserve(uint32_t rank) {
  if (!reserved(rank)) return;
  const Aside a = std::exchange(aside_[rank], {});
  if (!disabled_[rank]) Give(rank, a.share, a.memory);
}

}  // namespace accel::planner
