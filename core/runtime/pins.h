// Pins: a thread announces the object one of its API calls uses, so that the
// object's destroy waits for the call instead of every call counting a
// reference on a line all threads write (hazard pointers, M. Michael 2004).
// docs/threading.md, "Pinned runtimes", says where the runtime uses them.
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
//
// Thread-safe: a record is written by its thread alone; any thread may scan.
#ifndef ACCEL_RUNTIME_PINS_H_
#define ACCEL_RUNTIME_PINS_H_

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
  static int Pin(const void* object) noexcept;
  // Withdraws the announcement of Pin's `slot` (kAlreadyPinned: nothing).
  static void Unpin(int slot) noexcept;
  // Whether the calling thread announces `object` in any slot.
  static bool PinnedByMe(const void* object) noexcept;
  // Waits, with a short spin and then sleeps of growing length, until no
  // thread other than the caller announces `object`.
  static void WaitUnpinnedByOthers(const void* object) noexcept;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_PINS_H_
