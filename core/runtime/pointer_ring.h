// A bounded lock-free first-in first-out queue of pointers for many producers
// and many consumers (D. Vyukov's bounded MPMC queue: each slot carries a
// sequence number that says whether it is free for the push of a position or
// holds the value for the pop of that position). The direct path keeps
// queued tasks in one per shard (docs/scheduler.md, "The direct path").
//
//   PointerRing<Task> ring(1024);
//   if (!ring.Push(task)) { /* full: put it elsewhere */ }
//   if (Task* t = ring.Pop()) { /* the oldest */ }
//
// Thread-safe: any thread may call any member at any time. It does not own
// what it holds: a popped pointer is the popper's.
#ifndef ACCEL_RUNTIME_POINTER_RING_H_
#define ACCEL_RUNTIME_POINTER_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace accel::runtime {

template <typename T>
class PointerRing {
 public:
  // `capacity`: a power of two.
  explicit PointerRing(size_t capacity) : mask_(capacity - 1), slots_(new Slot[capacity]) {
    for (size_t i = 0; i < capacity; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }
  PointerRing(const PointerRing&) = delete;
  PointerRing& operator=(const PointerRing&) = delete;

  // Appends `value`; false when the ring is full.
  bool Push(T* value) noexcept {
    size_t position = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[position & mask_];
      const size_t sequence = slot.sequence.load(std::memory_order_acquire);
      const auto difference = static_cast<std::ptrdiff_t>(sequence - position);
      if (difference == 0) {
        if (tail_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          slot.value.store(value, std::memory_order_relaxed);
          slot.sequence.store(position + 1, std::memory_order_release);
          return true;
        }
      } else if (difference < 0) {
        return false;  // the slot still holds the value of a lap ago
      } else {
        position = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Removes and returns the oldest pointer; null when the ring is empty.
  T* Pop() noexcept {
    size_t position = head_.load(std::memory_order_relaxed);
    for (;;) {
      Slot& slot = slots_[position & mask_];
      const size_t sequence = slot.sequence.load(std::memory_order_acquire);
      const auto difference = static_cast<std::ptrdiff_t>(sequence - (position + 1));
      if (difference == 0) {
        if (head_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed)) {
          return Take(slot, position);
        }
      } else if (difference < 0) {
        return nullptr;  // not pushed yet
      } else {
        position = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // Removes the oldest pointer when it is `value`: true then. `value` must be
  // live and pushed at most once while in the ring (it then names one entry).
  bool PopIf(const T* value) noexcept {
    size_t position = head_.load(std::memory_order_relaxed);
    Slot& slot = slots_[position & mask_];
    if (slot.sequence.load(std::memory_order_acquire) != position + 1) return false;
    if (slot.value.load(std::memory_order_relaxed) != value) return false;
    // The entry at `position` is still there only while the head has not moved past it.
    if (!head_.compare_exchange_strong(position, position + 1, std::memory_order_relaxed)) return false;
    Take(slot, position);
    return true;
  }

  // How many pointers it holds; a snapshot that may be stale at once.
  size_t Size() const noexcept {
    const size_t tail = tail_.load(std::memory_order_relaxed);
    const size_t head = head_.load(std::memory_order_relaxed);
    return tail > head ? tail - head : 0;
  }

 private:
  // A cache line each: a push and a pop of neighbouring positions, on two cores, touch different lines.
  struct alignas(64) Slot {
    std::atomic<size_t> sequence{0};
    std::atomic<T*> value{nullptr};  // atomic: PopIf reads it without owning the slot
  };

  T* Take(Slot& slot, size_t position) noexcept {
    T* value = slot.value.load(std::memory_order_relaxed);
    slot.sequence.store(position + mask_ + 1, std::memory_order_release);  // free for the next lap's push
    return value;
  }

  const size_t mask_;
  std::unique_ptr<Slot[]> slots_;
  alignas(64) std::atomic<size_t> tail_{0};  // the next push's position
  alignas(64) std::atomic<size_t> head_{0};  // the next pop's position
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_POINTER_RING_H_
