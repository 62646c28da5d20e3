// libaccel-runtime scenarios on simulated nodes with known answers
// (docs/scheduler.md): placement by capability and topology, enforced shares,
// atomic placement groups, dependencies, cancellation, retry on device loss,
// the CPU counted once, bad input, and a property test that capacity is never
// oversubscribed.
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

TEST(Runtime, ResourcesAreThePhysicalDevicesWithTheirMemory) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  auto devices = rt.Devices();
  ASSERT_EQ(devices.size(), 8U);
  for (const auto& d : devices) {
    EXPECT_EQ(d.share_free, 1.0);
    EXPECT_EQ(d.memory_total, uint64_t{85520809984});
    EXPECT_EQ(d.memory_free, d.memory_total);
    EXPECT_EQ(d.lost, 0U);
  }
  EXPECT_EQ(accel_runtime_version(), ACCEL_RUNTIME_VERSION);
}

TEST(Runtime, EightDeviceGangInsideOneNvlinkCliqueAndTwoInTheXgmiClique) {
  {
    RuntimeFixture rt;
    accel_placement_group_t g = nullptr;
    std::vector<accel_resource_request_t> bundles(8, Request(1));
    ASSERT_EQ(MakeGroup(rt.get(), bundles, ACCEL_PLACEMENT_STRATEGY_STRICT_PACK, ACCEL_TOPOLOGY_LEVEL_CLIQUE, &g),
              ACCEL_SUCCESS)
        << accel_last_error();
    auto devices = GroupDevices(g);
    ASSERT_EQ(devices.size(), 8U);
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(devices[i].rank, i) << "ordered by topology rank";
    // The clique is full: a ninth device cannot be had.
    accel_placement_group_t h = nullptr;
    EXPECT_EQ(MakeGroup(rt.get(), {Request(1)}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &h),
              ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_EQ(h, nullptr);
    EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
  }
  {
    ScopedEnv profile("ACCEL_SIM_PROFILE", "mixed-vendor");
    RuntimeFixture rt;
    accel_placement_group_t g = nullptr;
    ASSERT_EQ(MakeGroup(rt.get(), {Request(1), Request(1)}, ACCEL_PLACEMENT_STRATEGY_STRICT_PACK,
                        ACCEL_TOPOLOGY_LEVEL_CLIQUE, &g),
              ACCEL_SUCCESS)
        << accel_last_error();
    auto devices = GroupDevices(g);
    ASSERT_EQ(devices.size(), 2U);
    for (const auto& d : devices) {
      EXPECT_NE(PhysicalId(d.physical_device).find("MI210"), std::string::npos)
          << "only the two MI210s share a fabric clique: " << PhysicalId(d.physical_device);
    }
    EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
  }
}

TEST(Runtime, StrictSpreadAcrossNumaNodesAndAtomicRefusal) {
  RuntimeFixture rt;
  accel_placement_group_t g = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), {Request(1), Request(1)}, ACCEL_PLACEMENT_STRATEGY_STRICT_SPREAD,
                      ACCEL_TOPOLOGY_LEVEL_NUMA, &g),
            ACCEL_SUCCESS)
      << accel_last_error();
  auto devices = GroupDevices(g);
  ASSERT_EQ(devices.size(), 2U);
  EXPECT_NE(NumaOf(devices[0].physical_device), NumaOf(devices[1].physical_device));

  // Three bundles cannot spread over two NUMA nodes: refused, and nothing held.
  auto before = rt.Devices();
  accel_placement_group_t h = nullptr;
  EXPECT_EQ(MakeGroup(rt.get(), {Request(1, 0.5), Request(1, 0.5), Request(1, 0.5)},
                      ACCEL_PLACEMENT_STRATEGY_STRICT_SPREAD, ACCEL_TOPOLOGY_LEVEL_NUMA, &h),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("STRICT_SPREAD at numa"), std::string::npos) << message;
  EXPECT_NE(message.find("nothing is held"), std::string::npos) << message;
  auto after = rt.Devices();
  ASSERT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].share_free, after[i].share_free) << "device " << i;
    EXPECT_EQ(before[i].memory_free, after[i].memory_free) << "device " << i;
  }
  // An unplaceable gang larger than the node: also nothing held.
  std::vector<accel_resource_request_t> nine(9, Request(1));
  EXPECT_EQ(MakeGroup(rt.get(), nine, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &h),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  after = rt.Devices();
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].share_free, after[i].share_free);
  EXPECT_EQ(rt.Counters().placement_groups_refused, 2U);
  EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
  for (const auto& d : rt.Devices()) EXPECT_EQ(d.share_free, 1.0);
}

TEST(Runtime, FourQuarterSharesOfTwentyGiBFitAndTheFifthWaits) {
  TempDir dir;
  ScopedEnv profile("ACCEL_SIM_PROFILE", EightyGiBProfile(dir));
  ScopedEnv visible("ACCEL_VISIBLE_DEVICES", "0");
  RuntimeFixture rt;
  ASSERT_EQ(rt.Devices().size(), 1U);
  ASSERT_EQ(rt.Devices()[0].memory_total, 80 * kGiB);
  Gate gate;
  std::atomic<int> running{0};
  const accel_resource_request_t quarter = Request(1, 0.25, 20 * kGiB);
  std::vector<accel_future_t> futures(5);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(rt.Submit(
                  &quarter,
                  [&](accel_task_context_t ctx) {
                    uint64_t limit = 0;
                    EXPECT_EQ(accel_task_context_get_memory_limit(ctx, 0, &limit), ACCEL_SUCCESS);
                    EXPECT_EQ(limit, 20 * kGiB);
                    ++running;
                    gate.Wait();
                    return ACCEL_SUCCESS;
                  },
                  &futures[i]),
              ACCEL_SUCCESS)
        << accel_last_error();
  }
  ASSERT_TRUE(Eventually([&] { return running.load() == 4; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(running.load(), 4) << "a fifth quarter does not fit";
  EXPECT_EQ(accel_future_query(futures[4]), ACCEL_NOT_READY);
  const std::string why = Message(futures[4]);
  EXPECT_NE(why.find("capacity"), std::string::npos) << why;
  EXPECT_EQ(rt.Counters().pending, 1U);
  EXPECT_EQ(rt.Devices()[0].share_free, 0.0);
  gate.Open();
  for (accel_future_t f : futures) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(running.load(), 5);
  const auto c = rt.Counters();
  EXPECT_EQ(c.submitted, 5U);
  EXPECT_EQ(c.placed, 5U);
  EXPECT_EQ(c.started, 5U);
  EXPECT_EQ(c.finished, 5U);
  EXPECT_EQ(c.pending, 0U);
  EXPECT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  EXPECT_EQ(rt.Devices()[0].share_free, 1.0);
  EXPECT_EQ(rt.Devices()[0].memory_free, 80 * kGiB);
}

TEST(Runtime, ATaskPastItsShareFailsAloneAndItsNeighbourIsUntouched) {
  ScopedEnv visible("ACCEL_VISIBLE_DEVICES", "0");
  RuntimeFixture rt;
  const accel_resource_request_t half = Request(1, 0.5, 64 * kMiB);
  Gate both_allocated;
  std::atomic<int> allocated{0};
  auto body = [&](uint64_t first, uint64_t second) {
    return [&, first, second](accel_task_context_t ctx) -> accel_status_t {
      accel_device_t device = nullptr;
      EXPECT_EQ(accel_task_context_get_device(ctx, 0, &device), ACCEL_SUCCESS);
      const accel_buffer_desc_t d1 = BufferDesc(first);
      accel_buffer_t b1 = nullptr;
      if (accel_buffer_create(device, &d1, &b1) != ACCEL_SUCCESS) return accel_last_error_status();
      ++allocated;
      both_allocated.Wait();
      accel_status_t status = ACCEL_SUCCESS;
      if (second > 0) {
        const accel_buffer_desc_t d2 = BufferDesc(second);
        accel_buffer_t b2 = nullptr;
        status = accel_buffer_create(device, &d2, &b2);
        if (status == ACCEL_SUCCESS) accel_buffer_destroy(b2);
      }
      const std::string message = accel_last_error();
      accel_buffer_destroy(b1);
      if (status != ACCEL_SUCCESS) return accel_set_last_error(status, message.c_str());
      return ACCEL_SUCCESS;
    };
  };
  accel_future_t greedy = nullptr;
  accel_future_t modest = nullptr;
  ASSERT_EQ(rt.Submit(&half, body(48 * kMiB, 32 * kMiB), &greedy, {}, 0, "greedy"), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(&half, body(64 * kMiB, 0), &modest, {}, 0, "modest"), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return allocated.load() == 2; }));
  both_allocated.Open();
  EXPECT_EQ(accel_future_wait(greedy, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const std::string message = Message(greedy);
  EXPECT_NE(message.find("tenant 'task 1 ('greedy')' holds 48 MiB of its 64 MiB limit"), std::string::npos) << message;
  EXPECT_EQ(accel_future_wait(modest, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(modest);
  // Outside any task, the process may allocate freely again.
  accel_memory_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
  u.struct_size = sizeof(u);
  uint32_t n = 1;
  accel_physical_device_t p = nullptr;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(rt.instance(), &n, &p), ACCEL_SUCCESS);
  ASSERT_EQ(accel_physical_device_get_memory_usage(p, &u), ACCEL_SUCCESS);
  EXPECT_EQ(u.used, 0U) << "every task buffer was given back";
}

TEST(Runtime, TaskDevicesAreOnlyTheOnesItGot) {
  RuntimeFixture rt;
  const accel_resource_request_t two = Request(2, 1.0, 0, "kind==gpu && mem>=64GiB");
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                &two,
                [&](accel_task_context_t ctx) -> accel_status_t {
                  uint32_t n = 0;
                  EXPECT_EQ(accel_task_context_get_device_count(ctx, &n), ACCEL_SUCCESS);
                  EXPECT_EQ(n, 2U);
                  uint64_t limit = 0;
                  EXPECT_EQ(accel_task_context_get_memory_limit(ctx, 1, &limit), ACCEL_SUCCESS);
                  EXPECT_EQ(limit, uint64_t{85520809984}) << "share 1.0: the whole device";
                  accel_device_t dev = nullptr;
                  EXPECT_EQ(accel_task_context_get_device(ctx, 2, &dev), ACCEL_ERROR_INVALID_ARGUMENT);
                  EXPECT_EQ(dev, nullptr);
                  // A device the task did not get: refused.
                  uint32_t count = 8;
                  std::vector<accel_device_t> all(8);
                  EXPECT_EQ(accel_instance_enumerate_devices(rt.instance(), &count, all.data()), ACCEL_SUCCESS);
                  accel_device_t mine = nullptr;
                  EXPECT_EQ(accel_task_context_get_device(ctx, 0, &mine), ACCEL_SUCCESS);
                  accel_device_t other = all[7] == mine ? all[6] : all[7];
                  const accel_buffer_desc_t d = BufferDesc(4096);
                  accel_buffer_t b = nullptr;
                  EXPECT_EQ(accel_buffer_create(other, &d, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
                  EXPECT_NE(std::string(accel_last_error()).find("may not allocate on this device"), std::string::npos);
                  return ACCEL_SUCCESS;
                },
                &f),
            ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  // Outside the task the context is not valid.
  uint32_t n = 0;
  EXPECT_EQ(accel_task_context_get_device_count(reinterpret_cast<accel_task_context_t>(0x10), &n),
            ACCEL_ERROR_INVALID_HANDLE);
}

TEST(Runtime, DependenciesRunInOrderAndFailuresAndCancellationsPropagate) {
  RuntimeFixture rt;
  std::vector<std::string> order;
  std::mutex m;
  auto record = [&](const char* what, accel_status_t result) {
    return [&, what, result](accel_task_context_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::lock_guard lock(m);
      order.emplace_back(what);
      if (result < 0) return accel_set_last_error(result, "load: the file is truncated");
      return result;
    };
  };
  accel_future_t load = nullptr;
  accel_future_t train = nullptr;
  accel_future_t eval = nullptr;
  ASSERT_EQ(rt.Submit(nullptr, record("load", ACCEL_SUCCESS), &load, {}, 0, "load"), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, record("train", ACCEL_SUCCESS), &train, {load}, 0, "train"), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, record("eval", ACCEL_SUCCESS), &eval, {train, load}, 0, "eval"), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(eval, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(order, (std::vector<std::string>{"load", "train", "eval"}));

  accel_future_t bad = nullptr;
  accel_future_t after_bad = nullptr;
  ASSERT_EQ(rt.Submit(nullptr, record("bad", ACCEL_ERROR_NOT_FOUND), &bad, {}, 0, "bad"), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, record("never", ACCEL_SUCCESS), &after_bad, {bad}, 0, "after"), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(bad, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_NOT_FOUND);
  EXPECT_EQ(Message(bad), "load: the file is truncated");
  EXPECT_EQ(accel_future_wait(after_bad, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_FAILED_PRECONDITION);
  // Ids are unique, not consecutive: a direct task takes its id from its thread's block (docs/scheduler.md).
  EXPECT_TRUE(std::regex_search(
      Message(after_bad), std::regex(R"(dependency 0 \(task [0-9]+ \('bad'\)\) ended with ACCEL_ERROR_NOT_FOUND)")))
      << Message(after_bad);

  // Cancel a task that waits for a gate held by a running one; its dependent is cancelled too.
  Gate gate;
  std::atomic<bool> blocker_started{false};
  accel_future_t blocker = nullptr;
  accel_future_t waiting = nullptr;
  accel_future_t dependent = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr,
                [&](accel_task_context_t ctx) {
                  blocker_started = true;
                  gate.Wait();
                  uint32_t cancelled = 0;
                  EXPECT_EQ(accel_task_context_is_cancelled(ctx, &cancelled), ACCEL_SUCCESS);
                  return cancelled != 0 ? accel_set_last_error(ACCEL_ERROR_CANCELLED, "stopped as asked")
                                        : ACCEL_SUCCESS;
                },
                &blocker),
            ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, record("waiting", ACCEL_SUCCESS), &waiting, {blocker}), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, record("dependent", ACCEL_SUCCESS), &dependent, {waiting}), ACCEL_SUCCESS);
  EXPECT_NE(Message(waiting).find("waiting for dependency 0"), std::string::npos) << Message(waiting);
  EXPECT_EQ(accel_future_cancel(waiting), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(waiting, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_future_wait(dependent, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_future_wait(blocker, 1000000), ACCEL_ERROR_TIMEOUT) << "a wait that times out leaves the task";
  // Cancelled while running (not before it started, which a loaded machine could otherwise make it).
  ASSERT_TRUE(Eventually([&] { return blocker_started.load(); }));
  EXPECT_EQ(accel_future_cancel(blocker), ACCEL_SUCCESS);
  gate.Open();
  EXPECT_EQ(accel_future_wait(blocker, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(Message(blocker), "stopped as asked");
  {
    std::lock_guard lock(m);
    EXPECT_EQ(std::count(order.begin(), order.end(), "waiting") + std::count(order.begin(), order.end(), "dependent"),
              0);
  }
  const auto c = rt.Counters();
  EXPECT_EQ(c.submitted, 8U);
  EXPECT_EQ(c.finished + c.failed + c.cancelled, 8U) << "every task is counted once";
  EXPECT_EQ(c.cancelled, 3U);
}

// A task inside a bundle whose only device is lost: a retry could never be placed (the bundle holds no other
// device), so the task fails with the loss instead of waiting forever.
TEST(Runtime, DeviceLossInsideABundleWithNoOtherDeviceFailsTheTask) {
  const accel_resource_request_t one = Request(1, 1.0, 64 * kMiB);
  const LoseFirstDevice lose("0,1", one, 1);
  ASSERT_LT(lose.first, 2U);
  RuntimeFixture rt;
  accel_placement_group_t g = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), {one}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g), ACCEL_SUCCESS)
      << accel_last_error();
  accel_resource_request_t in = one;
  in.placement_group = g;
  in.bundle_index = 0;
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(&in, AllocateTwice, &f, {}, 2, "in-bundle"), ACCEL_SUCCESS);
  // Bounded only so that the old behaviour (a retry queued forever) fails the test instead of hanging it.
  EXPECT_EQ(accel_future_wait(f, 120ULL * 1000 * 1000 * 1000), ACCEL_ERROR_DEVICE_LOST) << Message(f);
  EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS) << accel_last_error();
}

TEST(Runtime, DeviceLossRetriesTheTaskElsewhere) {
  ScopedEnv visible("ACCEL_VISIBLE_DEVICES", "0,1");
  const accel_resource_request_t one = Request(1, 1.0, 64 * kMiB);
  // The planner is deterministic: find the device a first attempt gets, then lose that one.
  const uint32_t first = FirstDeviceIndex(one);
  ASSERT_LT(first, 2U);
  // Lost at its second operation: the task's second allocation.
  ScopedEnv faults("ACCEL_SIM_FAULTS", "device_lost_after=1,devices=gpu" + std::to_string(first));
  RuntimeFixture rt;
  std::vector<std::string> seen;
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                &one,
                [&](accel_task_context_t ctx) -> accel_status_t {
                  uint32_t attempt = 99;
                  EXPECT_EQ(accel_task_context_get_attempt(ctx, &attempt), ACCEL_SUCCESS);
                  accel_physical_device_t p = nullptr;
                  EXPECT_EQ(accel_task_context_get_physical_device(ctx, 0, &p), ACCEL_SUCCESS);
                  seen.push_back(std::to_string(attempt) + ":" + std::to_string(NumaOf(p)) + ":" +
                                 std::to_string(reinterpret_cast<uintptr_t>(p)));
                  return AllocateTwice(ctx);
                },
                &f, {}, 2, "train"),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].substr(0, 2), "0:");
  EXPECT_EQ(seen[1].substr(0, 2), "1:");
  EXPECT_NE(seen[0].substr(seen[0].rfind(':')), seen[1].substr(seen[1].rfind(':'))) << "retried elsewhere";
  uint32_t lost = 0;
  for (const auto& d : rt.Devices()) {
    if (d.lost == 0) continue;
    ++lost;
    EXPECT_EQ(d.share_free, 0.0) << "nothing is placed on a lost device";
  }
  EXPECT_EQ(lost, 1U);
  const auto c = rt.Counters();
  EXPECT_EQ(c.retried, 1U);
  EXPECT_EQ(c.devices_lost, 1U);
  EXPECT_EQ(c.placed, 2U);
  EXPECT_EQ(c.finished, 1U);

  // With every device of the selector lost, a task fails at once, saying why.
  accel_future_t g = nullptr;
  const accel_resource_request_t two = Request(2);
  EXPECT_EQ(rt.Submit(
                &two, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &g),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("no device of the runtime could ever hold it"), std::string::npos)
      << accel_last_error();
}

TEST(Runtime, TheCpuThroughThreeBackendsIsOneResource) {
  accel_instance_desc_t desc = ScopedInstance::Backends("host,opencl,vulkan");
  RuntimeFixture rt(&desc);
  uint32_t paths = 0;
  ASSERT_EQ(accel_instance_enumerate_devices(rt.instance(), &paths, nullptr), ACCEL_SUCCESS);
  if (paths < 3) GTEST_SKIP() << "PoCL or lavapipe is not installed: " << paths << " access path(s) to the CPU";
  auto devices = rt.Devices();
  ASSERT_EQ(devices.size(), 1U) << "three access paths, one physical CPU";
  // Two whole-CPU tasks cannot run at once.
  Gate gate;
  std::atomic<int> running{0};
  const accel_resource_request_t cpu = Request(1, 1.0, 0, "kind==cpu");
  accel_future_t a = nullptr;
  accel_future_t b = nullptr;
  auto body = [&](accel_task_context_t) {
    ++running;
    gate.Wait();
    return ACCEL_SUCCESS;
  };
  ASSERT_EQ(rt.Submit(&cpu, body, &a), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(rt.Submit(&cpu, body, &b), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_TRUE(Eventually([&] { return running.load() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(running.load(), 1);
  gate.Open();
  EXPECT_EQ(accel_future_wait(a, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(b, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
}

TEST(Runtime, TasksInsideABundleShareItsReservation) {
  RuntimeFixture rt;
  accel_placement_group_t g = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), {Request(2, 0.5, 8 * kGiB), Request(1)}, ACCEL_PLACEMENT_STRATEGY_PACK,
                      ACCEL_TOPOLOGY_LEVEL_NODE, &g),
            ACCEL_SUCCESS)
      << accel_last_error();
  Gate gate;
  std::atomic<int> running{0};
  accel_resource_request_t in = Request(2, 0.25, 4 * kGiB);
  in.placement_group = g;
  in.bundle_index = 0;
  std::vector<accel_future_t> f(3);
  auto body = [&](accel_task_context_t) {
    ++running;
    gate.Wait();
    return ACCEL_SUCCESS;
  };
  for (auto& fut : f) ASSERT_EQ(rt.Submit(&in, body, &fut), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_TRUE(Eventually([&] { return running.load() == 2; }))
      << Message(f[0]) << " / " << Message(f[1]) << " placed " << rt.Counters().placed << " started "
      << rt.Counters().started << " pending " << rt.Counters().pending << " running " << running.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(running.load(), 2) << "the bundle holds 0.5 of two devices: two quarter tasks";
  EXPECT_NE(Message(f[2]).find("bundle 0 of placement group 'g'"), std::string::npos) << Message(f[2]);
  // Too large for the bundle ever: refused at submission.
  accel_resource_request_t big = Request(3, 0.25);
  big.placement_group = g;
  accel_future_t never = nullptr;
  EXPECT_EQ(rt.Submit(&big, body, &never), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  gate.Open();
  for (auto fut : f) EXPECT_EQ(accel_future_wait(fut, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  // Destroying the group cancels what still waits for it and frees the devices.
  Gate second;
  std::atomic<int> started{0};
  accel_resource_request_t whole = Request(1, 1.0);
  whole.placement_group = g;
  whole.bundle_index = 1;
  accel_future_t holder = nullptr;
  accel_future_t queued = nullptr;
  auto hold = [&](accel_task_context_t) {
    ++started;
    second.Wait();
    return ACCEL_SUCCESS;
  };
  ASSERT_EQ(rt.Submit(&whole, hold, &holder), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(&whole, hold, &queued), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return started.load() == 1; }));
  EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(queued, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_NE(Message(queued).find("placement group 'g' was destroyed"), std::string::npos);
  second.Open();
  EXPECT_EQ(accel_future_wait(holder, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] {
    for (const auto& d : rt.Devices()) {
      if (d.share_free != 1.0) return false;
    }
    return true;
  }));
}

TEST(Runtime, BadInputIsRefusedWithTheFieldAndNothingLeaks) {
  RuntimeFixture rt;
  auto ok = [](accel_task_context_t) { return ACCEL_SUCCESS; };
  accel_future_t f = nullptr;
  struct Case {
    accel_resource_request_t request;
    accel_status_t code;
    const char* text;
  };
  const Case cases[] = {
      {Request(1, 1.0, 0, "kind==gpu && (mem>="), ACCEL_ERROR_INVALID_ARGUMENT, "'desc->request->selector' column"},
      {Request(1, 1.0, 0, "memroy >= 1GiB"), ACCEL_ERROR_INVALID_ARGUMENT, "memroy"},
      {Request(1, -0.5), ACCEL_ERROR_INVALID_ARGUMENT, "'desc->request->share' is -0.5"},
      {Request(1, std::nan("")), ACCEL_ERROR_INVALID_ARGUMENT, "'desc->request->share' is nan"},
      {Request(1, 1.5), ACCEL_ERROR_INVALID_ARGUMENT, "must be in (0, 1]"},
      {Request(1, 1.0, 0, "kind==tpu"), ACCEL_ERROR_NOT_FOUND, "matches none of the 8 device(s)"},
      {Request(1, 1.0, 0, "mem >= 100GiB"), ACCEL_ERROR_NOT_FOUND, "the device has"},
      {Request(9), ACCEL_ERROR_RESOURCE_EXHAUSTED, "could ever hold it"},
      {Request(1, 1.0, 200 * kGiB), ACCEL_ERROR_RESOURCE_EXHAUSTED, "could ever hold it"},
      {Request(0, 1.0, 0, "kind==gpu"), ACCEL_ERROR_INVALID_ARGUMENT, "'desc->request->device_count' is 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(rt.Submit(&c.request, ok, &f), c.code);
    EXPECT_NE(std::string(accel_last_error()).find(c.text), std::string::npos) << accel_last_error();
    EXPECT_EQ(f, nullptr);
  }
  // The task description itself.
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  EXPECT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->function' is NULL"), std::string::npos);
  d.function = Trampoline;
  accel_future_t stale = nullptr;
  ASSERT_EQ(rt.Submit(nullptr, ok, &stale), ACCEL_SUCCESS);
  ASSERT_EQ(accel_future_wait(stale, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  accel_future_t copy = stale;
  d.dependencies = &copy;
  d.dependency_count = 1;
  RuntimeFixture other;
  EXPECT_EQ(accel_task_submit(other.get(), &d, &f), ACCEL_ERROR_INVALID_ARGUMENT)
      << "a dependency on another runtime's task";
  EXPECT_NE(std::string(accel_last_error()).find("another runtime"), std::string::npos);
  d.dependency_count = 2;
  accel_future_t garbage[2] = {stale, reinterpret_cast<accel_future_t>(0x1234)};
  d.dependencies = garbage;
  EXPECT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->dependencies[1]'"), std::string::npos) << accel_last_error();
  d.dependency_count = 0;
  d.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  EXPECT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_task_submit(reinterpret_cast<accel_runtime_t>(0x1234), &d, &f), ACCEL_ERROR_INVALID_HANDLE);

  // Placement groups: zero bundles, a zero-device bundle, NaN, bad enums.
  accel_placement_group_t g = nullptr;
  EXPECT_EQ(MakeGroup(rt.get(), {}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->bundle_count' is 0"), std::string::npos);
  EXPECT_EQ(MakeGroup(rt.get(), {Request(1), Request(0)}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->bundles[1]->device_count' is 0"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(
      MakeGroup(rt.get(), {Request(1, std::nan(""))}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g),
      ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(
      MakeGroup(rt.get(), {Request(1)}, static_cast<accel_placement_strategy_t>(9), ACCEL_TOPOLOGY_LEVEL_NODE, &g),
      ACCEL_ERROR_INVALID_ENUM);
  EXPECT_EQ(
      MakeGroup(rt.get(), {Request(1)}, ACCEL_PLACEMENT_STRATEGY_PACK, static_cast<accel_topology_level_t>(9), &g),
      ACCEL_ERROR_INVALID_ENUM);
  EXPECT_EQ(g, nullptr);
  for (const auto& dev : rt.Devices()) EXPECT_EQ(dev.share_free, 1.0) << "nothing held after bad input";
  EXPECT_EQ(accel_placement_group_destroy(reinterpret_cast<accel_placement_group_t>(copy)), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("is a future handle, not a placement group handle"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(accel_future_wait(nullptr, 0), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(rt.Counters().submitted, 1U) << "only the one good task was accepted";
}

TEST(Runtime, DestroyCancelsWhatWaitsAndFuturesStayReadable) {
  accel_future_t waiting = nullptr;
  std::atomic<int> released{0};
  {
    ScopedInstance instance(nullptr);
    accel_runtime_t rt = nullptr;
    ASSERT_EQ(accel_runtime_create(instance.get(), nullptr, &rt), ACCEL_SUCCESS) << accel_last_error();
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
    d.user_data = &released;
    d.release_user_data = [](void* p) { ++*static_cast<std::atomic<int>*>(p); };
    const accel_resource_request_t all = Request(8);
    accel_placement_group_t g = nullptr;
    ASSERT_EQ(MakeGroup(rt, {Request(1)}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g), ACCEL_SUCCESS);
    d.request = &all;  // cannot start while the group holds a device
    ASSERT_EQ(accel_task_submit(rt, &d, &waiting), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_future_query(waiting), ACCEL_NOT_READY);
    EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS);
    EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_ERROR_INVALID_HANDLE);
    EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS) << "a group handle outlives its runtime harmlessly";
  }
  EXPECT_EQ(accel_future_wait(waiting, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_NE(Message(waiting).find("the runtime was destroyed first"), std::string::npos) << Message(waiting);
  EXPECT_EQ(released.load(), 1) << "user data released exactly once";
  EXPECT_EQ(accel_future_release(waiting), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_release(waiting), ACCEL_ERROR_INVALID_HANDLE);
}

// Property: under a random stream of tasks with random shares and device
// counts on the 8-GPU node, the shares running on a device never pass 1.0,
// every task ends exactly once, and the counters add up.
// A submission behind a full node is tried alone (docs/scheduler.md, "Scheduling passes"): it waits with its
// reason, work that needs no device still starts, and when capacity comes back the full pass starts the oldest of
// the highest priority first, as if every pass had read the whole backlog.
TEST(Runtime, SubmissionsBehindAFullNodeWaitWithTheirReasonAndStartInOrder) {
  RuntimeFixture rt(nullptr, 12);  // workers for the eight holders, two of the backlog and the work without devices
  const auto devices = rt.Devices();
  ASSERT_EQ(devices.size(), 8U);
  const accel_resource_request_t whole = Request(1);
  const accel_resource_request_t half = Request(1, 0.5);
  std::vector<std::unique_ptr<Gate>> holders;
  for (size_t i = 0; i < devices.size(); ++i) {
    holders.push_back(std::make_unique<Gate>());
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(&whole, WaitFor(*holders.back()), &f), ACCEL_SUCCESS) << accel_last_error();
  }
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == devices.size(); }));
  std::mutex mutex;
  std::vector<int> started;  // the backlog's tasks, by index, in the order they started
  Gate backlog_gate;
  auto backlog_task = [&](int index) -> Body {
    return [&, index](accel_task_context_t) {
      {
        std::lock_guard lock(mutex);
        started.push_back(index);
      }
      backlog_gate.Wait();
      return ACCEL_SUCCESS;
    };
  };
  constexpr int kBacklog = 40;
  std::vector<accel_future_t> backlog(kBacklog + 2);
  for (int i = 0; i < kBacklog; ++i) {
    ASSERT_EQ(rt.Submit(i % 2 == 0 ? &whole : &half, backlog_task(i), &backlog[i]), ACCEL_SUCCESS)
        << accel_last_error();
  }
  // Work without devices that is not direct (it may retry) starts behind the backlog.
  accel_future_t free_work = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &free_work, {}, 1),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(free_work, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (int i = 0; i < kBacklog; ++i) {
    EXPECT_EQ(accel_future_query(backlog[i]), ACCEL_NOT_READY) << i;
    const std::string why = Message(backlog[i]);
    EXPECT_NE(why.find("capacity"), std::string::npos) << i << ": " << why;
  }
  EXPECT_EQ(rt.Counters().pending, static_cast<uint64_t>(kBacklog));
  for (const auto& d : rt.Devices()) EXPECT_EQ(d.share_free, 0.0);
  {
    std::lock_guard lock(mutex);
    EXPECT_TRUE(started.empty());
  }

  // One device comes back: the oldest waiting task takes it, and only that one.
  holders[0]->Open();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mutex);
    return !started.empty();
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(started, std::vector<int>{0});
  }
  // Submitted now, behind the backlog but at a higher priority: it takes the next device that comes back.
  accel_future_t urgent = nullptr;
  ASSERT_EQ(rt.Submit(&whole, backlog_task(kBacklog), &urgent, {}, 0, "urgent", nullptr, 5), ACCEL_SUCCESS);
  backlog[kBacklog] = urgent;
  EXPECT_EQ(accel_future_query(urgent), ACCEL_NOT_READY);
  holders[1]->Open();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mutex);
    return started.size() == 2;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(started, (std::vector<int>{0, kBacklog}));
  }
  // A request that can never fit is still refused at submission, not queued.
  const accel_resource_request_t nine = Request(9);
  accel_future_t never = nullptr;
  EXPECT_EQ(rt.Submit(
                &nine, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &never),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);

  for (auto& gate : holders) gate->Open();
  backlog_gate.Open();
  for (int i = 0; i <= kBacklog; ++i) {
    EXPECT_EQ(accel_future_wait(backlog[i], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << i << accel_last_error();
  }
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(started.size(), static_cast<size_t>(kBacklog + 1));
  }
  EXPECT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  EXPECT_EQ(rt.Counters().pending, 0U);
  for (const auto& d : rt.Devices()) EXPECT_EQ(d.share_free, 1.0);
}

TEST(RuntimeProperty, CapacityIsNeverOversubscribed) {
  RuntimeFixture rt(nullptr, 12);
  std::mutex m;
  std::map<accel_physical_device_t, double> in_use;
  std::atomic<int> violations{0};
  std::atomic<int> ran{0};
  std::mt19937 rng(20261204);
  const double shares[] = {0.125, 0.25, 0.5, 1.0};
  std::vector<accel_future_t> futures;
  std::vector<accel_resource_request_t> requests(300);
  for (auto& r : requests) {
    r = Request(1 + rng() % 3, shares[rng() % 4]);
  }
  for (auto& r : requests) {
    const double share = r.share;
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  &r,
                  [&, share](accel_task_context_t ctx) {
                    uint32_t n = 0;
                    accel_task_context_get_device_count(ctx, &n);
                    std::vector<accel_physical_device_t> mine(n);
                    for (uint32_t i = 0; i < n; ++i) accel_task_context_get_physical_device(ctx, i, &mine[i]);
                    {
                      std::lock_guard lock(m);
                      for (auto p : mine) {
                        in_use[p] += share;
                        if (in_use[p] > 1.0 + 1e-9) ++violations;
                      }
                    }
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                    {
                      std::lock_guard lock(m);
                      for (auto p : mine) in_use[p] -= share;
                    }
                    ++ran;
                    return ACCEL_SUCCESS;
                  },
                  &f),
              ACCEL_SUCCESS)
        << accel_last_error();
    futures.push_back(f);
  }
  for (auto f : futures) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(ran.load(), 300);
  const auto c = rt.Counters();
  EXPECT_EQ(c.submitted, 300U);
  EXPECT_EQ(c.started, 300U);
  EXPECT_EQ(c.finished, 300U);
  EXPECT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  for (const auto& d : rt.Devices()) EXPECT_EQ(d.share_free, 1.0);
}

// Random submissions and endings of one-device tasks of several shapes and priorities, of the default queue or of
// three weighted queues (one with a limit): after each step, once the runtime settles, no waiting task would fit on
// any device unless its queue is at its limit (the passes after submissions and endings try only part of what waits:
// docs/scheduler.md, "Scheduling passes"), nothing is oversubscribed, and in the end every task ran once.
void NoTaskWaitsWhileADeviceHasRoomForIt(bool queues) {
  struct Entry {
    accel_resource_request_t request{};
    accel_queue_t queue = nullptr;
    accel_future_t future = nullptr;
    Gate gate;
    std::atomic<bool> started{false};
    bool released = false;
  };
  std::vector<std::unique_ptr<Entry>> tasks;  // outlives the runtime
  RuntimeFixture rt(nullptr, 40);             // a worker for every task that can hold a device at once (8 x 4 quarters)
  struct OpenAll {
    std::vector<std::unique_ptr<Entry>>& tasks;
    ~OpenAll() {
      for (auto& e : tasks) e->gate.Open();  // before the runtime's destroy waits for them, on a failed assertion too
    }
  } open_all{tasks};
  const auto devices = rt.Devices();
  ASSERT_EQ(devices.size(), 8U);
  const uint64_t total = devices[0].memory_total;
  // With `queues`: dept (weight 1) > {a (weight 1), b (weight 2, at most 3 devices)}, and c (weight 3), no quotas.
  std::vector<accel_queue_t> leaves;
  accel_queue_t limited = nullptr;
  if (queues) {
    const auto make = [&](const char* name, double weight, double limit, accel_queue_t parent) {
      accel_queue_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_QUEUE_DESC;
      d.struct_size = sizeof(d);
      d.name = name;
      d.parent = parent;
      d.limit_devices = limit;
      d.weight = weight;
      accel_queue_t q = nullptr;
      EXPECT_EQ(accel_queue_create(rt.get(), &d, &q), ACCEL_SUCCESS) << accel_last_error();
      return q;
    };
    accel_queue_t dept = make("dept", 1.0, 0.0, nullptr);
    leaves = {make("a", 1.0, 0.0, dept), make("b", 2.0, 3.0, dept), make("c", 3.0, 0.0, nullptr)};
    limited = leaves[1];
    for (accel_queue_t q : leaves) ASSERT_NE(q, nullptr);
  }
  std::mt19937 rng(20261206);
  const double shares[] = {0.25, 0.5, 1.0};
  const uint64_t memories[] = {0, total / 4, total / 2};
  std::atomic<int> ran{0};
  const auto fits_nowhere = [&](const Entry& e) {
    // Memory 0 asks the share's part of the device's memory (docs/scheduler.md, "Requests"); give or take a page.
    const double memory =
        e.request.memory > 0 ? static_cast<double>(e.request.memory) : e.request.share * static_cast<double>(total);
    for (const auto& d : rt.Devices()) {
      if (d.share_free + 1e-9 >= e.request.share && static_cast<double>(d.memory_free) + 4096 >= memory) return false;
    }
    return true;
  };
  // A task of the limited queue may wait while a device has room: when its queue would pass its limit.
  const auto at_limit = [&](const Entry& e) {
    if (e.queue == nullptr || e.queue != limited) return false;
    accel_queue_usage_t u{};
    u.stype = ACCEL_STRUCTURE_TYPE_QUEUE_USAGE;
    u.struct_size = sizeof(u);
    EXPECT_EQ(accel_queue_get_usage(e.queue, &u), ACCEL_SUCCESS);
    return u.devices + e.request.share > 3.0 + 1e-9;
  };
  const auto settled = [&] {
    for (const auto& e : tasks) {
      if (e->released || e->started.load()) continue;
      if (!Message(e->future).empty() && !fits_nowhere(*e) && !at_limit(*e)) return false;
    }
    return true;
  };
  for (int step = 0; step < 400; ++step) {
    std::vector<Entry*> running;
    size_t waiting = 0;
    for (const auto& e : tasks) {
      if (e->released) continue;
      if (e->started.load()) {
        running.push_back(e.get());
      } else {
        ++waiting;
      }
    }
    if (running.empty() || (waiting < 50 && rng() % 5 < 3)) {
      auto e = std::make_unique<Entry>();
      e->request = Request(1, shares[rng() % 3], memories[rng() % 3]);
      Entry* raw = e.get();
      const int32_t priority = static_cast<int32_t>(rng() % 3);
      if (!leaves.empty()) raw->queue = leaves[rng() % leaves.size()];
      ASSERT_EQ(rt.Submit(
                    &raw->request,
                    [raw, &ran](accel_task_context_t) {
                      raw->started = true;
                      raw->gate.Wait();
                      ++ran;
                      return ACCEL_SUCCESS;
                    },
                    &raw->future, {}, 0, nullptr, raw->queue, priority),
                ACCEL_SUCCESS)
          << accel_last_error();
      tasks.push_back(std::move(e));
    } else {
      Entry* e = running[rng() % running.size()];
      e->gate.Open();
      ASSERT_EQ(accel_future_wait(e->future, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
      e->released = true;
    }
    ASSERT_TRUE(Eventually(settled)) << "step " << step << ": a waiting task fits on a device with room: " << [&] {
      std::ostringstream text;
      for (const auto& d : rt.Devices()) text << "[" << d.share_free << " " << (d.memory_free >> 30) << " GiB] ";
      for (const auto& e : tasks) {
        if (e->released || e->started.load() || Message(e->future).empty() || fits_nowhere(*e) || at_limit(*e)) {
          continue;
        }
        text << "\n  share " << e->request.share << " memory " << (e->request.memory >> 30)
             << " GiB: " << Message(e->future);
      }
      return text.str();
    }();
    for (const auto& d : rt.Devices()) {
      ASSERT_GE(d.share_free, -1e-9);
      ASSERT_LE(d.memory_free, total);
    }
  }
  for (auto& e : tasks) e->gate.Open();
  for (auto& e : tasks) EXPECT_EQ(accel_future_wait(e->future, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(ran.load(), static_cast<int>(tasks.size()));
  EXPECT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  for (const auto& d : rt.Devices()) EXPECT_EQ(d.share_free, 1.0);
}

TEST(RuntimeProperty, NoTaskWaitsWhileADeviceHasRoomForIt) { NoTaskWaitsWhileADeviceHasRoomForIt(false); }

TEST(RuntimeProperty, NoTaskOfWeightedQueuesWaitsWhileADeviceHasRoomForIt) {
  NoTaskWaitsWhileADeviceHasRoomForIt(true);
}
}  // namespace
