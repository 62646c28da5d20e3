// The gang placement planner (docs/planner.md, "Algorithm"): tracks the free
// capacity of a Cluster, indexed by domain at every level, and places gangs
// all-or-nothing with PACK / SPREAD / STRICT_PACK / STRICT_SPREAD at a level.
// Not thread-safe: one planner is used by one thread at a time. The cluster
// must outlive it.
#ifndef ACCEL_CORE_PLANNER_PLANNER_H_
#define ACCEL_CORE_PLANNER_PLANNER_H_

#include <array>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster.h"
#include "gang.h"
#include "placement.h"

namespace accel::planner {

class Planner {
 public:
  explicit Planner(const Cluster& cluster);

  // Places `gang`: every bundle or none. On failure nothing is held and the
  // error says why: bad input (Prepare's messages), "STRICT_PACK at rack: ...",
  // "STRICT_SPREAD at numa: ...", or "capacity: ...".
  Expected<Placement> Place(const Gang& gang);
  // Frees what placement `id` holds. Error when `id` is not held.
  Expected<bool> Release(uint64_t id);
  // Takes device `rank` out of service (a lost device): its free capacity
  // goes to zero and what placements release there is not given back.
  void Disable(uint32_t rank);
  bool disabled(uint32_t rank) const { return disabled_[rank]; }
  // Sets device `rank`'s free capacity aside from every placement until
  // Unreserve: what is free now, and what placements release there meanwhile
  // (a reservation for a gang that waits for the device). No effect on a
  // disabled or already reserved device.
  void Reserve(uint32_t rank);
  // Gives a reserved device's capacity back to placements.
  void Unreserve(uint32_t rank);
  bool reserved(uint32_t rank) const { return !aside_.empty() && aside_[rank].reserved; }

  // Every device's free capacity, by rank.
  const std::vector<Free>& free() const { return free_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  struct Attempt;
  void Take(uint32_t device, int64_t share, uint64_t memory);
  void Give(uint32_t device, int64_t share, uint64_t memory);
  bool Fits(Attempt& a, uint32_t device, const Unit& unit);
  // Places as many of the attempt's unplaced units as fit on `devices` (those of node domain `node` only, unless
  // kAnyNode).
  void FillDevices(Attempt& a, const std::vector<uint32_t>& devices, uint32_t node);
  // Places unplaced units inside domain `domain` of `level`, packing along
  // block > rack > node > clique; inside node domain `node` only, unless kAnyNode (a fabric clique reached from
  // one of its nodes). A fabric clique reached from above is filled node by node, best fit first.
  void FillDomain(Attempt& a, Level level, uint32_t domain, uint32_t node);
  static constexpr uint32_t kAnyNode = UINT32_MAX;
  void FillCluster(Attempt& a);
  void Rollback(Attempt& a);
  bool TryPack(Attempt& a, Level level);
  bool TrySpread(Attempt& a, Level level, bool strict);

  const Cluster& cluster_;
  std::vector<Free> free_;
  std::array<std::vector<int64_t>, kLevelCount> domain_free_;  // free share per domain
  // Per level: (free share, domain), for best fit (lower_bound) and freest first.
  std::array<std::set<std::pair<int64_t, uint32_t>>, kLevelCount> by_free_;
  std::unordered_map<uint64_t, std::vector<Assignment>> held_;
  std::vector<bool> disabled_;
  struct Aside {
    bool reserved = false;
    int64_t share = 0;
    uint64_t memory = 0;
  };
  std::vector<Aside> aside_;  // by rank once a device was reserved; empty before
  uint64_t next_id_ = 1;
};

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_PLANNER_H_
