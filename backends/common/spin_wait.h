// Waiting for another thread that is about to act: spin with a pause hint for a
// bounded time before falling back to sleeping on a condition variable. A
// sleeping thread costs a futex wake-up and a trip through the scheduler (tens
// of microseconds on a loaded machine); a spinning one sees the change within
// a cache-line transfer. Part of accel_backend_support (backend_support.h).
//
//   if (!backend::SpinUntil(backend::kHandOffSpinNs, [&] { return done.load(std::memory_order_acquire); })) {
//     std::unique_lock lock(mutex);
//     cv.wait(lock, [&] { return done.load(); });
//   }
//
// Thread-safe: stateless.
#ifndef ACCEL_BACKENDS_COMMON_SPIN_WAIT_H_
#define ACCEL_BACKENDS_COMMON_SPIN_WAIT_H_

#include <chrono>
#include <cstdint>
#include <thread>

namespace accel::backend {

// How long a thread handing work to another, or waiting for it, spins before it sleeps: long enough to cover an
// operation of a few microseconds and the caller's turnaround between two operations, short enough that an idle
// stream stops using a core almost at once.
inline constexpr uint64_t kHandOffSpinNs = 50'000;

// A hint to the core that this thread spins.
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Calls `done()` until it returns true or about `budget_ns` passed, pausing between calls and yielding the core now
// and then (so that the thread it waits for runs when the cores are oversubscribed). Returns done()'s last value.
template <typename Done>
bool SpinUntil(uint64_t budget_ns, Done&& done) {
  if (done()) return true;
  if (budget_ns == 0) return false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(budget_ns);
  for (uint32_t i = 1;; ++i) {
    SpinPause();
    if (done()) return true;
    if ((i & 63) == 0) {
      if (std::chrono::steady_clock::now() >= end) return done();
      if ((i & 1023) == 0) std::this_thread::yield();
    }
  }
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_SPIN_WAIT_H_
