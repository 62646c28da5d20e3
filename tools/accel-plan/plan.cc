#include "plan.h"

#include <algorithm>

#include "planner.h"

namespace accel::plan {
namespace {

// The freest domains of `level` with the planner's free capacity now.
std::vector<DomainRoom> Freest(const planner::Cluster& cluster, const planner::Planner& planner, planner::Level level) {
  const auto& domains = cluster.domains(level);
  std::vector<DomainRoom> rooms(domains.size());
  for (uint32_t i = 0; i < domains.size(); ++i) {
    rooms[i].domain = i;
    for (uint32_t rank : domains[i].devices) {
      rooms[i].free_share += planner.free()[rank].share;
      rooms[i].devices_with_room += planner.free()[rank].share > 0;
    }
  }
  const size_t listed = std::min(rooms.size(), kFreestListed);
  std::partial_sort(rooms.begin(), rooms.begin() + static_cast<std::ptrdiff_t>(listed), rooms.end(),
                    [](const DomainRoom& a, const DomainRoom& b) {
                      return a.free_share != b.free_share ? a.free_share > b.free_share : a.domain < b.domain;
                    });
  rooms.resize(listed);
  return rooms;
}

}  // namespace

PlanOutcome Plan(const planner::Cluster& cluster, const std::vector<GangRequest>& gangs, bool explain) {
  planner::Planner planner(cluster);
  PlanOutcome out;
  out.gangs.resize(gangs.size());
  for (size_t i = 0; i < gangs.size(); ++i) {
    GangOutcome& o = out.gangs[i];
    for (size_t earlier : gangs[i].release) {
      const GangOutcome& e = out.gangs[earlier];
      if (e.placed) (void)planner.Release(e.placement.id);  // held: ParseGangs releases each gang once
      o.released.push_back(earlier);
    }
    auto placed = planner.Place(gangs[i].gang);
    if (placed) {
      o.placed = true;
      o.placement = std::move(placed.value());
    } else {
      o.reason = placed.error().message;
      if (explain) {
        o.freest = Freest(cluster, planner, gangs[i].gang.level);
        o.domains_at_level = cluster.domains(gangs[i].gang.level).size();
      }
    }
  }
  out.free = planner.free();
  return out;
}

std::vector<uint32_t> DomainsUsed(const planner::Cluster& cluster, const planner::Placement& placement,
                                  planner::Level level) {
  std::vector<uint32_t> used;
  std::vector<char> seen(cluster.domains(level).size(), 0);
  for (const planner::Assignment& a : placement.assignments) {
    const uint32_t d = cluster.devices()[a.device].domain[static_cast<size_t>(level)];
    if (!seen[d]) used.push_back(d);
    seen[d] = 1;
  }
  return used;
}

Usage Summarise(const planner::Cluster& cluster, const PlanOutcome& outcome) {
  Usage u;
  for (size_t rank = 0; rank < outcome.free.size(); ++rank) {
    const planner::Free& f = outcome.free[rank];
    u.free_share += f.share;
    u.devices_in_use += f.share < planner::kShareUnits || f.memory < cluster.devices()[rank].memory;
  }
  return u;
}

double ShareValue(int64_t share) { return static_cast<double>(share) / static_cast<double>(planner::kShareUnits); }

}  // namespace accel::plan
