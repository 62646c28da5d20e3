// Pins: a thread announces the object one of its API calls uses, so that the
// object's destroy waits for the call instead of every call counting a
// reference on a line all threads write (hazard pointers, M. Michael 2004).
// docs/threading.md, "The runtime's calls pin their runtime", says where the
// runtime uses them.
//
//   int slot = Pins::Pin(object);        // then re-check that `object` is still live
//   if (slot >= 0) { /* use object */ Pins::Unpin(slot); }
//   ...
//   // The destroying thread, once no new call can find `object`:
//   Pins::WaitUnpinnedByOthers(object);
//
// Each thread has its own record of kPerThread slots (one cache line, taken
// on the thread's first pin and handed to a later thread when it exits);
// pinning writes only the caller's record, and only a destroy reads them all.
// Pin, Unpin and PinnedByMe are inline: they run twice per task.
//
// Thread-safe: a record is written by its thread alone; any thread may scan.
#ifndef ACCEL_RUNTIME_PINS_H_
#define ACCEL_RUNTIME_PINS_H_

#include <atomic>

namespace accel::runtime {

class Pins {
 public:
  static constexpr int kPerThread = 4;
  // Pin's answer when the calling thread pins `object` already (an enclosing
  // call's pin, which outlasts this one); Unpin ignores it.
  static constexpr int kAlreadyPinned = kPerThread;

  // Announces `object` in a free slot of the calling thread's record, as a
  // sequentially consistent store, so that a seq_cst re-check of the object's
  // liveness after this call pairs with a destroyer's WaitUnpinnedByOthers.
  // kAlreadyPinned when the thread pins it already; -1 when the thread's slots
  // are all in use (the caller takes a counted reference instead).
  static int Pin(const void* object) noexcept {
    Record& r = Mine();
    int free = -1;
    for (int i = kPerThread - 1; i >= 0; --i) {
      const void* pinned = r.slots[i].load(std::memory_order_relaxed);
      if (pinned == object) return kAlreadyPinned;
      if (pinned == nullptr) free = i;
    }
    // A seq_cst store (a locked exchange on x86, a full barrier): the caller's seq_cst re-check of the object's
    // liveness comes after it, and a destroyer's seq_cst loads of the slots come after its seq_cst store that
    // ended that liveness; in their single order one of the two sees the other.
    if (free >= 0) r.slots[free].store(object, std::memory_order_seq_cst);
    return free;
  }
  // Withdraws the announcement of Pin's `slot` (kAlreadyPinned: nothing).
  static void Unpin(int slot) noexcept {
    if (slot != kAlreadyPinned) Mine().slots[slot].store(nullptr, std::memory_order_release);
  }
  // Whether the calling thread announces `object` in any slot.
  static bool PinnedByMe(const void* object) noexcept {
    for (const auto& slot : Mine().slots) {
      if (slot.load(std::memory_order_relaxed) == object) return true;
    }
    return false;
  }
  // Waits, with a short spin and then sleeps of growing length, until no
  // thread other than the caller announces `object`.
  static void WaitUnpinnedByOthers(const void* object) noexcept;

  struct alignas(64) Record {
    std::atomic<const void*> slots[kPerThread] = {};
    std::atomic<bool> taken{false};
    Record* next = nullptr;  // fixed once the record is on the list
  };

 private:
  // The calling thread's record: a plain pointer, read without an initialisation guard.
  static thread_local Record* t_record;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
  static Record& Mine() noexcept {
    Record* r = t_record;
    return r != nullptr ? *r : TakeRecord();
  }
  // Takes a free record (or makes one) for the calling thread, and arranges to give it back when the thread exits.
  static Record& TakeRecord() noexcept;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_PINS_H_
