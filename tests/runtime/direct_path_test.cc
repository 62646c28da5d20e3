// The direct path of libaccel-runtime (docs/scheduler.md, "The direct
// path"): tasks without devices, dependencies or retries go to the workers
// without the runtime's lock, and a thread that waits for one without a
// timeout runs it itself when no worker has started it. These tests pin what
// that may and may not change: who runs the task, cancellation and shutdown
// of tasks not started, dependents of direct tasks (no lost wakeup), tasks
// nobody waits for, and counters from several threads.
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

constexpr uint32_t kWorkers = 2;

// A task's body that counts itself running and waits until `all` run at once (or fails after 30 s).
accel_status_t Rendezvous(std::atomic<uint32_t>& running, uint32_t all) {
  ++running;
  const bool together = Eventually([&] { return running.load() == all; });
  return together ? ACCEL_SUCCESS : accel_set_last_error(ACCEL_ERROR_TIMEOUT, "ran without the others");
}

TEST(DirectPath, AnInfiniteWaitRunsATaskNoWorkerStartedOnTheWaitingThread) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, kWorkers, gate, started);

  std::atomic<bool> ran{false};
  std::thread::id ran_on;
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr,
                [&](accel_task_context_t ctx) {
                  uint32_t devices = 99;
                  EXPECT_EQ(accel_task_context_get_device_count(ctx, &devices), ACCEL_SUCCESS);
                  EXPECT_EQ(devices, 0U);
                  ran_on = std::this_thread::get_id();
                  ran = true;
                  return ACCEL_SUCCESS;
                },
                &f),
            ACCEL_SUCCESS);
  // A wait with a timeout never runs the task: it returns within its time.
  EXPECT_EQ(accel_future_wait(f, 1000000), ACCEL_ERROR_TIMEOUT);
  EXPECT_FALSE(ran.load());
  EXPECT_EQ(accel_future_query(f), ACCEL_NOT_READY);

  std::thread::id waiter_id;
  std::atomic<bool> waited{false};
  std::thread waiter([&] {
    waiter_id = std::this_thread::get_id();
    EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    waited = true;
  });
  // Both workers are held: only the waiting thread can have run it.
  const bool done = Eventually([&] { return waited.load(); });
  gate.Open();
  waiter.join();
  EXPECT_TRUE(done) << "the wait did not run the task itself";
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(ran_on, waiter_id);
  const auto c = rt.Counters();
  EXPECT_EQ(c.started, 3U);
}

TEST(DirectPath, CancelEndsATaskNotStartedAtOnceWithoutRunningIt) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, kWorkers, gate, started);

  std::atomic<bool> ran{false};
  std::atomic<int> released{0};
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t, void* p) {
    static_cast<std::atomic<bool>*>(p)->store(true);
    return ACCEL_SUCCESS;
  };
  d.user_data = &ran;
  d.release_user_data = [](void*) {};
  accel_future_t f = nullptr;
  ASSERT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_future_cancel(f), ACCEL_SUCCESS);
  // No worker is free: the cancel itself ended it.
  EXPECT_EQ(accel_future_query(f), ACCEL_ERROR_CANCELLED);
  EXPECT_NE(Message(f).find("was cancelled before it started"), std::string::npos) << Message(f);
  EXPECT_EQ(accel_future_cancel(f), ACCEL_SUCCESS) << "cancelling an ended task changes nothing";
  gate.Open();
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  EXPECT_FALSE(ran.load()) << "a cancelled task never runs, though it stays in a worker's queue until taken";
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  (void)released;
  const auto c = rt.Counters();
  EXPECT_EQ(c.cancelled, 1U);
  EXPECT_EQ(c.finished, kWorkers);
}

TEST(DirectPath, DestroyCancelsTheTasksNotStartedAndReleasesTheirDataOnce) {
  // More than a shard's ring holds (1024): the rest wait in its overflow, and are cancelled too.
  constexpr int kQueued = 1500;
  std::vector<accel_future_t> futures;
  std::atomic<int> ran{0};
  std::atomic<int> released{0};
  Gate gate;
  std::atomic<int> started{0};
  {
    ScopedInstance instance(nullptr);
    accel_runtime_t rt = nullptr;
    ASSERT_EQ(CreateRuntime(instance.get(), kWorkers, &rt), ACCEL_SUCCESS) << accel_last_error();
    struct Data {
      std::atomic<int>* ran;
      std::atomic<int>* released;
      Gate* gate;
      std::atomic<int>* started;
      bool block;
    };
    auto submit = [&](bool block) {
      accel_task_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
      d.struct_size = sizeof(d);
      d.function = [](accel_task_context_t, void* p) {
        auto* data = static_cast<Data*>(p);
        if (data->block) {
          ++*data->started;
          data->gate->Wait();
        } else {
          ++*data->ran;
        }
        return ACCEL_SUCCESS;
      };
      d.user_data = new Data{&ran, &released, &gate, &started, block};
      d.release_user_data = [](void* p) {
        auto* data = static_cast<Data*>(p);
        ++*data->released;
        delete data;
      };
      accel_future_t f = nullptr;
      ASSERT_EQ(accel_task_submit(rt, &d, &f), ACCEL_SUCCESS) << accel_last_error();
      futures.push_back(f);
    };
    for (uint32_t i = 0; i < kWorkers; ++i) submit(true);
    ASSERT_TRUE(Eventually([&] { return started.load() == static_cast<int>(kWorkers); }));
    for (int i = 0; i < kQueued; ++i) submit(false);
    // Destroy waits for the running tasks: from a helper thread, then let them end.
    std::thread destroyer([&] { EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.Open();
    destroyer.join();
  }
  EXPECT_EQ(ran.load(), 0) << "nothing queued ran after the destroy began";
  EXPECT_EQ(released.load(), static_cast<int>(kWorkers) + kQueued) << "each task's data released exactly once";
  for (size_t i = 0; i < futures.size(); ++i) {
    if (i < kWorkers) {
      EXPECT_EQ(accel_future_wait(futures[i], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
    } else {
      EXPECT_EQ(accel_future_wait(futures[i], ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
      EXPECT_NE(Message(futures[i]).find("the runtime was destroyed first"), std::string::npos) << Message(futures[i]);
    }
    EXPECT_EQ(accel_future_release(futures[i]), ACCEL_SUCCESS);
  }
}

// Calls pin the runtime instead of counting a reference (docs/threading.md, "Pinned runtimes"): a destroy on one
// thread while two others submit, wait for and release tasks must end every task once (run or cancelled), refuse
// later submissions by name, and wait for the calls in flight (ASan and TSan see a use after free or a race).
TEST(DirectPath, DestroyWhileOtherThreadsSubmitWaitAndRelease) {
  ScopedInstance instance(nullptr);
  accel_runtime_t rt = nullptr;
  ASSERT_EQ(CreateRuntime(instance.get(), kWorkers, &rt), ACCEL_SUCCESS) << accel_last_error();
  constexpr int kClients = 2;
  std::atomic<int> ran{0};
  std::atomic<int> submitted[kClients] = {};
  std::atomic<int> cancelled{0};
  std::atomic<int> unexpected{0};
  std::atomic<bool> destroyed{false};
  std::vector<std::string> refusals(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (;;) {
        const bool after = destroyed.load();
        accel_task_desc_t d{};
        d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
        d.struct_size = sizeof(d);
        d.function = [](accel_task_context_t, void* p) {
          ++*static_cast<std::atomic<int>*>(p);
          return ACCEL_SUCCESS;
        };
        d.user_data = &ran;
        accel_future_t f = nullptr;
        const accel_status_t s = accel_task_submit(rt, &d, &f);
        if (s != ACCEL_SUCCESS) {
          // Refused once the destroy began: the runtime is being destroyed, or its handle is stale.
          if (s != ACCEL_ERROR_INVALID_HANDLE && s != ACCEL_ERROR_FAILED_PRECONDITION) ++unexpected;
          refusals[c] = accel_last_error();
          return;
        }
        if (after) ++unexpected;  // accepted after the destroy returned
        ++submitted[c];
        const accel_status_t w = accel_future_wait(f, ACCEL_TIMEOUT_INFINITE);
        if (w == ACCEL_ERROR_CANCELLED) {
          ++cancelled;
        } else if (w != ACCEL_SUCCESS) {
          ++unexpected;
        }
        if (accel_future_release(f) != ACCEL_SUCCESS) ++unexpected;
      }
    });
  }
  ASSERT_TRUE(Eventually([&] { return submitted[0].load() > 2000 && submitted[1].load() > 2000; }));
  EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error();
  destroyed = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(ran.load() + cancelled.load(), submitted[0].load() + submitted[1].load())
      << "every accepted task ran or was cancelled, once";
  for (const std::string& refusal : refusals) {
    EXPECT_TRUE(refusal.find("stale runtime handle") != std::string::npos ||
                refusal.find("being destroyed") != std::string::npos)
        << refusal;
  }
}

// A callback a call runs on its own thread (here the release of a cancelled task's user data, inside
// accel_future_cancel) cannot destroy the runtime that call uses: the destroy would wait for the call. It is refused
// by name, and the runtime goes on.
TEST(DirectPath, DestroyFromInsideACallOnTheSameRuntimeIsRefused) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, kWorkers, gate, started);  // so that the task below is not started when it is cancelled
  struct Data {
    accel_runtime_t rt;
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;
    bool released = false;
  } data{rt.get()};
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  d.user_data = &data;
  d.release_user_data = [](void* p) {
    auto* mine = static_cast<Data*>(p);
    mine->released = true;
    mine->status = accel_runtime_destroy(mine->rt);
    mine->message = accel_last_error();
  };
  accel_future_t f = nullptr;
  ASSERT_EQ(accel_task_submit(rt.get(), &d, &f), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_future_cancel(f), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  ASSERT_TRUE(data.released);
  EXPECT_EQ(data.status, ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(data.message.find("from inside another call on it"), std::string::npos) << data.message;
  gate.Open();
  accel_future_t g = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &g),
            ACCEL_SUCCESS)
      << "the runtime goes on: " << accel_last_error();
  EXPECT_EQ(accel_future_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);  // the fixture releases it
}

// A dependent (slow path) of a direct task that may end at any moment, from
// two threads at once: a lost wakeup would leave a dependent waiting.
TEST(DirectPath, DependentsOfDirectTasksAlwaysStart) {
  RuntimeFixture rt(nullptr, kWorkers);
  constexpr int kRounds = 1500;
  std::atomic<int> ran{0};
  std::atomic<int> failures{0};
  auto client = [&] {
    for (int i = 0; i < kRounds; ++i) {
      accel_task_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
      d.struct_size = sizeof(d);
      d.function = [](accel_task_context_t, void* p) {
        static_cast<std::atomic<int>*>(p)->fetch_add(1);
        return ACCEL_SUCCESS;
      };
      d.user_data = &ran;
      accel_future_t a = nullptr;
      accel_future_t b = nullptr;
      if (accel_task_submit(rt.get(), &d, &a) != ACCEL_SUCCESS) {
        ++failures;
        return;
      }
      d.dependencies = &a;
      d.dependency_count = 1;
      if (accel_task_submit(rt.get(), &d, &b) != ACCEL_SUCCESS) {
        ++failures;
        return;
      }
      // Bounded: a hang is a failure, not a stuck test.
      if (accel_future_wait(b, 30ULL * 1000 * 1000 * 1000) != ACCEL_SUCCESS) ++failures;
      accel_future_release(a);
      accel_future_release(b);
    }
  };
  std::thread other(client);
  client();
  other.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ran.load(), 4 * kRounds);
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  const auto c = rt.Counters();
  EXPECT_EQ(c.submitted, 4U * kRounds);
  EXPECT_EQ(c.finished, 4U * kRounds);
  EXPECT_EQ(c.pending, 0U);
}

// Long tasks submitted together run side by side: no worker takes a
// second one while another worker idles.
TEST(DirectPath, TasksSubmittedTogetherRunOnDifferentWorkers) {
  constexpr uint32_t kTasks = 4;
  RuntimeFixture rt(nullptr, kTasks);
  std::atomic<uint32_t> running{0};
  std::vector<accel_future_t> futures(kTasks);
  for (auto& f : futures) {
    ASSERT_EQ(rt.Submit(
                  nullptr, [&](accel_task_context_t) { return Rendezvous(running, kTasks); }, &f),
              ACCEL_SUCCESS);
  }
  for (accel_future_t f : futures) {
    // A finite timeout: the waiting thread runs none of them.
    EXPECT_EQ(accel_future_wait(f, 60ULL * 1000 * 1000 * 1000), ACCEL_SUCCESS) << Message(f);
  }
}

// The same for placed tasks (devices), submitted right after a task a worker ran (so workers may be spinning, and
// a submission then wakes no one): they still run side by side, since a worker that takes one while more wait passes
// the wakeup on. (RuntimeHpp.AQueuesUsageCountsItsTasks hung once without that; here the timing rarely lines up.)
TEST(DirectPath, PlacedTasksMadeReadyTogetherRunOnDifferentWorkers) {
  constexpr uint32_t kTasks = 4;
  RuntimeFixture rt(nullptr, kTasks);
  for (int round = 0; round < 3; ++round) {
    // A quick task first, on a worker (a finite wait never runs it here): that worker then spins for a while.
    accel_future_t warm = nullptr;
    ASSERT_EQ(rt.Submit(
                  nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &warm),
              ACCEL_SUCCESS);
    ASSERT_EQ(accel_future_wait(warm, 60ULL * 1000 * 1000 * 1000), ACCEL_SUCCESS);
    std::atomic<uint32_t> running{0};
    const accel_resource_request_t one = Request(1, 0.25);
    std::vector<accel_future_t> futures(kTasks);
    for (auto& f : futures) {
      ASSERT_EQ(rt.Submit(
                    &one, [&](accel_task_context_t) { return Rendezvous(running, kTasks); }, &f),
                ACCEL_SUCCESS);
    }
    for (accel_future_t f : futures) {
      EXPECT_EQ(accel_future_wait(f, 60ULL * 1000 * 1000 * 1000), ACCEL_SUCCESS) << Message(f);
    }
  }
}

// Tasks submitted and never waited for run on the workers, a lone one too
// (it is left to its submitter only for a short grace); the counters from
// two submitting threads add up.
TEST(DirectPath, TasksNobodyWaitsForRunAndTheCountersAddUp) {
  RuntimeFixture rt(nullptr, kWorkers);
  std::atomic<int> ran{0};
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t, void* p) {
    const int n = static_cast<std::atomic<int>*>(p)->fetch_add(1);
    return n % 3 == 2 ? accel_set_last_error(ACCEL_ERROR_NOT_FOUND, "every third one fails") : ACCEL_SUCCESS;
  };
  d.user_data = &ran;
  accel_future_t lone = nullptr;
  ASSERT_EQ(accel_task_submit(rt.get(), &d, &lone), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return ran.load() == 1; })) << "a lone task nobody waits for never ran";
  EXPECT_EQ(accel_future_release(lone), ACCEL_SUCCESS);

  constexpr int kPerThread = 3000;
  auto client = [&] {
    for (int i = 0; i < kPerThread; ++i) {
      accel_future_t f = nullptr;
      if (accel_task_submit(rt.get(), &d, &f) == ACCEL_SUCCESS) accel_future_release(f);
    }
  };
  std::thread other(client);
  client();
  other.join();
  ASSERT_TRUE(Eventually([&] { return ran.load() == 1 + 2 * kPerThread; })) << ran.load();
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  const auto c = rt.Counters();
  const uint64_t total = 1 + 2 * kPerThread;
  EXPECT_EQ(c.submitted, total);
  EXPECT_EQ(c.placed, total);
  EXPECT_EQ(c.started, total);
  EXPECT_EQ(c.finished + c.failed, total);
  EXPECT_EQ(c.failed, total / 3);
  EXPECT_EQ(c.cancelled, 0U);
}

// Tasks queued while every worker is busy, more than a shard's ring holds
// (1024; the rest go to its overflow), all run once each when the workers
// are free, whether a worker or the waiting thread runs them.
TEST(DirectPath, MoreQueuedTasksThanTheRingHoldsRunOnceEach) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate gate;
  std::atomic<int> started{0};
  BlockWorkers(rt, kWorkers, gate, started);
  constexpr int kQueued = 2500;
  std::vector<std::atomic<int>> runs(kQueued);
  struct Slot {
    std::atomic<int>* runs;
  };
  std::vector<Slot> slots(kQueued);
  std::vector<accel_future_t> futures(kQueued, nullptr);
  for (int i = 0; i < kQueued; ++i) {
    slots[i].runs = &runs[i];
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = [](accel_task_context_t, void* p) {
      ++*static_cast<Slot*>(p)->runs;
      return ACCEL_SUCCESS;
    };
    d.user_data = &slots[i];
    ASSERT_EQ(accel_task_submit(rt.get(), &d, &futures[i]), ACCEL_SUCCESS) << accel_last_error();
  }
  gate.Open();
  // Waited for from the newest down: the waits take some back from the shard, the workers the others.
  for (int i = kQueued - 1; i >= 0; --i) {
    EXPECT_EQ(accel_future_wait(futures[i], ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_future_release(futures[i]), ACCEL_SUCCESS);
  }
  for (int i = 0; i < kQueued; ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == 0; }));
  EXPECT_EQ(rt.Counters().finished, static_cast<uint64_t>(kQueued + kWorkers));
}

}  // namespace
