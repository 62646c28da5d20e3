// Tasks that wait for dependencies (docs/scheduler.md, "Dependencies"): they
// are kept out of the queue each scheduling pass reads until their
// dependencies end, so a long chain costs each task a constant amount, not a
// pass over every task behind it. These tests pin what that may not change:
// order, failure and cancellation propagation (a failed dependency ends its
// dependent at once, whichever it is), explanations, shutdown and placement
// groups destroyed under blocked tasks (run under TSan too).
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

constexpr uint32_t kWorkers = 2;

TEST(Dependencies, AChainOfTwentyThousandRunsInOrder) {
  // Each task runs after the one before it; every hundredth asks for a device, so the chain crosses the scheduler's
  // placement path as well as the path of tasks without devices.
  constexpr uint32_t kTasks = 20000;
  RuntimeFixture rt(nullptr, kWorkers);
  const accel_resource_request_t one = Request(1, 0.5);
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> out_of_order{0};
  std::vector<accel_future_t> chain(kTasks, nullptr);
  for (uint32_t i = 0; i < kTasks; ++i) {
    std::vector<accel_future_t> deps;
    if (i > 0) deps.push_back(chain[i - 1]);
    ASSERT_EQ(rt.Submit(
                  i % 100 == 99 ? &one : nullptr,
                  [&, i](accel_task_context_t) {
                    if (next.fetch_add(1) != i) ++out_of_order;
                    return ACCEL_SUCCESS;
                  },
                  &chain[i], deps),
              ACCEL_SUCCESS)
        << "task " << i << ": " << accel_last_error();
  }
  EXPECT_EQ(accel_future_wait(chain.back(), ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(chain.back());
  EXPECT_EQ(next.load(), kTasks);
  EXPECT_EQ(out_of_order.load(), 0U);
  const auto c = rt.Counters();
  EXPECT_EQ(c.finished, kTasks);
  EXPECT_EQ(c.pending, 0U);
}

// Random DAGs (three seeds): 400 tasks, each with up to 3 dependencies among the 20 before it, some with a device,
// some failing, some cancelled; direct tasks (no dependency, no device) end without the runtime's lock, so their
// ends race with the submissions that block on them. Every task ends once; a task runs only after all its
// dependencies succeeded; a task with a dependency that did not succeed never runs and ends FAILED_PRECONDITION or
// CANCELLED; nothing stays pending.
TEST(Dependencies, RandomGraphsEndEveryTaskOnceAndInOrder) {
  constexpr int kTasks = 400;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed);
    RuntimeFixture rt(nullptr, kWorkers);
    const accel_resource_request_t half = Request(1, 0.5);
    std::vector<accel_future_t> futures(kTasks, nullptr);
    std::vector<std::vector<int>> deps(kTasks);
    std::vector<char> fails(kTasks, 0);  // not vector<bool>: its bits share words between tasks
    std::vector<std::atomic<int>> runs(kTasks);
    std::atomic<int> early{0};  // ran before a dependency had succeeded
    for (int i = 0; i < kTasks; ++i) {
      const int count = i == 0 ? 0 : static_cast<int>(rng() % 4);
      for (int k = 0; k < count; ++k) deps[i].push_back(std::max(0, i - 1 - static_cast<int>(rng() % 20)));
      fails[i] = rng() % 10 == 0 ? 1 : 0;
      std::vector<accel_future_t> on;
      for (int d : deps[i]) on.push_back(futures[d]);
      ASSERT_EQ(rt.Submit(
                    rng() % 5 == 0 ? &half : nullptr,
                    [&, i](accel_task_context_t) {
                      for (int d : deps[i]) {
                        if (accel_future_query(futures[d]) != ACCEL_SUCCESS) ++early;
                      }
                      ++runs[i];
                      return fails[i] ? accel_set_last_error(ACCEL_ERROR_INTERNAL, "failed on purpose") : ACCEL_SUCCESS;
                    },
                    &futures[i], on),
                ACCEL_SUCCESS)
          << "seed " << seed << " task " << i << ": " << accel_last_error();
      if (rng() % 25 == 0) {
        EXPECT_EQ(accel_future_cancel(futures[i]), ACCEL_SUCCESS);
      }
    }
    std::vector<accel_status_t> result(kTasks);
    for (int i = 0; i < kTasks; ++i) result[i] = accel_future_wait(futures[i], ACCEL_TIMEOUT_INFINITE);
    EXPECT_EQ(early.load(), 0) << "seed " << seed;
    for (int i = 0; i < kTasks; ++i) {
      EXPECT_LE(runs[i].load(), 1) << "seed " << seed << " task " << i << " ran twice";
      bool deps_ok = true;
      for (int d : deps[i]) deps_ok = deps_ok && result[d] == ACCEL_SUCCESS;
      if (!deps_ok) {
        EXPECT_EQ(runs[i].load(), 0) << "seed " << seed << " task " << i;
        EXPECT_TRUE(result[i] == ACCEL_ERROR_FAILED_PRECONDITION || result[i] == ACCEL_ERROR_CANCELLED)
            << "seed " << seed << " task " << i << ": " << accel_status_name(result[i]);
      } else if (runs[i].load() == 1) {
        EXPECT_EQ(result[i], fails[i] ? ACCEL_ERROR_INTERNAL : ACCEL_SUCCESS) << "seed " << seed << " task " << i;
      } else {
        EXPECT_EQ(result[i], ACCEL_ERROR_CANCELLED) << "seed " << seed << " task " << i << " did not run";
      }
    }
    const auto c = rt.Counters();
    EXPECT_EQ(c.submitted, static_cast<uint64_t>(kTasks)) << "seed " << seed;
    EXPECT_EQ(c.finished + c.failed + c.cancelled, static_cast<uint64_t>(kTasks)) << "seed " << seed;
    EXPECT_EQ(c.pending, 0U) << "seed " << seed;
  }
}

TEST(Dependencies, AFailedDependencyEndsItsDependentWhileAnotherStillRuns) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate gate;
  std::atomic<bool> started{false};
  accel_future_t slow = nullptr;
  accel_future_t bad = nullptr;
  accel_future_t both = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr,
                [&](accel_task_context_t) {
                  started = true;
                  gate.Wait();
                  return ACCEL_SUCCESS;
                },
                &slow, {}, 0, "slow"),
            ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return accel_set_last_error(ACCEL_ERROR_NOT_FOUND, "gone"); }, &bad,
                {}, 0, "bad"),
            ACCEL_SUCCESS);
  std::atomic<bool> ran{false};
  ASSERT_EQ(rt.Submit(nullptr,
                      [&](accel_task_context_t) {
                        ran = true;
                        return ACCEL_SUCCESS;
                      },
                      &both, {slow, bad}),
            ACCEL_SUCCESS);
  // Dependency 0 still runs (the gate is shut): the failure of dependency 1 ends the task anyway.
  EXPECT_EQ(accel_future_wait(both, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(Message(both).find("dependency 1"), std::string::npos) << Message(both);
  EXPECT_NE(Message(both).find("ACCEL_ERROR_NOT_FOUND"), std::string::npos) << Message(both);
  EXPECT_EQ(accel_future_query(slow), ACCEL_NOT_READY);
  gate.Open();
  EXPECT_EQ(accel_future_wait(slow, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_FALSE(ran.load());
}

TEST(Dependencies, ABlockedTaskSaysWhichDependencyItWaitsFor) {
  RuntimeFixture rt(nullptr, kWorkers);
  Gate first_gate;
  Gate second_gate;
  accel_future_t first = nullptr;
  accel_future_t second = nullptr;
  accel_future_t after = nullptr;
  ASSERT_EQ(rt.Submit(nullptr, WaitFor(first_gate), &first, {}, 0, "first"), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(nullptr, WaitFor(second_gate), &second, {}, 0, "second"), ACCEL_SUCCESS);
  // Named twice: released once, when it ends.
  ASSERT_EQ(rt.Submit(nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &after, {first, second, first}),
            ACCEL_SUCCESS);
  EXPECT_NE(Message(after).find("waiting for dependency 0"), std::string::npos) << Message(after);
  EXPECT_NE(Message(after).find("'first'"), std::string::npos) << Message(after);
  first_gate.Open();
  EXPECT_EQ(accel_future_wait(first, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_TRUE(Eventually([&] { return Message(after).find("waiting for dependency 1") != std::string::npos; }))
      << Message(after);
  EXPECT_NE(Message(after).find("'second'"), std::string::npos) << Message(after);
  EXPECT_EQ(accel_future_query(after), ACCEL_NOT_READY);
  second_gate.Open();
  EXPECT_EQ(accel_future_wait(after, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(after);
  EXPECT_EQ(rt.Counters().pending, 0U);
}

TEST(Dependencies, DestroyingTheRuntimeCancelsBlockedTasks) {
  ScopedInstance instance(nullptr);
  accel_runtime_t rt = nullptr;
  ASSERT_EQ(CreateRuntime(instance.get(), kWorkers, &rt), ACCEL_SUCCESS) << accel_last_error();
  Gate gate;
  std::atomic<bool> started{false};
  std::atomic<int> ran{0};
  struct Data {
    Gate* gate;
    std::atomic<bool>* started;
    std::atomic<int>* ran;
  } data{&gate, &started, &ran};
  auto submit = [&](accel_task_function_t fn, std::vector<accel_future_t> deps, accel_future_t* out) {
    accel_task_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
    d.struct_size = sizeof(d);
    d.function = fn;
    d.user_data = &data;
    d.dependencies = deps.data();
    d.dependency_count = static_cast<uint32_t>(deps.size());
    ASSERT_EQ(accel_task_submit(rt, &d, out), ACCEL_SUCCESS) << accel_last_error();
  };
  accel_future_t gated = nullptr;
  accel_future_t second = nullptr;
  accel_future_t third = nullptr;
  submit(
      [](accel_task_context_t, void* p) {
        auto* mine = static_cast<Data*>(p);
        *mine->started = true;
        mine->gate->Wait();
        return ACCEL_SUCCESS;
      },
      {}, &gated);
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  auto count = [](accel_task_context_t, void* p) {
    ++*static_cast<Data*>(p)->ran;
    return ACCEL_SUCCESS;
  };
  submit(count, {gated}, &second);
  submit(count, {second}, &third);
  std::thread destroyer([&] { EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate.Open();
  destroyer.join();
  EXPECT_EQ(accel_future_wait(gated, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  for (accel_future_t f : {second, third}) {
    EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
    EXPECT_NE(Message(f).find("the runtime was destroyed first"), std::string::npos) << Message(f);
  }
  EXPECT_EQ(ran.load(), 0);
  for (accel_future_t f : {gated, second, third}) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
}

TEST(Dependencies, ALongChainNobodyRanEndsWithoutRecursion) {
  // 50,000 tasks blocked behind one that never ends before the destroy, their futures released at once: each holds
  // the one before it, and their end must not recurse through the chain (a stack overflow under ASan).
  constexpr uint32_t kTasks = 50000;
  ScopedInstance instance(nullptr);
  accel_runtime_t rt = nullptr;
  ASSERT_EQ(CreateRuntime(instance.get(), kWorkers, &rt), ACCEL_SUCCESS) << accel_last_error();
  Gate gate;
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = [](accel_task_context_t, void* p) {
    static_cast<Gate*>(p)->Wait();
    return ACCEL_SUCCESS;
  };
  d.user_data = &gate;
  accel_future_t previous = nullptr;
  ASSERT_EQ(accel_task_submit(rt, &d, &previous), ACCEL_SUCCESS) << accel_last_error();
  accel_future_t first = previous;
  d.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  d.user_data = nullptr;
  accel_future_t last = nullptr;
  for (uint32_t i = 0; i < kTasks; ++i) {
    d.dependencies = &previous;
    d.dependency_count = 1;
    accel_future_t next = nullptr;
    ASSERT_EQ(accel_task_submit(rt, &d, &next), ACCEL_SUCCESS) << "task " << i << ": " << accel_last_error();
    if (previous != first) {
      EXPECT_EQ(accel_future_release(previous), ACCEL_SUCCESS);
    }
    previous = next;
    last = next;
  }
  std::thread destroyer([&] { EXPECT_EQ(accel_runtime_destroy(rt), ACCEL_SUCCESS) << accel_last_error(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  gate.Open();
  destroyer.join();
  EXPECT_EQ(accel_future_wait(first, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(last, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_future_release(first), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_release(last), ACCEL_SUCCESS);
}

TEST(Dependencies, DestroyingAGroupCancelsItsBlockedTasks) {
  RuntimeFixture rt(nullptr, kWorkers);
  accel_placement_group_t group = nullptr;
  ASSERT_EQ(MakeGroup(rt.get(), {Request(1)}, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &group),
            ACCEL_SUCCESS)
      << accel_last_error();
  Gate gate;
  accel_future_t gated = nullptr;
  ASSERT_EQ(rt.Submit(nullptr, WaitFor(gate), &gated), ACCEL_SUCCESS);
  accel_resource_request_t in_group = Request(1);
  in_group.placement_group = group;
  in_group.bundle_index = 0;
  accel_future_t inside = nullptr;
  ASSERT_EQ(rt.Submit(&in_group, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &inside, {gated}), ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_NE(Message(inside).find("waiting for dependency 0"), std::string::npos) << Message(inside);
  ASSERT_EQ(accel_placement_group_destroy(group), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_future_wait(inside, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_NE(Message(inside).find("was destroyed"), std::string::npos) << Message(inside);
  gate.Open();
  EXPECT_EQ(accel_future_wait(gated, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
}

}  // namespace
