// Running a gangs file over a cluster (docs/planner.md, "CLI"): each gang in
// order, all-or-nothing, holding what earlier ones took, after releasing the
// earlier gangs it names. Pure function of its inputs: thread-safe.
#ifndef ACCEL_TOOLS_ACCEL_PLAN_PLAN_H_
#define ACCEL_TOOLS_ACCEL_PLAN_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster.h"
#include "gangs_file.h"
#include "level.h"
#include "placement.h"

namespace accel::plan {

// The most domains GangOutcome::freest lists.
inline constexpr size_t kFreestListed = 5;

// A domain's room, when a gang was refused. Plain value.
struct DomainRoom {
  uint32_t domain = 0;           // index into cluster.domains(level)
  int64_t free_share = 0;        // planner::kShareUnits fixed point, summed over its devices
  size_t devices_with_room = 0;  // devices with some share free
};

// What became of one gang. Plain value.
struct GangOutcome {
  std::vector<size_t> released;  // the earlier gangs released before this one (GangRequest::release)
  bool placed = false;
  std::string reason;            // why it was refused (the planner's message); "" when placed
  planner::Placement placement;  // when placed: its devices in rank order
  // Refused, with `explain`: the freest domains at the gang's level at that
  // moment (at most kFreestListed, freest first), out of `domains_at_level`.
  std::vector<DomainRoom> freest;
  size_t domains_at_level = 0;
};

// What became of every gang, and the cluster's free capacity at the end.
struct PlanOutcome {
  std::vector<GangOutcome> gangs;   // one per request, in order
  std::vector<planner::Free> free;  // by device rank
};

// Places `gangs` on `cluster` with one planner::Planner. A refusal is an
// outcome, not an error: the planner's reason ("STRICT_SPREAD at numa: ...",
// "capacity: ..."), and with `explain` the freest domains then (a pass over
// the devices for each refused gang).
PlanOutcome Plan(const planner::Cluster& cluster, const std::vector<GangRequest>& gangs, bool explain);

// The distinct domains of `level` that `placement` uses (indices into
// cluster.domains(level)), in rank order of their first device.
std::vector<uint32_t> DomainsUsed(const planner::Cluster& cluster, const planner::Placement& placement,
                                  planner::Level level);

// The cluster at the end of a plan.
struct Usage {
  size_t devices_in_use = 0;  // devices with less than their whole share or memory free
  int64_t free_share = 0;     // planner::kShareUnits fixed point, summed over the devices
};
Usage Summarise(const planner::Cluster& cluster, const PlanOutcome& outcome);

// A share in planner::kShareUnits fixed point as a number of devices: 1.5 for 1'500'000.
double ShareValue(int64_t share);

}  // namespace accel::plan

#endif  // ACCEL_TOOLS_ACCEL_PLAN_PLAN_H_
