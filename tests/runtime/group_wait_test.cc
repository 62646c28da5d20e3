// Placement groups that wait (ACCEL_PLACEMENT_GROUP_WAIT, libaccel-runtime
// 1.2; docs/scheduler.md, "Placement groups") on the sim backend's 8-GPU
// node: a group that does not fit now is pending and holds nothing, says why,
// is placed whole once the room frees, runs the tasks that waited for it; one
// that could never fit is refused at once; the oldest pending group holds
// the devices it waits for from later work; destroying it (or the runtime)
// while pending ends its waits and cancels its tasks; bad flags are named.
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

// A group named 'later', PACK at clique, made with `flags` (ACCEL_PLACEMENT_GROUP_WAIT unless told).
accel_status_t MakeWaitingGroup(accel_runtime_t rt, std::vector<accel_resource_request_t> bundles,
                                accel_placement_group_t* out, uint32_t flags = ACCEL_PLACEMENT_GROUP_WAIT) {
  return MakeGroup(rt, std::move(bundles), ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_CLIQUE, out, 1, flags,
                   "later");
}

std::string GroupMessage(accel_placement_group_t g) {
  size_t n = 0;
  EXPECT_EQ(accel_placement_group_get_message(g, 0, nullptr, &n), ACCEL_SUCCESS);
  std::string text(n, '\0');
  EXPECT_EQ(accel_placement_group_get_message(g, n, text.data(), &n), ACCEL_SUCCESS);
  if (!text.empty()) text.resize(n - 1);
  return text;
}

// A request for `devices` whole devices of bundle `bundle` of `group`.
accel_resource_request_t GroupRequest(accel_placement_group_t group, uint32_t bundle, uint32_t devices) {
  accel_resource_request_t r = Request(devices);
  r.placement_group = group;
  r.bundle_index = bundle;
  return r;
}

double FreeShare(const RuntimeFixture& rt) {
  double free = 0;
  for (const auto& d : rt.Devices()) free += d.share_free;
  return free;
}

// One task on one device that runs until `gate` opens; returns its future once it holds the device (NULL on failure).
accel_future_t SubmitBusy(RuntimeFixture& rt, Gate& gate) {
  const accel_resource_request_t one = Request(1);
  accel_future_t busy = nullptr;
  const accel_status_t status = rt.Submit(
      &one,
      [&gate](accel_task_context_t) {
        gate.Wait();
        return ACCEL_SUCCESS;
      },
      &busy);
  EXPECT_EQ(status, ACCEL_SUCCESS) << accel_last_error();
  if (status != ACCEL_SUCCESS || !Eventually([&] { return FreeShare(rt) == 7.0; })) return nullptr;
  return busy;
}

TEST(GroupWait, APendingGroupHoldsNothingAndIsPlacedWholeOnceTheRoomFrees) {
  RuntimeFixture rt;
  // All eight devices held by a first group.
  accel_placement_group_t all = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), std::vector<accel_resource_request_t>(8, Request(1)), ACCEL_PLACEMENT_STRATEGY_PACK,
                      ACCEL_TOPOLOGY_LEVEL_CLIQUE, &all),
            ACCEL_SUCCESS)
      << accel_last_error();
  const auto free_before = rt.Devices();

  // Without the flag: refused now, as in 1.1.
  accel_placement_group_t refused = nullptr;
  EXPECT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(4, Request(1)), &refused, 0),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused, nullptr);

  // With it: pending, holding nothing, saying why.
  accel_placement_group_t later = nullptr;
  ASSERT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(4, Request(1)), &later), ACCEL_SUCCESS)
      << accel_last_error();
  const auto free_after = rt.Devices();
  for (size_t i = 0; i < free_before.size(); ++i) EXPECT_EQ(free_before[i].share_free, free_after[i].share_free);
  uint32_t n = 99;
  EXPECT_EQ(accel_placement_group_get_devices(later, &n, nullptr), ACCEL_NOT_READY);
  EXPECT_EQ(n, 0U);
  EXPECT_FALSE(GroupMessage(later).empty());
  EXPECT_NE(GroupMessage(later), "placed");
  EXPECT_EQ(accel_placement_group_wait(later, 1000000), ACCEL_ERROR_TIMEOUT);
  EXPECT_NE(std::string(accel_last_error()).find("not placed within 1000000 ns"), std::string::npos)
      << accel_last_error();

  // A task into its bundle 2 waits for it, and says so.
  const accel_resource_request_t inside = GroupRequest(later, 2, 1);
  std::atomic<accel_physical_device_t> ran_on{nullptr};
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                &inside,
                [&](accel_task_context_t ctx) {
                  accel_physical_device_t p = nullptr;
                  EXPECT_EQ(accel_task_context_get_physical_device(ctx, 0, &p), ACCEL_SUCCESS);
                  ran_on = p;
                  return ACCEL_SUCCESS;
                },
                &f),
            ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(accel_future_wait(f, 20000000), ACCEL_ERROR_TIMEOUT);
  EXPECT_NE(Message(f).find("placement group 'later' is not placed yet"), std::string::npos) << Message(f);

  // The room frees: the group is placed whole, the task runs inside it.
  std::thread waiter([&] { EXPECT_EQ(accel_placement_group_wait(later, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS); });
  EXPECT_EQ(accel_placement_group_destroy(all), ACCEL_SUCCESS);
  waiter.join();
  EXPECT_EQ(GroupMessage(later), "placed");
  const auto devices = GroupDevices(later);
  ASSERT_EQ(devices.size(), 4U);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  bool in_bundle = false;
  for (const auto& d : devices) in_bundle = in_bundle || (d.bundle == 2 && d.physical_device == ran_on.load());
  EXPECT_TRUE(in_bundle) << "the task ran on its bundle's device";
  EXPECT_DOUBLE_EQ(FreeShare(rt), 4.0);
  EXPECT_EQ(accel_placement_group_wait(later, 0), ACCEL_SUCCESS) << "a placed group returns at once";
  EXPECT_EQ(accel_placement_group_destroy(later), ACCEL_SUCCESS);
  EXPECT_DOUBLE_EQ(FreeShare(rt), 8.0);
}

// The oldest pending group holds the devices it waits for from later work (docs/scheduler.md, "Placement groups"):
// smaller tasks, and groups made after it, do not take them as they free, so a stream of small work cannot keep a
// gang waiting forever. Outside a scheduling pass nothing is held: the free capacity reads as it is.
TEST(GroupWait, APendingGroupHoldsItsDevicesFromLaterWork) {
  RuntimeFixture rt;
  Gate gate;
  const accel_resource_request_t one = Request(1);
  accel_future_t busy = SubmitBusy(rt, gate);
  ASSERT_NE(busy, nullptr);

  accel_placement_group_t later = nullptr;
  ASSERT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(8, Request(1)), &later), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_DOUBLE_EQ(FreeShare(rt), 7.0) << "a pending group holds nothing between passes";

  // Small tasks find every device held for it, though seven are free, and say so.
  std::atomic<int> small_ran{0};
  std::vector<accel_future_t> small;
  for (int i = 0; i < 3; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  &one,
                  [&](accel_task_context_t) {
                    ++small_ran;
                    return ACCEL_SUCCESS;
                  },
                  &f),
              ACCEL_SUCCESS);
    small.push_back(f);
  }
  for (accel_future_t f : small) {
    EXPECT_EQ(accel_future_query(f), ACCEL_NOT_READY);
    EXPECT_NE(Message(f).find("device(s) 0, 1, 2, 3, 4, 5, 6, 7 are held for placement group 'later'"),
              std::string::npos)
        << Message(f);
  }
  // A group made after it does not take them either.
  accel_placement_group_t after = nullptr;
  EXPECT_EQ(MakeGroup(rt.get(), std::vector<accel_resource_request_t>(2, Request(1)), ACCEL_PLACEMENT_STRATEGY_PACK,
                      ACCEL_TOPOLOGY_LEVEL_NODE, &after),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("held for placement group 'later'"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(small_ran.load(), 0);

  // The busy task ends: the group gets all eight, the small tasks still wait (now for capacity).
  gate.Open();
  EXPECT_EQ(accel_future_wait(busy, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_placement_group_wait(later, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(GroupDevices(later).size(), 8U);
  EXPECT_EQ(small_ran.load(), 0);
  for (accel_future_t f : small) EXPECT_EQ(accel_future_query(f), ACCEL_NOT_READY);

  // Its end frees them for the small tasks.
  EXPECT_EQ(accel_placement_group_destroy(later), ACCEL_SUCCESS);
  for (accel_future_t f : small) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  EXPECT_EQ(small_ran.load(), 3);
  EXPECT_DOUBLE_EQ(FreeShare(rt), 8.0);
}

// A task of several devices that waits holds them, as a pending group does: smaller tasks after it do not
// keep taking the devices it waits for (docs/scheduler.md, "Large tasks").
TEST(GroupWait, AWaitingLargeTaskHoldsItsDevicesFromSmallerTasks) {
  RuntimeFixture rt;
  Gate gate;
  const accel_resource_request_t one = Request(1);
  accel_future_t busy = SubmitBusy(rt, gate);
  ASSERT_NE(busy, nullptr);

  std::atomic<int> order{0};
  std::atomic<int> large_at{-1};
  const accel_resource_request_t eight = Request(8);
  accel_future_t large = nullptr;
  ASSERT_EQ(rt.Submit(
                &eight,
                [&](accel_task_context_t) {
                  large_at = order++;
                  return ACCEL_SUCCESS;
                },
                &large),
            ACCEL_SUCCESS);
  std::vector<accel_future_t> small;
  std::atomic<int> small_first{-1};
  for (int i = 0; i < 3; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  &one,
                  [&](accel_task_context_t) {
                    int expected = -1;
                    const int at = order++;
                    small_first.compare_exchange_strong(expected, at);
                    return ACCEL_SUCCESS;
                  },
                  &f),
              ACCEL_SUCCESS);
    small.push_back(f);
  }
  // Seven devices are free, but every one is held for the large task.
  EXPECT_EQ(accel_future_query(large), ACCEL_NOT_READY);
  for (accel_future_t f : small) {
    EXPECT_EQ(accel_future_query(f), ACCEL_NOT_READY);
    EXPECT_NE(Message(f).find("are held for task "), std::string::npos) << Message(f);
  }
  EXPECT_DOUBLE_EQ(FreeShare(rt), 7.0) << "the hold lasts a scheduling pass: nothing is taken between passes";

  // The busy task ends: the large one runs first, then the small ones.
  gate.Open();
  EXPECT_EQ(accel_future_wait(busy, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(large, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(large);
  for (accel_future_t f : small) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  EXPECT_EQ(large_at.load(), 0);
  EXPECT_GE(small_first.load(), 1);
  EXPECT_DOUBLE_EQ(FreeShare(rt), 8.0);
}

TEST(GroupWait, AGroupThatCouldNeverFitIsRefusedAtOnce) {
  RuntimeFixture rt;
  accel_placement_group_t g = nullptr;
  EXPECT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(9, Request(1)), &g),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("could ever hold it, even all free"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(g, nullptr);
  EXPECT_DOUBLE_EQ(FreeShare(rt), 8.0);
}

TEST(GroupWait, DestroyingAPendingGroupEndsItsWaitsAndCancelsItsTasks) {
  RuntimeFixture rt;
  accel_placement_group_t all = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), std::vector<accel_resource_request_t>(8, Request(1)), ACCEL_PLACEMENT_STRATEGY_PACK,
                      ACCEL_TOPOLOGY_LEVEL_CLIQUE, &all),
            ACCEL_SUCCESS);
  accel_placement_group_t later = nullptr;
  ASSERT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(2, Request(1)), &later), ACCEL_SUCCESS);
  const accel_resource_request_t inside = GroupRequest(later, 0, 1);
  std::atomic<bool> ran{false};
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                &inside,
                [&](accel_task_context_t) {
                  ran = true;
                  return ACCEL_SUCCESS;
                },
                &f),
            ACCEL_SUCCESS);
  accel_status_t waited = ACCEL_SUCCESS;
  std::thread waiter([&] { waited = accel_placement_group_wait(later, ACCEL_TIMEOUT_INFINITE); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(accel_placement_group_destroy(later), ACCEL_SUCCESS);
  waiter.join();
  EXPECT_EQ(waited, ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_FALSE(ran.load());
  // Freeing the room later places nothing of it.
  EXPECT_EQ(accel_placement_group_destroy(all), ACCEL_SUCCESS);
  EXPECT_DOUBLE_EQ(FreeShare(rt), 8.0);

  // The runtime destroyed while a group is pending: its wait ends too.
  accel_placement_group_t again_all = nullptr;
  accel_placement_group_t again_later = nullptr;
  {
    ScopedInstance instance(nullptr);
    accel_runtime_t other = nullptr;
    ASSERT_EQ(accel_runtime_create(instance.get(), nullptr, &other), ACCEL_SUCCESS);
    ASSERT_EQ(MakeGroup(other, std::vector<accel_resource_request_t>(8, Request(1)), ACCEL_PLACEMENT_STRATEGY_PACK,
                        ACCEL_TOPOLOGY_LEVEL_CLIQUE, &again_all),
              ACCEL_SUCCESS);
    ASSERT_EQ(MakeWaitingGroup(other, std::vector<accel_resource_request_t>(1, Request(1)), &again_later),
              ACCEL_SUCCESS);
    std::thread w([&] { waited = accel_placement_group_wait(again_later, ACCEL_TIMEOUT_INFINITE); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(accel_runtime_destroy(other), ACCEL_SUCCESS);
    w.join();
    EXPECT_EQ(waited, ACCEL_ERROR_CANCELLED);
  }
  EXPECT_EQ(accel_placement_group_destroy(again_later), ACCEL_SUCCESS);
  EXPECT_EQ(accel_placement_group_destroy(again_all), ACCEL_SUCCESS);
}

TEST(GroupWait, BadFlagsAndHandlesAreNamed) {
  RuntimeFixture rt;
  accel_placement_group_t g = nullptr;
  EXPECT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(1, Request(1)), &g, 0x6),
            ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->flags' 0x6"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_placement_group_wait(nullptr, 0), ACCEL_ERROR_INVALID_HANDLE);
  size_t n = 0;
  EXPECT_EQ(accel_placement_group_get_message(nullptr, 0, nullptr, &n), ACCEL_ERROR_INVALID_HANDLE);
  // A group placed at once with the flag is simply placed.
  ASSERT_EQ(MakeWaitingGroup(rt.get(), std::vector<accel_resource_request_t>(2, Request(1)), &g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_placement_group_wait(g, 0), ACCEL_SUCCESS);
  EXPECT_EQ(GroupDevices(g).size(), 2U);
  EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
}

}  // namespace
