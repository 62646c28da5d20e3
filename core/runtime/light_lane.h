// A lane of light group tasks (docs/scheduler.md, "Light group tasks"): a fixed-size work-stealing deque after
// Chase and Lev ("Dynamic Circular Work-Stealing Deque", SPAA 2005), with the orderings of Le, Pop, Cohen and
// Zappa Nardelli ("Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP 2013) expressed as seq_cst
// accesses instead of fences (ThreadSanitizer does not model fences). The owning thread pushes and pops at the
// bottom, newest first; any thread steals at the top, oldest first.
//
//   LightLane lane;
//   lane.Push({fn, data, release, id});   // owner; false when full
//   LightTask t;
//   if (lane.Pop(&t)) ...                 // owner
//   LightTask few[16];
//   size_t n = lane.PopBatch(few, 16);    // owner
//   if (lane.Steal(&t)) ...               // anyone
//
// Thread-safe: Push, Pop, PopBatch, HasRoom and OwnerSize on the owning thread only (one at a time); Steal and Size on
// any thread.
#ifndef ACCEL_RUNTIME_LIGHT_LANE_H_
#define ACCEL_RUNTIME_LIGHT_LANE_H_

#include <accel/runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace accel::runtime {

// What a light group task is: its function, user data and release, and its id. Plain value.
struct LightTask {
  accel_task_function_t function = nullptr;
  void* user_data = nullptr;
  void (*release_user_data)(void*) = nullptr;
  uint64_t id = 0;
};

class LightLane {
 public:
  static constexpr int64_t kSlots = 4096;

  // Owner: queues `task` newest; false when the lane holds kSlots.
  bool Push(const LightTask& task) {
    const int64_t b = bottom_.load(std::memory_order_relaxed);
    if (!HasRoom()) return false;
    Slot& s = slots_[static_cast<size_t>(b % kSlots)];
    s.function.store(task.function, std::memory_order_relaxed);
    s.user_data.store(task.user_data, std::memory_order_relaxed);
    s.release.store(task.release_user_data, std::memory_order_relaxed);
    s.id.store(task.id, std::memory_order_relaxed);
    bottom_.store(b + 1, std::memory_order_release);  // publishes the slot (and what the caller wrote before)
    return true;
  }

  // Owner: whether a Push would find room. Reads the thieves' end only when the one last read leaves none: a
  // thief writes it at every steal.
  bool HasRoom() {
    const int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b - top_seen_ < kSlots) return true;
    top_seen_ = top_.load(std::memory_order_acquire);
    return b - top_seen_ < kSlots;
  }
  // Owner: how many it holds, with the thieves' end as last read (at least as many as it holds).
  size_t OwnerSize() const {
    const int64_t n = bottom_.load(std::memory_order_relaxed) - top_seen_;
    return n > 0 ? static_cast<size_t>(n) : 0;
  }

  // Owner: takes the newest task; false when none is left.
  bool Pop(LightTask* out) {
    const int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.store(b, std::memory_order_seq_cst);  // before the read of top: a thief sees it, or this sees the thief
    int64_t t = top_.load(std::memory_order_seq_cst);
    top_seen_ = t;
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_release);  // empty
      return false;
    }
    Read(b, out);
    if (t == b) {
      // The last one: the owner and the thieves race for it on top.
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_release);
      return won;
    }
    return true;
  }

  // Owner: takes up to `most` of the newest tasks into out[0], out[1], ... (newest first) with one fence, not one
  // per task; returns how many. It leaves the oldest one, which thieves may reach, and returns 0 when fewer than
  // three are left (or thieves keep too close): Pop then takes them one by one. The tasks taken are the caller's
  // alone: a thief takes only below the bottom it reads, and one that read the bottom before this lowered it reads a
  // top below every task taken here.
  size_t PopBatch(LightTask* out, size_t most) {
    // Sized from the thieves' end as last read (no further than it is); once more from a fresh read if that was
    // too far behind.
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int64_t b = bottom_.load(std::memory_order_relaxed);
      const int64_t k = std::min<int64_t>(static_cast<int64_t>(most), b - top_seen_ - 1);
      if (k < 2) return 0;
      bottom_.store(b - k, std::memory_order_seq_cst);  // before the read of top, as in Pop
      top_seen_ = top_.load(std::memory_order_seq_cst);
      if (top_seen_ < b - k) {
        for (int64_t i = 0; i < k; ++i) Read(b - 1 - i, &out[i]);
        return static_cast<size_t>(k);
      }
      bottom_.store(b, std::memory_order_release);  // the thieves came too close: give them back
    }
    return 0;
  }

  // Anyone: takes the oldest task; false when none is left or another thread took it first.
  bool Steal(LightTask* out) {
    int64_t t = top_.load(std::memory_order_seq_cst);
    const int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return false;
    Read(t, out);  // valid only if the exchange below wins: the owner overwrites a slot only once top passed it
    return top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
  }

  // How many it holds; a snapshot.
  size_t Size() const {
    const int64_t b = bottom_.load(std::memory_order_relaxed);
    const int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? static_cast<size_t>(b - t) : 0;
  }

 private:
  // Each field atomic (relaxed): a thief may read a slot the owner writes when its exchange is then lost.
  struct Slot {
    std::atomic<accel_task_function_t> function{nullptr};
    std::atomic<void*> user_data{nullptr};
    std::atomic<void (*)(void*)> release{nullptr};
    std::atomic<uint64_t> id{0};
  };
  void Read(int64_t index, LightTask* out) const {
    const Slot& s = slots_[static_cast<size_t>(index % kSlots)];
    out->function = s.function.load(std::memory_order_relaxed);
    out->user_data = s.user_data.load(std::memory_order_relaxed);
    out->release_user_data = s.release.load(std::memory_order_relaxed);
    out->id = s.id.load(std::memory_order_relaxed);
  }

  alignas(64) std::atomic<int64_t> top_{0};     // thieves' end
  alignas(64) std::atomic<int64_t> bottom_{0};  // the owner's end
  int64_t top_seen_ = 0;                        // the owner's last read of top_ (top only grows: at most top_)
  alignas(64) std::array<Slot, kSlots> slots_;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_LIGHT_LANE_H_
