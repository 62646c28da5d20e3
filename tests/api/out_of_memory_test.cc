// Host memory running out inside an enqueue: the call fails with ACCEL_ERROR_RESOURCE_EXHAUSTED and the stream is
// as it was, so what was enqueued before still runs and a synchronize still returns (docs/errors.md). This program
// replaces the global operator new so that, while armed, allocations from a size up fail with std::bad_alloc:
// the growth of a busy stream's queue, not the small allocations of a call's bookkeeping.
#include <atomic>
#include <cstdlib>
#include <new>

#include "gate.h"
#include "test_util.h"

namespace {

std::atomic<size_t> g_fail_from{0};  // 0: allocations succeed

void* Allocate(size_t size) {
  const size_t from = g_fail_from.load(std::memory_order_relaxed);
  if (from != 0 && size >= from) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

using accel_test::Gate;
using accel_test::ScopedInstance;

std::atomic<int> g_ran{0};

accel_status_t Count(void*, accel_status_t status) {
  if (status == ACCEL_SUCCESS) g_ran.fetch_add(1);
  return ACCEL_SUCCESS;
}

// Failing allocations of 1 KiB and more while callbacks queue behind a blocked one: the queue's growth fails
// (a host stream's queue starts at 16 operations and doubles), the enqueue says so, and nothing is counted that
// will not run: a synchronize returns once the callbacks that were accepted ran, and the stream takes more work.
TEST(OutOfMemory, AnEnqueueThatCannotQueueLeavesTheStreamAsItWas) {
  ScopedInstance instance(nullptr);
  const std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_FALSE(devices.empty());
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(devices[0], nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, Gate::Wait, &gate), ACCEL_SUCCESS) << accel_last_error();

  int accepted = 0;
  accel_status_t refused = ACCEL_SUCCESS;
  g_fail_from.store(1024);
  for (int i = 0; i < 4096 && refused == ACCEL_SUCCESS; ++i) {
    const accel_status_t s = accel_stream_enqueue_host_callback(stream, Count, nullptr);
    if (s == ACCEL_SUCCESS) {
      ++accepted;
    } else {
      refused = s;
    }
  }
  g_fail_from.store(0);
  ASSERT_EQ(refused, ACCEL_ERROR_RESOURCE_EXHAUSTED) << "no enqueue failed while allocations of 1 KiB failed";
  EXPECT_GT(accepted, 0);

  gate.Open();
  EXPECT_EQ(accel_stream_synchronize(stream, 10'000'000'000ULL), ACCEL_SUCCESS)
      << "the refused operation was counted as pending: " << accel_last_error();
  EXPECT_EQ(g_ran.load(), accepted);
  EXPECT_EQ(accel_stream_query(stream), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, Count, nullptr), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream, 10'000'000'000ULL), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(g_ran.load(), accepted + 1);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS) << accel_last_error();
}

}  // namespace
