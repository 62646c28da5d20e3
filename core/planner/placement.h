// What a placed gang holds: each unit's device, in topology rank order, and
// the free capacity of a device (docs/planner.md, "Results"). Plain values.
#ifndef ACCEL_CORE_PLANNER_PLACEMENT_H_
#define ACCEL_CORE_PLANNER_PLACEMENT_H_

#include <cstdint>
#include <vector>

namespace accel::planner {

// One device of a placed gang: which bundle it serves and what it holds.
struct Assignment {
  uint32_t bundle = 0;  // index into Gang::bundles
  uint32_t device = 0;  // rank: index into Cluster::devices()
  int64_t share = 0;    // kShareUnits fixed point
  uint64_t memory = 0;
};

struct Placement {
  uint64_t id = 0;                      // for Release; never 0
  std::vector<Assignment> assignments;  // sorted by device rank (node, clique, position), then bundle
};

// A device's free capacity. Plain value.
struct Free {
  int64_t share = 0;  // kShareUnits fixed point
  uint64_t memory = 0;
  bool operator==(const Free&) const = default;
};

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_PLACEMENT_H_
