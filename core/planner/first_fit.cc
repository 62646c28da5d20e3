#include "first_fit.h"

#include <algorithm>

#include <fmt/format.h>

namespace accel::planner {

FirstFit::FirstFit(const Cluster& cluster) : cluster_(cluster) {
  for (const Device& d : cluster.devices()) free_.push_back(Free{kShareUnits, d.memory});
}

Expected<Placement> FirstFit::Place(const Gang& gang) {
  auto prepared = Prepare(gang);
  if (!prepared) return prepared.error();
  const PreparedGang& g = prepared.value();
  std::vector<Assignment> taken;
  size_t d = first_free_;
  int64_t previous = 0;
  for (const Unit& u : g.units) {
    // A smaller unit than the last may fit a device the last one skipped.
    if (u.share != previous) d = first_free_;
    previous = u.share;
    const selector::Selector* sel = u.selector < 0 ? nullptr : &g.selectors[static_cast<size_t>(u.selector)];
    // The devices of one bundle are distinct (docs/planner.md): a device that holds a unit of this bundle is
    // skipped (two half-device units of one bundle landed on one device: d was not advanced for equal shares).
    auto holds_bundle = [&](size_t device) {
      return std::any_of(taken.begin(), taken.end(),
                         [&](const Assignment& t) { return t.device == device && t.bundle == u.bundle; });
    };
    while (d < free_.size() && (free_[d].share < u.share || free_[d].memory < u.memory ||
                                (sel && !sel->Matches(cluster_.devices()[d].attributes)) || holds_bundle(d))) {
      ++d;
    }
    if (d == free_.size()) {
      for (const Assignment& t : taken)
        free_[t.device] = Free{free_[t.device].share + t.share, free_[t.device].memory + t.memory};
      return Error{fmt::format("capacity: first fit found no device for bundles[{}]", u.bundle)};
    }
    free_[d].share -= u.share;
    free_[d].memory -= u.memory;
    taken.push_back(Assignment{u.bundle, static_cast<uint32_t>(d), u.share, u.memory});
    // Units are sorted largest first, so a later one may still fit here; a
    // selector may skip devices, so restart from the first free one then.
    if (sel) d = first_free_;
  }
  while (first_free_ < free_.size() && free_[first_free_].share == 0) ++first_free_;
  Placement p;
  p.id = next_id_++;
  std::sort(taken.begin(), taken.end(), [](const Assignment& x, const Assignment& y) {
    return x.device != y.device ? x.device < y.device : x.bundle < y.bundle;
  });
  p.assignments = taken;
  held_.emplace(p.id, std::move(taken));
  return p;
}

Expected<bool> FirstFit::Release(uint64_t id) {
  auto it = held_.find(id);
  if (it == held_.end()) return Error{fmt::format("release: placement {} is not held", id)};
  for (const Assignment& t : it->second) {
    free_[t.device].share += t.share;
    free_[t.device].memory += t.memory;
    first_free_ = std::min<size_t>(first_free_, t.device);
  }
  held_.erase(it);
  return true;
}

}  // namespace accel::planner
