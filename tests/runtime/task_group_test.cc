// Task groups (1.4; docs/scheduler.md, "Task groups"): tasks submitted
// without a future each and waited for together. These tests pin the wait
// (every task ended, the first failure and the count of failures, then a
// clear group), cancellation as a whole, refused submissions, a group that
// outlives its runtime or its handle, and bad input.
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

// Submits `body` into `group`; its user data is released by the runtime (by the caller when refused).
accel_status_t GroupSubmit(accel_task_group_t group, Body body, const accel_resource_request_t* request = nullptr,
                           const char* name = nullptr) {
  auto* owned = new Body(std::move(body));
  const accel_task_desc_t d = BodyDesc(owned, request, name);
  const accel_status_t status = accel_task_group_submit(group, &d);
  if (status != ACCEL_SUCCESS) delete owned;
  return status;
}

std::string LastError() { return accel_last_error(); }

// A task body that counts its runs in `n`.
Body CountInto(std::atomic<int>& n) {
  return [&n](accel_task_context_t) {
    ++n;
    return ACCEL_SUCCESS;
  };
}

TEST(TaskGroups, AWaitReturnsOnceEveryTaskEndedAndTheWaiterRunsItsOwnTasks) {
  RuntimeFixture rt(nullptr, 2);
  constexpr int kClients = 2;
  constexpr int kTasks = 3000;
  std::atomic<int> ran{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      accel_task_group_t g = NewTaskGroup(rt.get());
      for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kTasks / 3; ++i) {
          ASSERT_EQ(GroupSubmit(g, CountInto(ran)), ACCEL_SUCCESS) << LastError();
        }
        EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
        // Every task submitted before the wait has ended when it returns.
        EXPECT_GE(ran.load(), (round + 1) * (kTasks / 3));
      }
      EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS) << LastError();
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ran.load(), kClients * kTasks);
  const accel_runtime_counters_t c = rt.Counters();
  EXPECT_EQ(c.submitted, static_cast<uint64_t>(kClients * kTasks));
  EXPECT_EQ(c.finished, static_cast<uint64_t>(kClients * kTasks));
}

TEST(TaskGroups, TheWaitingThreadRunsTheTasksItQueuedThatNoWorkerStartedNewestFirst) {
  RuntimeFixture rt(nullptr, 2);
  // Both workers held: nothing but the waiting thread can run the group's tasks.
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, 2, gate, started);
  accel_task_group_t g = NewTaskGroup(rt.get());
  const auto me = std::this_thread::get_id();
  std::vector<int> order;  // written only by this thread (checked below)
  std::atomic<int> elsewhere{0};
  constexpr int kTasks = 100;
  for (int i = 0; i < kTasks; ++i) {
    ASSERT_EQ(GroupSubmit(g,
                          [&, i](accel_task_context_t) {
                            if (std::this_thread::get_id() == me) {
                              order.push_back(i);
                            } else {
                              ++elsewhere;
                            }
                            return ACCEL_SUCCESS;
                          }),
              ACCEL_SUCCESS);
  }
  EXPECT_EQ(accel_task_group_wait(g, 1000000), ACCEL_ERROR_TIMEOUT);  // a finite wait runs nothing
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(elsewhere.load(), 0);
  // As a work-stealing deque's owner: the newest first (workers, when free, take the oldest).
  std::vector<int> newest_first(kTasks);
  for (int i = 0; i < kTasks; ++i) newest_first[i] = kTasks - 1 - i;
  EXPECT_EQ(order, newest_first);

  // More than the thread keeps track of (4,096): the oldest it forgot still run here, from its shard.
  std::atomic<int> ran{0};
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(GroupSubmit(g, CountInto(ran)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(ran.load(), 5000);
  gate.Open();
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, ThreadsSubmittingIntoOneGroupWhileOthersWaitLoseNoTask) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt.get(), "shared");
  constexpr int kSubmitters = 4;
  constexpr int kEach = 2000;
  std::atomic<int> ran{0};
  std::atomic<int> submitted{0};  // counted after each submission returned
  std::atomic<bool> submitting{true};
  std::atomic<bool> waiting{false};  // the submitters start once the waiter does: its waits overlap them
  std::vector<std::thread> threads;
  for (int t = 0; t < kSubmitters; ++t) {
    threads.emplace_back([&] {
      while (!waiting.load()) std::this_thread::yield();
      for (int i = 0; i < kEach; ++i) {
        ASSERT_EQ(GroupSubmit(g, CountInto(ran)), ACCEL_SUCCESS) << LastError();
        ++submitted;
      }
    });
  }
  // A waiter meanwhile: each return means every task whose submission returned before the wait began has ended,
  // whichever thread slot counted it.
  int waits = 0;
  std::thread waiter([&] {
    waiting = true;
    do {
      const int before = submitted.load();
      EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
      EXPECT_GE(ran.load(), before);
      ++waits;
    } while (submitting.load());
  });
  for (auto& t : threads) t.join();
  submitting = false;
  waiter.join();
  EXPECT_GT(waits, 0);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(ran.load(), kSubmitters * kEach);
  EXPECT_EQ(accel_task_group_query(g), ACCEL_SUCCESS);
  EXPECT_EQ(rt.Counters().finished, static_cast<uint64_t>(kSubmitters * kEach));
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, TasksWithDevicesCountInTheGroupAsDirectOnesDo) {
  RuntimeFixture rt;
  accel_task_group_t g = NewTaskGroup(rt.get(), "mixed");
  const accel_resource_request_t one = Request(1);
  std::atomic<int> on_device{0};
  std::atomic<int> direct{0};
  for (int i = 0; i < 24; ++i) {  // three rounds of the 8 devices
    ASSERT_EQ(GroupSubmit(
                  g,
                  [&](accel_task_context_t ctx) {
                    uint32_t n = 0;
                    EXPECT_EQ(accel_task_context_get_device_count(ctx, &n), ACCEL_SUCCESS);
                    EXPECT_EQ(n, 1U);
                    std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    ++on_device;
                    return ACCEL_SUCCESS;
                  },
                  &one),
              ACCEL_SUCCESS)
        << LastError();
    ASSERT_EQ(GroupSubmit(g, CountInto(direct)), ACCEL_SUCCESS);
  }
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(on_device.load(), 24);
  EXPECT_EQ(direct.load(), 24);
  EXPECT_EQ(rt.Counters().running, 0U);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, AWaitReportsTheFirstFailureAndHowManyFailedThenTheGroupIsClear) {
  RuntimeFixture rt(nullptr, 1);
  accel_task_group_t g = NewTaskGroup(rt.get(), "g");
  for (int i = 0; i < 10; ++i) {
    const bool bad = i % 4 == 1;  // 1, 5, 9
    const std::string name = (bad ? "bad-" : "good-") + std::to_string(i / 4);
    ASSERT_EQ(GroupSubmit(
                  g,
                  [bad, i](accel_task_context_t) {
                    if (!bad) return ACCEL_SUCCESS;
                    return accel_set_last_error(i == 1 ? ACCEL_ERROR_RESOURCE_EXHAUSTED : ACCEL_ERROR_INTERNAL,
                                                ("broke at " + std::to_string(i)).c_str());
                  },
                  nullptr, name.c_str()),
              ACCEL_SUCCESS);
  }
  const accel_status_t s = accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE);
  const std::string message = LastError();
  EXPECT_TRUE(s == ACCEL_ERROR_RESOURCE_EXHAUSTED || s == ACCEL_ERROR_INTERNAL) << accel_status_name(s);
  EXPECT_NE(message.find("accel_task_group_wait: 3 of the tasks of task group 'g' failed; the first: "),
            std::string::npos)
      << message;
  // Which failure ended first depends on who ran what (the worker or the waiting thread): one of the three, named.
  EXPECT_TRUE(message.find("('bad-0'): broke at 1") != std::string::npos ||
              message.find("('bad-1'): broke at 5") != std::string::npos ||
              message.find("('bad-2'): broke at 9") != std::string::npos)
      << message;
  // Reported once: the group is clear and takes new tasks.
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  std::atomic<bool> ran{false};
  ASSERT_EQ(GroupSubmit(g,
                        [&](accel_task_context_t) {
                          ran = true;
                          return ACCEL_SUCCESS;
                        }),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_TRUE(ran.load());
  const accel_runtime_counters_t c = rt.Counters();
  EXPECT_EQ(c.failed, 3U);
  EXPECT_EQ(c.finished, 8U);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, CancelEndsTasksNotStartedTellsRunningOnesAndLastsUntilAWaitReturns) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt.get(), "c");
  // Two running tasks that hold every device and watch for the cancel.
  std::atomic<int> started{0};
  std::atomic<int> saw_cancel{0};
  const accel_resource_request_t four = Request(4);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(GroupSubmit(
                  g,
                  [&](accel_task_context_t ctx) {
                    ++started;
                    uint32_t cancelled = 0;
                    const bool seen = Eventually([&] {
                      EXPECT_EQ(accel_task_context_is_cancelled(ctx, &cancelled), ACCEL_SUCCESS);
                      return cancelled == 1;
                    });
                    if (seen) ++saw_cancel;
                    return ACCEL_SUCCESS;  // ran to its end: a success
                  },
                  &four),
              ACCEL_SUCCESS)
        << LastError();
  }
  ASSERT_TRUE(Eventually([&] { return started.load() == 2; }));
  // Behind them: tasks waiting for a device, and direct tasks the busy workers have not started.
  std::atomic<int> ran_after{0};
  const accel_resource_request_t one = Request(1);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(GroupSubmit(g, CountInto(ran_after), &one), ACCEL_SUCCESS);
    ASSERT_EQ(GroupSubmit(g, CountInto(ran_after)), ACCEL_SUCCESS);
  }
  ASSERT_EQ(accel_task_group_cancel(g), ACCEL_SUCCESS) << LastError();
  // Submitted after the cancel and before the wait returned: cancelled too.
  ASSERT_EQ(GroupSubmit(g, CountInto(ran_after)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  const std::string message = LastError();
  EXPECT_NE(message.find("task group 'c' was cancelled: 11 of its tasks did not succeed; the first: "),
            std::string::npos)
      << message;
  EXPECT_EQ(saw_cancel.load(), 2);
  EXPECT_EQ(ran_after.load(), 0);
  EXPECT_EQ(rt.Counters().cancelled, 11U);
  // The wait cleared the cancel: the group runs tasks again.
  ASSERT_EQ(GroupSubmit(g, CountInto(ran_after), &one), ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(ran_after.load(), 1);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, AFiniteWaitTimesOutAndTheTasksGoOn) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt.get(), "slow");
  Gate gate;
  ASSERT_EQ(GroupSubmit(g,
                        [&](accel_task_context_t) {
                          gate.Wait();
                          return ACCEL_SUCCESS;
                        }),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, 2000000), ACCEL_ERROR_TIMEOUT);
  EXPECT_NE(LastError().find("task group 'slow' still had 1 task(s) running or waiting after 2000000 ns"),
            std::string::npos)
      << LastError();
  EXPECT_EQ(accel_task_group_query(g), ACCEL_NOT_READY);
  gate.Open();
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(accel_task_group_query(g), ACCEL_SUCCESS);
  // A task that fails with ACCEL_ERROR_TIMEOUT: the wait returns that code, and the query says all ended.
  ASSERT_EQ(GroupSubmit(g, [](accel_task_context_t) { return accel_set_last_error(ACCEL_ERROR_TIMEOUT, "too slow"); }),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, 60'000'000'000), ACCEL_ERROR_TIMEOUT);
  EXPECT_NE(LastError().find("1 of the tasks of task group 'slow' failed; the first: task "), std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find(": too slow"), std::string::npos) << LastError();
  EXPECT_EQ(accel_task_group_query(g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_query(nullptr), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(TaskGroups, ADestroyedHandleLeavesItsTasksToEndAsUsual) {
  std::atomic<int> ran{0};
  std::atomic<int> released{0};
  {
    RuntimeFixture rt(nullptr, 2);
    accel_task_group_t g = NewTaskGroup(rt.get());
    Gate gate;
    for (int i = 0; i < 20; ++i) {
      accel_task_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
      d.struct_size = sizeof(d);
      d.function = [](accel_task_context_t, void* user) {
        static_cast<std::atomic<int>*>(user)->fetch_add(1);
        return ACCEL_SUCCESS;
      };
      d.user_data = &ran;
      d.release_user_data = nullptr;
      ASSERT_EQ(accel_task_group_submit(g, &d), ACCEL_SUCCESS) << LastError();
    }
    ASSERT_EQ(GroupSubmit(g,
                          [&, keep = std::shared_ptr<int>(new int(0),
                                                          [&](int* p) {
                                                            ++released;
                                                            delete p;
                                                          })](accel_task_context_t) {
                            gate.Wait();
                            return ACCEL_SUCCESS;
                          }),
              ACCEL_SUCCESS);
    EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS) << LastError();
    EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INVALID_HANDLE);
    EXPECT_NE(LastError().find("'group' is a stale task group handle"), std::string::npos) << LastError();
    gate.Open();
    EXPECT_TRUE(Eventually([&] { return ran.load() == 20 && released.load() == 1; }));
  }
  EXPECT_EQ(ran.load(), 20);
  EXPECT_EQ(released.load(), 1);
}

TEST(TaskGroups, ARuntimeDestroyEndsTheTasksItHasAndTheGroupStaysWaitable) {
  std::atomic<int> ran{0};
  auto* rt = new RuntimeFixture(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt->get(), "left");
  // More devices than the node has free: the tasks behind the first eight wait, and the destroy cancels them.
  const accel_resource_request_t one = Request(1);
  Gate gate;
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(GroupSubmit(
                  g,
                  [&](accel_task_context_t) {
                    gate.Wait();
                    ++ran;
                    return ACCEL_SUCCESS;
                  },
                  &one),
              ACCEL_SUCCESS);
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(GroupSubmit(g, CountInto(ran), &one), ACCEL_SUCCESS);
  }
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.Open();
  });
  delete rt;  // cancels the 4 waiting tasks; waits for those that run
  opener.join();
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_NE(LastError().find("the runtime was destroyed first"), std::string::npos) << LastError();
  EXPECT_LE(ran.load(), 8);
  EXPECT_EQ(GroupSubmit(g, [](accel_task_context_t) { return ACCEL_SUCCESS; }), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(LastError().find("'group' belongs to a runtime that was destroyed"), std::string::npos) << LastError();
  EXPECT_EQ(accel_task_group_cancel(g), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS) << LastError();
}

TEST(TaskGroups, BadInputIsRefusedWithItsReasonAndChangesNothing) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt.get(), "b");
  accel_task_group_t out = nullptr;
  EXPECT_EQ(accel_task_group_create(rt.get(), nullptr, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'out_group' is NULL"), std::string::npos) << LastError();
  EXPECT_EQ(accel_task_group_create(nullptr, nullptr, &out), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(out, nullptr);
  accel_task_group_desc_t bad{};
  bad.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  bad.struct_size = sizeof(bad);
  EXPECT_EQ(accel_task_group_create(rt.get(), &bad, &out), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'desc' has stype 2002, expected 2020"), std::string::npos) << LastError();

  EXPECT_EQ(accel_task_group_submit(nullptr, nullptr), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(LastError().find("'group' is NULL (expected a task group handle)"), std::string::npos) << LastError();
  EXPECT_EQ(accel_task_group_submit(g, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'desc' is NULL"), std::string::npos) << LastError();
  accel_task_desc_t no_function{};
  no_function.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  no_function.struct_size = sizeof(no_function);
  EXPECT_EQ(accel_task_group_submit(g, &no_function), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("'desc->function' is NULL"), std::string::npos) << LastError();
  // A request no device could ever hold: refused at submission, and the group does not count it.
  const accel_resource_request_t nine = Request(9);
  EXPECT_EQ(GroupSubmit(
                g, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &nine),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(accel_task_group_wait(g, 0), ACCEL_SUCCESS) << LastError();
  // A future is not a group, nor a group a future.
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &f),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(reinterpret_cast<accel_task_group_t>(f), 0), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(LastError().find("'group' is a future handle, not a task group handle"), std::string::npos) << LastError();
  EXPECT_EQ(accel_future_query(reinterpret_cast<accel_future_t>(g)), ACCEL_ERROR_INVALID_HANDLE);
  // A task that waits for its own group would count itself.
  accel_status_t inner = ACCEL_SUCCESS;
  std::string inner_message;
  ASSERT_EQ(GroupSubmit(
                g,
                [&](accel_task_context_t) {
                  inner = accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE);
                  inner_message = LastError();
                  return ACCEL_SUCCESS;
                },
                nullptr, "self"),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << LastError();
  EXPECT_EQ(inner, ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(inner_message.find("('self') waits for its own task group 'b'"), std::string::npos) << inner_message;
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_task_group_destroy(g), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(LastError().find("'group' is a stale task group handle"), std::string::npos) << LastError();
}

}  // namespace
