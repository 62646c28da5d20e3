// Light group tasks (docs/scheduler.md, "Light group tasks"): group tasks that ask nothing of the scheduler skip
// the Task object and queue in their group's lane of the submitting thread. These tests pin what that path must
// keep of a direct task: the refusal of a wait for its own group, a full lane falling back to the direct path,
// nesting (a light task waiting for a group of light tasks), the event log (on: no light path), the counters, a
// runtime's destroy ending queued light tasks as cancelled with their user data released, and the group pinned (not
// counted) by a submission while another thread destroys the group or its runtime, or runs its own tasks in a group
// wait as the runtime is destroyed (docs/threading.md, "Pinned task groups").
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

// Submits `body` with no name, request or anything else: a light task where the path allows.
accel_status_t Light(accel_task_group_t group, Body body) {
  auto* owned = new Body(std::move(body));
  const accel_task_desc_t d = BodyDesc(owned);
  const accel_status_t status = accel_task_group_submit(group, &d);
  if (status != ACCEL_SUCCESS) delete owned;
  return status;
}

TEST(LightTasks, ALightTaskThatWaitsForItsOwnGroupIsRefused) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t g = NewTaskGroup(rt.get(), "own");
  accel_status_t inner = ACCEL_SUCCESS;
  std::string message;
  ASSERT_EQ(Light(g,
                  [&](accel_task_context_t) {
                    inner = accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE);
                    message = accel_last_error();
                    return ACCEL_SUCCESS;
                  }),
            ACCEL_SUCCESS);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(inner, ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(message.find("waits for its own task group 'own'"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("accel_task_group_wait: task ", 0), 0U) << message;
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(LightTasks, AFullLaneSendsTheRestByTheDirectPathAndEveryTaskRunsOnce) {
  RuntimeFixture rt(nullptr, 2);
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, 2, gate, started);  // nobody takes from the lane: it fills
  accel_task_group_t g = NewTaskGroup(rt.get(), "full");
  constexpr int kTasks = 6000;  // past a lane's 4,096
  std::vector<std::atomic<int>> runs(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    ASSERT_EQ(Light(g,
                    [&runs, i](accel_task_context_t) {
                      ++runs[i];
                      return ACCEL_SUCCESS;
                    }),
              ACCEL_SUCCESS)
        << i << ": " << accel_last_error();
  }
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return rt.Counters().finished == kTasks + 2U; })) << rt.Counters().finished;
  const accel_runtime_counters_t c = rt.Counters();
  EXPECT_EQ(c.submitted, kTasks + 2U);
  EXPECT_EQ(c.running, 0U);
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(LightTasks, ALightTaskRunsAGroupOfLightTasksInsideItAndKeepsItsContext) {
  RuntimeFixture rt(nullptr, 2);
  accel_task_group_t outer = NewTaskGroup(rt.get(), "outer");
  std::atomic<int> inner_ran{0};
  std::atomic<int> contexts_ok{0};
  constexpr int kOuter = 8;
  constexpr int kInner = 50;
  for (int o = 0; o < kOuter; ++o) {
    ASSERT_EQ(Light(outer,
                    [&](accel_task_context_t context) {
                      accel_task_group_t inner = NewTaskGroup(rt.get(), "inner");
                      for (int i = 0; i < kInner; ++i) {
                        EXPECT_EQ(Light(inner,
                                        [&](accel_task_context_t inner_context) {
                                          uint32_t n = 7;
                                          EXPECT_EQ(accel_task_context_get_device_count(inner_context, &n),
                                                    ACCEL_SUCCESS);
                                          EXPECT_EQ(n, 0U);
                                          ++inner_ran;
                                          return ACCEL_SUCCESS;
                                        }),
                                  ACCEL_SUCCESS);
                      }
                      EXPECT_EQ(accel_task_group_wait(inner, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
                      EXPECT_EQ(accel_task_group_destroy(inner), ACCEL_SUCCESS);
                      // The outer task's context is its own again after the inner ones ran on this thread.
                      uint32_t n = 7;
                      if (accel_task_context_get_device_count(context, &n) == ACCEL_SUCCESS && n == 0) ++contexts_ok;
                      return ACCEL_SUCCESS;
                    }),
              ACCEL_SUCCESS);
  }
  ASSERT_EQ(accel_task_group_wait(outer, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(inner_ran.load(), kOuter * kInner);
  EXPECT_EQ(contexts_ok.load(), kOuter);
  ASSERT_EQ(accel_task_group_destroy(outer), ACCEL_SUCCESS);
}

TEST(LightTasks, WithTheEventLogOnGroupTasksAreLoggedFromTheirSubmission) {
  RuntimeFixture rt(nullptr, 2);
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 1024), ACCEL_SUCCESS) << accel_last_error();
  accel_task_group_t g = NewTaskGroup(rt.get(), "logged");
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Light(g, [](accel_task_context_t) { return ACCEL_SUCCESS; }), ACCEL_SUCCESS);
  ASSERT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  std::vector<accel_runtime_event_t> events(1024);
  events[0].stype = ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT;
  events[0].struct_size = sizeof(accel_runtime_event_t);
  uint32_t n = 0;
  ASSERT_EQ(accel_runtime_get_events(rt.get(), 0, 1024, events.data(), &n, nullptr), ACCEL_SUCCESS);
  int submitted = 0;
  int finished = 0;
  for (uint32_t i = 0; i < n; ++i) {
    submitted += events[i].kind == ACCEL_RUNTIME_EVENT_SUBMITTED ? 1 : 0;
    finished += events[i].kind == ACCEL_RUNTIME_EVENT_FINISHED ? 1 : 0;
  }
  EXPECT_EQ(submitted, 10);
  EXPECT_EQ(finished, 10);
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

TEST(LightTasks, ARuntimeDestroyEndsQueuedLightTasksCancelledAndReleasesTheirData) {
  accel_runtime_t rt = nullptr;
  const ScopedInstance instance(nullptr);
  ASSERT_EQ(CreateRuntime(instance.get(), 2, &rt), ACCEL_SUCCESS) << accel_last_error();
  Gate gate;
  std::atomic<int> started{0};
  for (int i = 0; i < 2; ++i) {
    auto* owned = new Body([&](accel_task_context_t) {
      ++started;
      gate.Wait();
      return ACCEL_SUCCESS;
    });
    const accel_task_desc_t d = BodyDesc(owned);
    accel_future_t f = nullptr;
    ASSERT_EQ(accel_task_submit(rt, &d, &f), ACCEL_SUCCESS);
    ASSERT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  }
  ASSERT_TRUE(Eventually([&] { return started.load() == 2; }));
  accel_task_group_t g = NewTaskGroup(rt, "queued");
  std::atomic<int> ran{0};
  constexpr int kTasks = 100;
  // Submitted by a thread that exits: no wait of its runs them, and the workers are held.
  std::thread([&] {
    for (int i = 0; i < kTasks; ++i) {
      EXPECT_EQ(Light(g,
                      [&](accel_task_context_t) {
                        ++ran;
                        return ACCEL_SUCCESS;
                      }),
                ACCEL_SUCCESS);
    }
  }).join();
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gate.Open();
  });
  ASSERT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error();
  opener.join();
  // Every queued light task ended cancelled (the drain comes before the held workers are let go), its Body freed
  // (LeakSanitizer checks the release).
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("100 of the tasks of task group 'queued' failed"), std::string::npos) << message;
  EXPECT_NE(message.find("was cancelled: the runtime was destroyed first"), std::string::npos) << message;
  ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
}

// Light tasks that count their runs and their releases (plain function pointers: nothing to allocate per task).
struct Counts {
  std::atomic<int> ran{0};
  std::atomic<int> released{0};
};
accel_status_t CountRun(accel_task_context_t /*context*/, void* counts) {
  ++static_cast<Counts*>(counts)->ran;
  return ACCEL_SUCCESS;
}
void CountRelease(void* counts) { ++static_cast<Counts*>(counts)->released; }
accel_task_desc_t CountingDesc(Counts* counts) {
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = CountRun;
  d.user_data = counts;
  d.release_user_data = CountRelease;
  return d;
}

// A thread that submits counting light tasks into a group until one is refused: how many it accepted before, and
// the refusal. With `wait_every`, it waits for the group after every that many (running its own tasks then).
struct Submitter {
  Counts counts;
  std::atomic<int> accepted{0};
  int accepted_before_refusal = 0;
  accel_status_t status = ACCEL_SUCCESS;
  std::string message;
  std::atomic<bool> stop{false};  // a test that failed before the refusal ends the thread
  std::thread thread;             // last: it starts once the rest is made

  explicit Submitter(accel_task_group_t g, int wait_every = 0)
      : thread([this, g, wait_every] {
          const accel_task_desc_t d = CountingDesc(&counts);
          while (!stop.load() && (status = accel_task_group_submit(g, &d)) == ACCEL_SUCCESS) {
            if ((accepted.fetch_add(1) + 1) % (wait_every > 0 ? wait_every : INT32_MAX) == 0) {
              accel_task_group_wait(g, 10'000'000'000ULL);  // any outcome: a destroy may be under way
            }
          }
          message = accel_last_error();
          accepted_before_refusal = accepted.load();
        }) {}
  Submitter(const Submitter&) = delete;
  Submitter& operator=(const Submitter&) = delete;
  ~Submitter() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  // Whether it accepted `n` (within Eventually's time).
  bool Accepted(int n) {
    return Eventually([&] { return accepted.load() >= n; });
  }
};

TEST(LightTasks, AGroupDestroyedWhileAnotherThreadSubmitsRefusesTheRestAndRunsWhatItAccepted) {
  RuntimeFixture rt(nullptr, 2);
  for (int round = 0; round < 20; ++round) {
    accel_task_group_t g = NewTaskGroup(rt.get(), "doomed");
    Submitter submitter(g);
    ASSERT_TRUE(submitter.Accepted(200 * (round % 5)));
    ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS) << accel_last_error();
    submitter.thread.join();
    const int accepted = submitter.accepted_before_refusal;
    EXPECT_EQ(submitter.status, ACCEL_ERROR_INVALID_HANDLE) << submitter.message;
    EXPECT_NE(submitter.message.find("accel_task_group_submit: 'group' is a stale task group handle"),
              std::string::npos)
        << submitter.message;
    // Every accepted task runs once and is released once, its group's handle gone.
    EXPECT_TRUE(Eventually([&] { return submitter.counts.released.load() == accepted; }))
        << submitter.counts.released.load() << " of " << accepted;
    EXPECT_EQ(submitter.counts.ran.load(), accepted);
  }
}

TEST(LightTasks, ARuntimeDestroyedWhileAThreadSubmitsIntoItsGroupRefusesTheRestAndEndsWhatItAccepted) {
  for (int round = 0; round < 20; ++round) {
    accel_runtime_t rt = nullptr;
    const ScopedInstance instance(nullptr);
    ASSERT_EQ(CreateRuntime(instance.get(), 2, &rt), ACCEL_SUCCESS) << accel_last_error();
    accel_task_group_t g = NewTaskGroup(rt, "orphan");
    // Odd rounds wait now and then: the destroy may then find the thread running its own tasks (RunOwnLight).
    Submitter submitter(g, round % 2 == 1 ? 64 : 0);
    ASSERT_TRUE(submitter.Accepted(200 * (round % 5)));
    ASSERT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error();
    submitter.thread.join();
    const int accepted = submitter.accepted_before_refusal;
    // Refused from when the destroy began: while it runs, as being destroyed; after, as a stale runtime's group.
    EXPECT_TRUE(submitter.status == ACCEL_ERROR_INVALID_HANDLE || submitter.status == ACCEL_ERROR_FAILED_PRECONDITION)
        << submitter.message;
    EXPECT_TRUE(submitter.message.find("'group' belongs to a runtime that was destroyed") != std::string::npos ||
                submitter.message.find("accel_task_group_submit: the runtime is being destroyed") != std::string::npos)
        << submitter.message;
    const accel_task_desc_t late = CountingDesc(&submitter.counts);
    EXPECT_EQ(accel_task_group_submit(g, &late), ACCEL_ERROR_INVALID_HANDLE);
    EXPECT_NE(std::string(accel_last_error()).find("'group' belongs to a runtime that was destroyed"),
              std::string::npos)
        << accel_last_error();
    // Once the destroy returned, every accepted task has ended (run, or cancelled by the destroy) and been
    // released once; the group still answers a wait.
    EXPECT_EQ(submitter.counts.released.load(), accepted);
    EXPECT_LE(submitter.counts.ran.load(), accepted);
    const accel_status_t waited = accel_task_group_wait(g, 0);
    EXPECT_TRUE(waited == ACCEL_SUCCESS || waited == ACCEL_ERROR_CANCELLED) << accel_last_error();
    ASSERT_EQ(accel_task_group_destroy(g), ACCEL_SUCCESS);
  }
}

}  // namespace
