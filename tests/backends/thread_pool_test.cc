// The host engine's thread pool (backends/host/thread_pool.h): a pool whose workers could not be started (no memory
// for them here, tests/common/failing_allocator.h) still runs every item, on the calling thread, and starts its
// workers on a later Run once it can.
#include "thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "failing_allocator.h"

namespace {

using accel::host::Scratch;
using accel::host::ThreadPool;

// Runs `count` items of about a millisecond each; returns how many ran and on how many threads.
std::pair<uint64_t, size_t> RunItems(ThreadPool& pool, uint64_t count) {
  std::atomic<uint64_t> ran{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  Scratch scratch;
  pool.Run(count, scratch, ThreadPool::Body([&](Scratch&, uint64_t) {
             {
               std::lock_guard lock(mutex);
               threads.insert(std::this_thread::get_id());
             }
             std::this_thread::sleep_for(std::chrono::milliseconds(1));
             ran.fetch_add(1);
             return true;
           }));
  return {ran.load(), threads.size()};
}

TEST(HostThreadPool, WorkersThatCouldNotStartAreStartedByALaterRun) {
  ThreadPool pool(nullptr, 64);  // 64 workers: their std::thread array is 512 bytes
  accel_test::FailAllocationsFrom(256);
  const auto [ran_without, threads_without] = RunItems(pool, 64);
  accel_test::FailAllocationsFrom(0);
  EXPECT_EQ(ran_without, 64u);
  EXPECT_EQ(threads_without, 1u) << "no worker could start, so the calling thread ran every item";

  // The next start is tried a second after the failure.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const auto [ran, threads] = RunItems(pool, 256);
  EXPECT_EQ(ran, 256u);
  EXPECT_GT(threads, 1u) << "the workers were not started once memory was back";
}

}  // namespace
