// The first-fit baseline the planner is measured against: each unit goes to
// the first device in rank order with room, ignoring strategy and level.
// All-or-nothing like Planner. Not thread-safe. The cluster must outlive it.
#ifndef ACCEL_CORE_PLANNER_FIRST_FIT_H_
#define ACCEL_CORE_PLANNER_FIRST_FIT_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cluster.h"
#include "gang.h"
#include "placement.h"

namespace accel::planner {

class FirstFit {
 public:
  explicit FirstFit(const Cluster& cluster);
  Expected<Placement> Place(const Gang& gang);
  Expected<bool> Release(uint64_t id);
  const std::vector<Free>& free() const { return free_; }

 private:
  const Cluster& cluster_;
  std::vector<Free> free_;
  size_t first_free_ = 0;  // no device before it has any share left
  std::unordered_map<uint64_t, std::vector<Assignment>> held_;
  uint64_t next_id_ = 1;
};

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_FIRST_FIT_H_
