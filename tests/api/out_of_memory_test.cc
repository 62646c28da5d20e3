// Host memory running out inside a call: the call fails with ACCEL_ERROR_RESOURCE_EXHAUSTED and what it touched is
// as it was (docs/errors.md). The program runs on tests/common/failing_allocator.h: while armed, allocations from a
// size up fail with std::bad_alloc (the growth of a busy stream's queue, not the small allocations of a call's
// bookkeeping), or the n-th allocation from now fails (every allocation of a call, in turn).
#include <atomic>
#include <vector>

#include <accel/runtime.h>

#include "../runtime/runtime_fixture.h"  // CreateRuntime
#include "failing_allocator.h"
#include "gate.h"
#include "test_util.h"

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
  accel_test::FailAllocationsFrom(1024);
  for (int i = 0; i < 4096 && refused == ACCEL_SUCCESS; ++i) {
    const accel_status_t s = accel_stream_enqueue_host_callback(stream, Count, nullptr);
    if (s == ACCEL_SUCCESS) {
      ++accepted;
    } else {
      refused = s;
    }
  }
  accel_test::FailAllocationsFrom(0);
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

accel_memory_usage_t Usage(accel_device_t device) {
  accel_physical_device_t physical = nullptr;
  EXPECT_EQ(accel_device_get_physical_device(device, &physical), ACCEL_SUCCESS) << accel_last_error();
  accel_memory_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_physical_device_get_memory_usage(physical, &u), ACCEL_SUCCESS) << accel_last_error();
  return u;
}

// Fails each allocation `call` makes in turn (the first, then the second, ...) until a call makes fewer than that
// and succeeds. Every failure must be RESOURCE_EXHAUSTED and have hit a failed allocation; `after_failure(n)` checks
// what it left. With `success_untouched`, the call that succeeds must not have met a failed allocation. Expects at
// least one failure (otherwise the test proved nothing).
template <typename Call, typename AfterFailure>
void FailEachAllocationInTurn(const char* what, bool success_untouched, Call call, AfterFailure after_failure) {
  int failed = 0;
  for (long n = 1; n <= 1000; ++n) {
    accel_test::FailAllocationAfter(n);
    const accel_status_t s = call();
    const bool hit = accel_test::StopCountdown();
    if (s == ACCEL_SUCCESS) {
      if (success_untouched) {
        EXPECT_FALSE(hit) << "allocation " << n << " failed, yet the create succeeded";
      }
      break;
    }
    ++failed;
    EXPECT_TRUE(hit) << "allocation " << n << " was not failed, yet: " << accel_last_error();
    EXPECT_EQ(s, ACCEL_ERROR_RESOURCE_EXHAUSTED) << "allocation " << n << ": " << accel_last_error();
    after_failure(n);
  }
  EXPECT_GT(failed, 0) << "no allocation of " << what << " was failed: the test proved nothing";
}

// Each allocation accel_buffer_create makes fails in turn (the first, then the second, ...), until one call makes
// fewer than that and succeeds: every failure says RESOURCE_EXHAUSTED and leaves the process's memory accounts, and
// the handles, as they were (a charge kept, or a handle left live, would show as a counted buffer), and the
// buffer made at the end works.
TEST(OutOfMemory, EveryAllocationOfABufferCreateMayFailAndNothingIsKept) {
  ScopedInstance instance(nullptr);
  const std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_FALSE(devices.empty());
  accel_device_t device = devices[0];
  const accel_memory_usage_t before = Usage(device);
  accel_buffer_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  desc.struct_size = sizeof(desc);
  desc.size = 4096;
  accel_buffer_t buffer = nullptr;
  FailEachAllocationInTurn(
      "accel_buffer_create", true, [&] { return accel_buffer_create(device, &desc, &buffer); },
      [&](long n) {
        const accel_memory_usage_t now = Usage(device);
        EXPECT_EQ(now.used, before.used) << "allocation " << n << " failed and left its bytes charged";
        EXPECT_EQ(now.buffers, before.buffers) << "allocation " << n << " failed and left a buffer counted";
      });
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Usage(device).buffers, before.buffers + 1);
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  const std::vector<unsigned char> bytes(4096, 3);
  std::vector<unsigned char> back(4096, 0);
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, bytes.data(), buffer, 0, 4096), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 0, back.data(), 4096), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back, bytes);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(Usage(device).buffers, before.buffers);
}

// Each allocation accel_buffer_import makes fails in turn: a failed import never calls the caller's release (the
// caller frees its memory, as docs/interop.md says), and the import made at the end calls it once, when destroyed.
// The core used to register the handle after the backend had taken over release: a failure there destroyed the
// import (release called) and said the import failed.
TEST(OutOfMemory, EveryAllocationOfAnImportMayFailAndReleaseRunsOnlyForASuccess) {
  ScopedInstance instance(nullptr);
  const std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_FALSE(devices.empty());
  static std::atomic<int> released{0};
  std::vector<unsigned char> memory(4096, 7);
  accel_buffer_import_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC;
  desc.struct_size = sizeof(desc);
  desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
  desc.handle = reinterpret_cast<uint64_t>(memory.data());
  desc.size = memory.size();
  desc.release = [](void*) { released.fetch_add(1); };
  accel_buffer_t buffer = nullptr;
  FailEachAllocationInTurn(
      "accel_buffer_import", false, [&] { return accel_buffer_import(devices[0], &desc, &buffer); },
      [&](long n) {
        EXPECT_EQ(released.load(), 0) << "allocation " << n << " failed the import, and release ran for it";
      });
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(released.load(), 0);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(released.load(), 1) << "release runs once, when the imported buffer goes";
}

// Each allocation accel_placement_group_create makes fails in turn: every failure is RESOURCE_EXHAUSTED and leaves
// the device unreserved (a reservation kept would make the next attempt fail without reaching its countdown), and
// the group made at the end holds the whole device. (The handle is made after the group is placed; a failure there,
// every slot taken, now gives the reservation back too: no allocation this test can fail reaches it.)
TEST(OutOfMemory, EveryAllocationOfAPlacementGroupMayFailAndNothingStaysReserved) {
  ScopedInstance instance(nullptr);
  accel_runtime_t runtime = nullptr;
  ASSERT_EQ(accel_runtime_test::CreateRuntime(instance.get(), 1, &runtime), ACCEL_SUCCESS) << accel_last_error();
  accel_resource_request_t bundle{};
  bundle.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
  bundle.struct_size = sizeof(bundle);
  bundle.device_count = 1;
  bundle.share = 1.0;
  accel_placement_group_desc_t gd{};
  gd.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
  gd.struct_size = sizeof(gd);
  gd.bundles = &bundle;
  gd.bundle_count = 1;
  gd.strategy = ACCEL_PLACEMENT_STRATEGY_PACK;
  gd.level = ACCEL_TOPOLOGY_LEVEL_NODE;
  accel_placement_group_t group = nullptr;
  FailEachAllocationInTurn(
      "accel_placement_group_create", false, [&] { return accel_placement_group_create(runtime, &gd, &group); },
      [](long) {});
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(accel_placement_group_destroy(group), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_runtime_destroy(runtime), ACCEL_SUCCESS) << accel_last_error();
}

}  // namespace
