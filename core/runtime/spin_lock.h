// Spinning for the runtime's short critical sections and waits: a pause
// hint, and a lock for sections of a few instructions that threads on other
// cores take often (the direct shards' overflow, the handle table's shards),
// where a contended std::mutex would put its waiter to sleep in the kernel for
// far longer than the section.
//
//   SpinLock lock;
//   { std::lock_guard guard(lock); /* a few instructions */ }
//
// Thread-safe: that is its purpose; not recursive.
#ifndef ACCEL_RUNTIME_SPIN_LOCK_H_
#define ACCEL_RUNTIME_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace accel::runtime {

// A hint to the core that this thread spins.
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A lock for critical sections of a few instructions that threads on other
// cores take often (the direct shards): a contended std::mutex puts its
// waiter to sleep in the kernel, which costs far more than the section. Spins
// with a pause, yielding the core now and then so that a preempted holder runs.
class SpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if ((++spins & 1023) == 0) {
          std::this_thread::yield();
        } else {
          SpinPause();
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_SPIN_LOCK_H_
