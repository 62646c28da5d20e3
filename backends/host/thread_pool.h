// The context's thread pool: worker threads, started on first use, that share the
// work-groups of kernel launches with the stream workers that submit them.
#ifndef ACCEL_BACKENDS_HOST_THREAD_POOL_H_
#define ACCEL_BACKENDS_HOST_THREAD_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "host_backend.h"

namespace accel::host {

// Every scratch area starts on a 64-byte boundary (a cache line), like buffers and local-memory regions.
inline constexpr size_t kScratchAlignment = 64;

// `value` rounded up to a multiple of `alignment` (a power of two).
constexpr uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }

// One thread's reusable scratch memory (a work-group's arguments and local memory), grown on demand and never
// zeroed. Not thread-safe: each thread owns its own.
class Scratch {
 public:
  // At least `size` bytes aligned to kScratchAlignment, valid until the next call; throws std::bad_alloc.
  std::byte* Reserve(uint64_t size);

 private:
  struct FreeDeleter {
    void operator()(std::byte* pointer) const noexcept { std::free(pointer); }
  };
  std::unique_ptr<std::byte[], FreeDeleter> bytes_;
  uint64_t capacity_ = 0;
};

// A fixed set of worker threads that run the items of jobs. Run() hands a job's items to the workers and works on
// them itself until none is left, so a job always progresses even when no worker could be started. Several jobs
// (launches on different streams) run at once; idle workers join the oldest job.
// Thread-safe: Run may be called from any number of threads at once. The destructor joins the workers and must not
// race Run.
class ThreadPool {
 public:
  // Runs one item: `index` in [0, count), with the calling thread's scratch. Returns false to stop the job: no
  // further items start. Must not throw. A reference to the caller's callable (which Run outlives), so that a job
  // allocates nothing.
  class Body {
   public:
    template <typename Callable>
    requires(!std::is_same_v<Callable, Body>)
        Body(const Callable& callable)  // NOLINT(google-explicit-constructor): a lambda converts at the call
        : callable_(&callable), call_([](const void* c, Scratch& scratch, uint64_t index) {
            return (*static_cast<const Callable*>(c))(scratch, index);
          }) {}
    bool operator()(Scratch& scratch, uint64_t index) const { return call_(callable_, scratch, index); }

   private:
    const void* callable_;
    bool (*call_)(const void*, Scratch&, uint64_t);
  };

  // `thread_count` workers (0: std::thread::hardware_concurrency(), at least 1), started by the first Run that has
  // more than one item. A failure to start them (no thread, no memory) goes to `host`'s log (when given); the pool
  // works with those it has and starts the others on a later Run, trying at most once a second.
  ThreadPool(const HostServices* host, unsigned thread_count);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls `body` for every index in [0, count) until one call returns false, spread over the workers and the
  // calling thread (which uses `caller_scratch`); returns when every call that started has returned. What the calls
  // wrote is visible to the caller afterwards.
  void Run(uint64_t count, Scratch& caller_scratch, const Body& body);

 private:
  struct Job {
    uint64_t count = 0;
    uint64_t chunk = 1;  // indices claimed at once
    const Body* body = nullptr;
    std::atomic<uint64_t> next{0};
    std::atomic<bool> stop{false};
    unsigned helpers = 0;  // workers inside Work() for this job; guarded by the pool's mutex
  };

  // Claims and runs the job's items until none is left or the job stopped.
  static void Work(Job& job, Scratch& scratch);
  void StartLocked();
  void WorkerMain();
  void RemoveLocked(Job* job);

  const HostServices* const host_;
  const unsigned thread_count_;
  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable helper_left_;
  std::deque<Job*> jobs_;  // jobs that may still have unclaimed items, oldest first
  std::vector<std::thread> threads_;
  bool started_ = false;                            // every worker runs
  std::chrono::steady_clock::time_point retry_at_;  // the next start after a failure, not before
  bool stopping_ = false;
};

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_THREAD_POOL_H_
