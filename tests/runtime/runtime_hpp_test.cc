// runtime.hpp on the sim backend's h100-sxm-8 node: tasks from lambdas with
// their share and memory limit, dependencies, exceptions and returned errors
// becoming the future's error, placement groups, queues, actors with state,
// owners' move semantics and bad input thrown as accel::Error.
#include <gtest/gtest.h>
#include <accel/runtime.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime_fixture.h"

namespace {

using accel_runtime_test::Eventually;
using accel_runtime_test::Gate;
using accel_runtime_test::kGiB;
using accel_runtime_test::kMiB;
using accel_runtime_test::kProfileSet;

constexpr uint64_t kDeviceMemory = uint64_t{85520809984};  // one H100 of the profile

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The accel::Error `fn` throws; fails the test when it throws nothing.
template <class Fn>
accel::Error Thrown(Fn&& fn) {
  try {
    fn();
  } catch (const accel::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no accel::Error thrown";
  return accel::Error(ACCEL_SUCCESS, "");
}

class RuntimeHpp : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(kProfileSet); }

  accel::Instance instance_;
  accel::Runtime runtime_{instance_, 8};
};

TEST_F(RuntimeHpp, ATaskRunsOnOneDeviceWithItsShareAndMemoryLimit) {
  ASSERT_EQ(runtime_.devices().size(), 8U);
  Gate gate;
  std::atomic<bool> started{false};
  uint32_t count = 0;
  uint64_t limit = 0;
  uint32_t attempt = 7;
  bool cancelled = true;
  bool preempted = true;
  bool same_chip = false;
  accel::Future f = runtime_.submit(
      [&](accel::TaskContext& ctx) {
        count = ctx.device_count();
        limit = ctx.memory_limit(0);
        attempt = ctx.attempt();
        cancelled = ctx.cancelled();
        preempted = ctx.preempted();
        same_chip = ctx.device(0).physical_device() == ctx.physical_device(0);
        started = true;
        gate.Wait();
      },
      accel::TaskOptions().name("half").request(accel::ResourceRequest().devices(1).share(0.5).memory(kGiB)));
  ASSERT_TRUE(Eventually([&] { return started.load(); }));
  int held = 0;
  for (const accel_runtime_device_t& d : runtime_.devices()) {
    if (d.share_free == 1.0) continue;
    ++held;
    EXPECT_EQ(d.share_free, 0.5);
    EXPECT_EQ(d.memory_free, kDeviceMemory - kGiB);
  }
  EXPECT_EQ(held, 1) << "one device holds the task's share";
  EXPECT_FALSE(f.wait(std::chrono::milliseconds(10))) << "it runs until the gate opens";
  EXPECT_EQ(f.query(), ACCEL_NOT_READY);
  gate.Open();
  f.get();
  EXPECT_EQ(f.query(), ACCEL_SUCCESS);
  EXPECT_EQ(count, 1U);
  EXPECT_EQ(limit, kGiB);
  EXPECT_EQ(attempt, 0U);
  EXPECT_FALSE(cancelled);
  EXPECT_FALSE(preempted);
  EXPECT_TRUE(same_chip);
  // A device index past the count throws inside the task; the task fails with it.
  accel::Future past = runtime_.submit([](accel::TaskContext& ctx) { static_cast<void>(ctx.device(1)); },
                                       accel::TaskOptions().request(accel::ResourceRequest().devices(1)));
  EXPECT_EQ(Thrown([&] { past.get(); }).status(), ACCEL_ERROR_INVALID_ARGUMENT);
}

TEST_F(RuntimeHpp, AnAllocationPastTheShareFailsTheTaskWithTheErrorThrown) {
  accel::Future greedy = runtime_.submit(
      [](accel::TaskContext& ctx) {
        accel::Buffer fits(ctx.device(0), 48 * kMiB);
        accel::Buffer too_much(ctx.device(0), 32 * kMiB);  // 80 MiB of 64: throws
      },
      accel::TaskOptions().name("greedy").request(accel::ResourceRequest().devices(1).share(0.25).memory(64 * kMiB)));
  const accel::Error e = Thrown([&] { greedy.get(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(Contains(e.what(), "holds 48 MiB of its 64 MiB limit")) << e.what();
  EXPECT_EQ(greedy.query(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(greedy.message(), e.what());
}

TEST_F(RuntimeHpp, DependenciesRunInOrder) {
  std::mutex m;
  std::string order;
  auto record = [&](char what) {
    return [&, what](accel::TaskContext&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::lock_guard<std::mutex> lock(m);
      order += what;
    };
  };
  Gate gate;
  accel::Future a = runtime_.submit([&](accel::TaskContext& ctx) {
    gate.Wait();
    record('a')(ctx);
  });
  accel::Future b = runtime_.submit(record('b'), accel::TaskOptions().name("b").after(a));
  std::vector<accel::Future> both;
  both.push_back(runtime_.submit(record('c'), accel::TaskOptions().after(b)));
  both.push_back(runtime_.submit(record('d'), accel::TaskOptions().after(a)));
  accel::Future last = runtime_.submit(record('e'), accel::TaskOptions().after(both).after(b));
  EXPECT_TRUE(Contains(b.message(), "waiting for dependency 0")) << b.message();
  EXPECT_EQ(last.query(), ACCEL_NOT_READY);
  gate.Open();
  last.get();
  ASSERT_EQ(order.size(), 5U);
  EXPECT_EQ(order.front(), 'a');
  EXPECT_LT(order.find('b'), order.find('c'));
  EXPECT_EQ(order.back(), 'e');
  // A failed dependency fails its dependents, naming it.
  accel::Future failing = runtime_.submit([](accel::TaskContext&) { throw std::runtime_error("disk full"); },
                                          accel::TaskOptions().name("load"));
  accel::Future dependent = runtime_.submit(record('x'), accel::TaskOptions().after(failing));
  const accel::Error e = Thrown([&] { dependent.get(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_TRUE(Contains(e.what(), "load")) << e.what();
  EXPECT_EQ(order.find('x'), std::string::npos);
  // Cancelling a waiting task cancels it and its dependents.
  Gate hold;
  accel::Future blocker = runtime_.submit([&](accel::TaskContext&) { hold.Wait(); });
  accel::Future waiting = runtime_.submit(record('y'), accel::TaskOptions().after(blocker));
  accel::Future behind = runtime_.submit(record('z'), accel::TaskOptions().after(waiting));
  waiting.cancel();
  EXPECT_EQ(Thrown([&] { waiting.get(); }).status(), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(Thrown([&] { behind.get(); }).status(), ACCEL_ERROR_CANCELLED);
  hold.Open();
  blocker.get();
}

TEST_F(RuntimeHpp, AnExceptionBecomesTheFuturesErrorWithItsMessage) {
  accel::Future plain =
      runtime_.submit([](accel::TaskContext&) -> accel_status_t { throw std::runtime_error("weights file missing"); });
  ASSERT_TRUE(plain.wait());
  EXPECT_EQ(plain.query(), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(plain.message(), "weights file missing");
  const accel::Error e = Thrown([&] { plain.get(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_INTERNAL);
  EXPECT_STREQ(e.what(), "weights file missing");

  // An accel::Error keeps its status.
  accel::Future typed =
      runtime_.submit([](accel::TaskContext&) { throw accel::Error(ACCEL_ERROR_NOT_FOUND, "no kernel 'gemm'"); });
  const accel::Error t = Thrown([&] { typed.get(); });
  EXPECT_EQ(t.status(), ACCEL_ERROR_NOT_FOUND);
  EXPECT_STREQ(t.what(), "no kernel 'gemm'");

  // Something that is not a std::exception is caught too.
  accel::Future odd = runtime_.submit([](accel::TaskContext&) { throw 42; });
  const accel::Error o = Thrown([&] { odd.get(); });
  EXPECT_EQ(o.status(), ACCEL_ERROR_INTERNAL);
  EXPECT_TRUE(Contains(o.what(), "not a std::exception")) << o.what();
  EXPECT_EQ(runtime_.counters().failed, 3U);
}

TEST_F(RuntimeHpp, GetThrowsTheStatusATaskReturns) {
  accel::Future f = runtime_.submit(
      [](accel::TaskContext&) { return accel_set_last_error(ACCEL_ERROR_UNSUPPORTED, "no bf16 on this device"); });
  const accel::Error e = Thrown([&] { f.get(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_STREQ(e.what(), "no bf16 on this device");
  EXPECT_STREQ(e.status_name(), "ACCEL_ERROR_UNSUPPORTED");
  // A task that ends with ACCEL_ERROR_TIMEOUT has ended: wait says so.
  accel::Future timed_out = runtime_.submit([](accel::TaskContext&) { return ACCEL_ERROR_TIMEOUT; });
  ASSERT_TRUE(Eventually([&] { return timed_out.query() != ACCEL_NOT_READY; }));
  EXPECT_TRUE(timed_out.wait(std::chrono::milliseconds(1)));
  EXPECT_EQ(timed_out.query(), ACCEL_ERROR_TIMEOUT);
  EXPECT_EQ(Thrown([&] { timed_out.get(); }).status(), ACCEL_ERROR_TIMEOUT);
  // Success returned explicitly.
  accel::Future ok = runtime_.submit([](accel::TaskContext&) { return ACCEL_SUCCESS; });
  ok.get();
  const accel_runtime_counters_t c = runtime_.counters();
  EXPECT_EQ(c.submitted, 3U);
  EXPECT_EQ(c.finished, 1U);
  EXPECT_EQ(c.failed, 2U);
}

TEST_F(RuntimeHpp, ATaskGroupWaitsForItsTasksAndThrowsTheFirstFailure) {
  accel::TaskGroup group(runtime_, "hpp");
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) group.run([&](accel::TaskContext&) { ++ran; });
  group.run(
      [&](accel::TaskContext& ctx) {
        EXPECT_EQ(ctx.device_count(), 2U);
        ++ran;
      },
      accel::TaskOptions().request(accel::ResourceRequest().devices(2)));
  group.wait();
  EXPECT_EQ(ran.load(), 101);
  group.run([](accel::TaskContext&) { throw std::runtime_error("bad batch"); });
  const accel::Error e = Thrown([&] { group.wait(); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_INTERNAL);
  EXPECT_TRUE(Contains(e.what(), "1 of the tasks of task group 'hpp' failed; the first: ")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "bad batch")) << e.what();
  Gate gate;
  group.run([&](accel::TaskContext&) { gate.Wait(); });
  EXPECT_FALSE(group.wait_for(std::chrono::milliseconds(1)));
  gate.Open();
  EXPECT_TRUE(group.wait_for(std::chrono::seconds(60)));
  group.cancel();
  group.run([&](accel::TaskContext&) { ++ran; });
  EXPECT_EQ(Thrown([&] { group.wait(); }).status(), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(ran.load(), 101);
  // Refused at submission: thrown, and the group counts nothing.
  EXPECT_EQ(Thrown([&] {
              group.run([](accel::TaskContext&) {}, accel::TaskOptions().request(accel::ResourceRequest().devices(9)));
            }).status(),
            ACCEL_ERROR_RESOURCE_EXHAUSTED);
  group.wait();
}

TEST_F(RuntimeHpp, APlacementGroupOfEightInACliqueReportsRanksZeroToSeven) {
  accel::PlacementGroup gang(runtime_, std::vector<accel::ResourceRequest>(8, accel::ResourceRequest().devices(1)),
                             ACCEL_PLACEMENT_STRATEGY_STRICT_PACK, ACCEL_TOPOLOGY_LEVEL_CLIQUE, true, "gang");
  const std::vector<accel_bundle_device_t> devices = gang.devices();
  ASSERT_EQ(devices.size(), 8U);
  std::vector<bool> bundles(8, false);
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(devices[i].rank, i);
    ASSERT_LT(devices[i].bundle, 8U);
    bundles[devices[i].bundle] = true;
    EXPECT_EQ(devices[i].share, 1.0);
  }
  EXPECT_EQ(std::count(bundles.begin(), bundles.end(), true), 8) << "one device per bundle";
  // The node is full: another group is refused, holding nothing.
  const accel::Error refused = Thrown([&] {
    accel::PlacementGroup more(runtime_, {accel::ResourceRequest().devices(1)}, ACCEL_PLACEMENT_STRATEGY_PACK,
                               ACCEL_TOPOLOGY_LEVEL_NODE);
  });
  EXPECT_EQ(refused.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  // A task inside bundle 3 runs on that bundle's device.
  accel_physical_device_t bundle3 = nullptr;
  for (const accel_bundle_device_t& d : devices) {
    if (d.bundle == 3) bundle3 = d.physical_device;
  }
  accel_physical_device_t ran_on = nullptr;
  runtime_
      .submit([&](accel::TaskContext& ctx) { ran_on = ctx.physical_device(0).handle(); },
              accel::TaskOptions().request(accel::ResourceRequest().devices(1).share(0.5).placement_group(gang, 3)))
      .get();
  EXPECT_EQ(ran_on, bundle3);
}

TEST_F(RuntimeHpp, APlacementGroupInAQueueCountsAgainstItsLimit) {
  accel::Queue team(runtime_, accel::QueueDesc("team").limit(2.0));
  {
    accel::PlacementGroup pair(runtime_, std::vector<accel::ResourceRequest>(2, accel::ResourceRequest().devices(1)),
                               ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, true, "pair", team.handle());
    EXPECT_EQ(team.usage().devices, 2.0);
    const accel::Error refused = Thrown([&] {
      accel::PlacementGroup more(runtime_, {accel::ResourceRequest().devices(1)}, ACCEL_PLACEMENT_STRATEGY_PACK,
                                 ACCEL_TOPOLOGY_LEVEL_NODE, true, "more", team.handle());
    });
    EXPECT_EQ(refused.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(refused.what()).find("queue 'team' is at its limit"), std::string::npos) << refused.what();
  }
  EXPECT_EQ(team.usage().devices, 0.0) << "the destroyed group's charge is gone";
}

TEST_F(RuntimeHpp, AQueuesUsageCountsItsTasks) {
  accel::Queue dept(runtime_, accel::QueueDesc("dept").quota(2.0).weight(2.0));
  accel::Queue team(runtime_, accel::QueueDesc("team").parent(dept).limit(1.0));
  Gate gate;
  std::atomic<int> running{0};
  std::vector<accel::Future> futures;
  for (int i = 0; i < 4; ++i) {
    futures.push_back(runtime_.submit(
        [&](accel::TaskContext&) {
          ++running;
          gate.Wait();
        },
        accel::TaskOptions().queue(team).priority(i).request(accel::ResourceRequest().devices(1).share(0.25))));
  }
  ASSERT_TRUE(Eventually([&] { return running.load() == 4; }));
  accel_queue_usage_t usage = team.usage();
  EXPECT_DOUBLE_EQ(usage.devices, 1.0) << "four quarters, at the team's limit";
  EXPECT_EQ(usage.running, 4U);
  EXPECT_DOUBLE_EQ(dept.usage().devices, 1.0) << "a parent counts its children";
  // A fifth quarter waits for the limit.
  accel::Future fifth =
      runtime_.submit([](accel::TaskContext&) {},
                      accel::TaskOptions().queue(team).request(accel::ResourceRequest().devices(1).share(0.25)));
  ASSERT_TRUE(Eventually([&] { return Contains(fifth.message(), "limit"); })) << fifth.message();
  gate.Open();
  for (accel::Future& f : futures) f.get();
  fifth.get();
  usage = team.usage();
  EXPECT_EQ(usage.finished, 5U);
  EXPECT_EQ(usage.running, 0U);
  EXPECT_EQ(usage.pending, 0U);
  EXPECT_EQ(dept.usage().finished, 5U);
  ASSERT_TRUE(Eventually([&] { return team.usage().devices == 0.0; }));
  // Bad input names the field.
  const accel::Error duplicate = Thrown([&] { accel::Queue again(runtime_, accel::QueueDesc("dept")); });
  EXPECT_EQ(duplicate.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  const accel::Error below = Thrown([&] { accel::Queue q(runtime_, accel::QueueDesc("q").quota(2.0).limit(1.0)); });
  EXPECT_EQ(below.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(below.what(), "limit")) << below.what();
}

struct Ledger {
  int next = 0;
  int inits = 0;
  std::vector<int> seen;
  std::shared_ptr<int> token;  // tells the test when the state is destroyed
};

TEST_F(RuntimeHpp, AnActorsCallsRunInOrderWithItsState) {
  auto token = std::make_shared<int>(0);
  auto finalized = std::make_shared<std::atomic<int>>(0);
  Ledger initial;
  initial.token = token;
  std::vector<int> seen;
  {
    accel::Actor<Ledger> ledger(runtime_, std::move(initial),
                                accel::ActorOptions<Ledger>()
                                    .name("ledger")
                                    .request(accel::ResourceRequest().devices(1).share(0.5).memory(kGiB))
                                    .init([](accel::TaskContext& ctx, Ledger& s) {
                                      if (ctx.memory_limit(0) != kGiB) throw std::runtime_error("wrong limit");
                                      ++s.inits;
                                    })
                                    .finalize([finalized](accel::TaskContext&, Ledger&) { ++*finalized; }));
    std::vector<accel::Future> calls;
    for (int i = 0; i < 30; ++i) {
      calls.push_back(ledger.call([i](accel::TaskContext& ctx, Ledger& s) -> accel_status_t {
        if (s.next != i || s.inits != 1 || ctx.device_count() != 1) {
          return accel_set_last_error(ACCEL_ERROR_INTERNAL, "out of order");
        }
        s.seen.push_back(i);
        ++s.next;
        return ACCEL_SUCCESS;
      }));
    }
    // A call that throws fails alone; the actor stays alive and keeps its state.
    accel::Future bad = ledger.call([](accel::TaskContext&, Ledger&) { throw std::logic_error("bad key"); });
    ledger.call([&seen](accel::TaskContext&, Ledger& s) { seen = s.seen; }, accel::TaskOptions().name("copy")).get();
    for (accel::Future& f : calls) f.get();
    const accel::Error e = Thrown([&] { bad.get(); });
    EXPECT_EQ(e.status(), ACCEL_ERROR_INTERNAL);
    EXPECT_STREQ(e.what(), "bad key");
    const accel_actor_info_t info = ledger.info();
    EXPECT_EQ(info.state, ACCEL_ACTOR_STATE_ALIVE);
    EXPECT_EQ(info.calls_done, 32U);
    EXPECT_EQ(info.calls_pending, 0U);
    EXPECT_EQ(ledger.message(), "");
    // A call may not carry a request of its own.
    EXPECT_EQ(Thrown([&] {
                ledger.call([](accel::TaskContext&, Ledger&) {},
                            accel::TaskOptions().request(accel::ResourceRequest().devices(1)));
              }).status(),
              ACCEL_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(finalized->load(), 0);
  }  // destroyed: finalize runs, then the state is released
  ASSERT_EQ(seen.size(), 30U);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
  ASSERT_TRUE(Eventually([&] { return token.use_count() == 1; })) << "the runtime released the actor's state";
  EXPECT_EQ(finalized->load(), 1);
  EXPECT_EQ(runtime_.counters().actors_created, 1U);
}

TEST_F(RuntimeHpp, AnActorWhoseInitFailsIsDeadAndSaysWhy) {
  accel::Actor<int> broken(runtime_, 0, accel::ActorOptions<int>().name("broken").init([](accel::TaskContext&, int&) {
    throw accel::Error(ACCEL_ERROR_NOT_FOUND, "weights file missing");
  }));
  ASSERT_TRUE(Eventually([&] { return broken.info().state == ACCEL_ACTOR_STATE_DEAD; }));
  EXPECT_TRUE(Contains(broken.message(), "weights file missing")) << broken.message();
  const accel::Error e = Thrown([&] { broken.call([](accel::TaskContext&, int&) {}); });
  EXPECT_EQ(e.status(), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_TRUE(Contains(e.what(), "weights file missing")) << e.what();
}

TEST_F(RuntimeHpp, AMovedFromOwnerDestroysNothing) {
  // A group moved out of its scope keeps its reservation.
  accel::PlacementGroup kept;
  {
    accel::PlacementGroup made(runtime_, {accel::ResourceRequest().devices(2)}, ACCEL_PLACEMENT_STRATEGY_PACK,
                               ACCEL_TOPOLOGY_LEVEL_CLIQUE);
    kept = std::move(made);
    EXPECT_FALSE(made);  // NOLINT(bugprone-use-after-move): a moved-from owner is empty
  }
  auto held = [&] {
    int n = 0;
    for (const accel_runtime_device_t& d : runtime_.devices()) n += d.share_free == 0.0 ? 1 : 0;
    return n;
  };
  EXPECT_EQ(held(), 2);
  EXPECT_EQ(kept.devices().size(), 2U);
  kept = accel::PlacementGroup();  // move-assigning destroys the old one
  ASSERT_TRUE(Eventually([&] { return held() == 0; }));

  // A future moved away: the old one is empty, the new one reads the task.
  accel::Future moved;
  {
    accel::Future original = runtime_.submit([](accel::TaskContext&) {});
    moved = std::move(original);
    EXPECT_EQ(original.handle(), nullptr);  // NOLINT(bugprone-use-after-move)
    const accel::Error e = Thrown([&] { original.wait(); });
    EXPECT_EQ(e.status(), ACCEL_ERROR_INVALID_HANDLE);
    EXPECT_TRUE(Contains(e.what(), "empty")) << e.what();
  }
  moved.get();
  // release() and adopt() hand the handle over without destroying it.
  accel::Future readopted = accel::Future::adopt(moved.release());
  EXPECT_EQ(readopted.query(), ACCEL_SUCCESS);
  EXPECT_FALSE(moved);

  // Queues, actors and the runtime itself.
  accel::Queue queue_kept;
  {
    accel::Queue q(runtime_, accel::QueueDesc("moved"));
    queue_kept = std::move(q);
  }
  runtime_.submit([](accel::TaskContext&) {}, accel::TaskOptions().queue(queue_kept)).get();
  EXPECT_EQ(queue_kept.usage().finished, 1U);
  accel::Actor<int> actor_kept;
  {
    accel::Actor<int> a(runtime_, 41);
    actor_kept = std::move(a);
  }
  int answer = 0;
  actor_kept.call([&answer](accel::TaskContext&, int& s) { answer = ++s; }).get();
  EXPECT_EQ(answer, 42);
  accel::Runtime other(instance_.handle(), 2);
  accel::Runtime moved_runtime(std::move(other));
  EXPECT_FALSE(other);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved_runtime.devices().size(), 8U);
  moved_runtime.submit([](accel::TaskContext&) {}).get();
  EXPECT_EQ(moved_runtime.counters().finished, 1U);
}

TEST_F(RuntimeHpp, BadInputThrowsAndTheTaskIsDestroyedUncalled) {
  auto token = std::make_shared<int>(0);
  bool called = false;
  const accel::Error e = Thrown([&] {
    runtime_.submit([token, &called](accel::TaskContext&) { called = true; },
                    accel::TaskOptions().request(accel::ResourceRequest().devices(1).selector("kind==gpu && (mem>=")));
  });
  EXPECT_EQ(e.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(Contains(e.what(), "'desc->request->selector'")) << e.what();
  EXPECT_EQ(token.use_count(), 1) << "the copy of the task was destroyed";
  EXPECT_FALSE(called);

  const accel::Error none = Thrown([&] {
    runtime_.submit([](accel::TaskContext&) {},
                    accel::TaskOptions().request(accel::ResourceRequest().devices(1).selector("kind==tpu")));
  });
  EXPECT_EQ(none.status(), ACCEL_ERROR_NOT_FOUND);
  const accel::Error share = Thrown([&] {
    runtime_.submit([](accel::TaskContext&) {},
                    accel::TaskOptions().request(accel::ResourceRequest().devices(1).share(1.5)));
  });
  EXPECT_EQ(share.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  const accel::Error no_bundles = Thrown([&] { accel::PlacementGroup g(runtime_, {}); });
  EXPECT_EQ(no_bundles.status(), ACCEL_ERROR_INVALID_ARGUMENT);
  const accel::Error actor = Thrown([&] {
    accel::Actor<int> a(runtime_, 0, accel::ActorOptions<int>().request(accel::ResourceRequest().devices(9)));
  });
  EXPECT_EQ(actor.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(runtime_.counters().submitted, 0U);
  for (const accel_runtime_device_t& d : runtime_.devices()) EXPECT_EQ(d.share_free, 1.0);
  // An empty owner's calls fail as calls on a NULL handle.
  accel::Queue empty;
  EXPECT_EQ(Thrown([&] { empty.usage(); }).status(), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(Thrown([&] { accel::Future().get(); }).status(), ACCEL_ERROR_INVALID_HANDLE);
}

TEST(RuntimeHppRaw, ARuntimeOverARawInstanceCountsWhatItDid) {
  ASSERT_TRUE(kProfileSet);
  accel::Instance instance;
  accel::Future survivor;
  {
    accel::Runtime runtime(instance.handle());
    EXPECT_EQ(runtime.devices().size(), 8U);
    for (int i = 0; i < 10; ++i) runtime.submit([](accel::TaskContext&) {}).get();
    survivor = runtime.submit([](accel::TaskContext&) { return ACCEL_SUCCESS; });
    survivor.wait();
    const accel_runtime_counters_t c = runtime.counters();
    EXPECT_EQ(c.submitted, 11U);
    EXPECT_EQ(c.finished + c.failed + c.cancelled, c.submitted);
    EXPECT_EQ(accel::runtime_version(), uint32_t{ACCEL_RUNTIME_VERSION});
  }
  EXPECT_EQ(survivor.query(), ACCEL_SUCCESS) << "a future stays readable after its runtime";
}

// 1.3: the decision log through the wrapper.
TEST_F(RuntimeHpp, TheEventLogReadsBackInOrder) {
  EXPECT_TRUE(runtime_.events().empty());
  runtime_.set_event_log(16);
  runtime_.submit([](accel::TaskContext&) {}).get();
  const std::vector<accel_runtime_event_t> events = runtime_.events();
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events.front().kind, static_cast<uint32_t>(ACCEL_RUNTIME_EVENT_SUBMITTED));
  EXPECT_EQ(events.back().kind, static_cast<uint32_t>(ACCEL_RUNTIME_EVENT_FINISHED));
  EXPECT_EQ(runtime_.events(events[1].sequence).size(), 2U);
  EXPECT_EQ(Thrown([&] { runtime_.set_event_log(ACCEL_RUNTIME_EVENT_LOG_MAX + 1); }).status(),
            ACCEL_ERROR_INVALID_ARGUMENT);
}

}  // namespace
