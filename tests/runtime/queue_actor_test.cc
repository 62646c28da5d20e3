// libaccel-runtime 1.1 on a simulated 8-GPU node (docs/scheduler.md,
// "Queues" and "Actors"): weighted fair share converging to the weights,
// quota reclaimed by preemption, limits and the hierarchy, priorities, a
// property test that a queue under its quota is never starved, and actors
// (ordered calls on one reservation, persistent memory, restart after device
// loss, reported death, bad input).
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

accel_queue_desc_t QueueDesc(const char* name, double quota = 0.0, double limit = 0.0, double weight = 1.0,
                             accel_queue_t parent = nullptr) {
  accel_queue_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_QUEUE_DESC;
  d.struct_size = sizeof(d);
  d.name = name;
  d.parent = parent;
  d.quota_devices = quota;
  d.limit_devices = limit;
  d.weight = weight;
  return d;
}

accel_queue_t MakeQueue(accel_runtime_t rt, const char* name, double quota = 0.0, double limit = 0.0,
                        double weight = 1.0, accel_queue_t parent = nullptr) {
  const accel_queue_desc_t d = QueueDesc(name, quota, limit, weight, parent);
  accel_queue_t q = nullptr;
  EXPECT_EQ(accel_queue_create(rt, &d, &q), ACCEL_SUCCESS) << accel_last_error();
  return q;
}

accel_queue_usage_t Usage(accel_queue_t q) {
  accel_queue_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_QUEUE_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_queue_get_usage(q, &u), ACCEL_SUCCESS) << accel_last_error();
  return u;
}

// Hands out permits one at a time: each task body takes one to end.
class Permits {
 public:
  void Give(int n = 1) {
    {
      std::lock_guard lock(mutex_);
      count_ += n;
    }
    cv_.notify_all();
  }
  void Take() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return count_ > 0; });
    --count_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

// Holds every device of the node until released: lets a test queue work first and place it in one pass.
accel_placement_group_t HoldAll(accel_runtime_t rt) {
  std::vector<accel_resource_request_t> bundles(8, Request(1));
  accel_placement_group_t g = nullptr;
  EXPECT_EQ(MakeGroup(rt, bundles, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &g), ACCEL_SUCCESS)
      << accel_last_error();
  return g;
}

TEST(Queues, FairShareConvergesToTheWeights) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt(nullptr, 16);
  accel_queue_t a = MakeQueue(rt.get(), "a", 0.0, 0.0, 1.0);
  accel_queue_t b = MakeQueue(rt.get(), "b", 0.0, 0.0, 3.0);
  accel_placement_group_t hold = HoldAll(rt.get());
  Permits permits;
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  constexpr int kEach = 24;  // enough that neither queue runs dry in the twelve steps below
  for (int i = 0; i < kEach; ++i) {
    for (accel_queue_t q : {a, b}) {
      accel_future_t f = nullptr;
      ASSERT_EQ(rt.Submit(
                    &one,
                    [&](accel_task_context_t) {
                      permits.Take();
                      return ACCEL_SUCCESS;
                    },
                    &f, {}, 0, nullptr, q),
                ACCEL_SUCCESS)
          << accel_last_error();
    }
  }
  EXPECT_EQ(Usage(a).pending, uint64_t{kEach});
  ASSERT_EQ(accel_placement_group_destroy(hold), ACCEL_SUCCESS);
  // Dominant shares equalised by weight: a holds 2 of 8 devices, b 6.
  ASSERT_TRUE(Eventually([&] { return rt.Counters().running == 8; }))
      << rt.Counters().running << " running; a holds " << Usage(a).devices << ", b " << Usage(b).devices;
  EXPECT_DOUBLE_EQ(Usage(a).devices, 2.0);
  EXPECT_DOUBLE_EQ(Usage(b).devices, 6.0);
  EXPECT_NEAR(Usage(b).dominant_share, 0.75, 1e-9);
  // Whichever task ends, the freed device goes to the queue below its weighted share: 2 and 6 stay.
  for (int step = 1; step <= 12; ++step) {
    permits.Give();
    ASSERT_TRUE(Eventually([&] {
      const auto c = rt.Counters();
      return c.finished == static_cast<uint64_t>(step) && c.running == 8;
    })) << "step "
        << step;
    EXPECT_DOUBLE_EQ(Usage(a).devices, 2.0) << "step " << step;
    EXPECT_DOUBLE_EQ(Usage(b).devices, 6.0) << "step " << step;
  }
  permits.Give(2 * kEach);
  ASSERT_TRUE(Eventually([&] { return rt.Counters().finished == 2 * kEach; }));
  EXPECT_EQ(Usage(a).finished + Usage(b).finished, uint64_t{2 * kEach});
  EXPECT_EQ(Usage(a).devices, 0.0);
  EXPECT_EQ(accel_queue_destroy(a), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_queue_destroy(b), ACCEL_SUCCESS) << accel_last_error();
}

// A preemptible body: runs until `done`, or returns CANCELLED once preempted.
Body Preemptible(std::atomic<bool>& done, std::atomic<int>& preempted_seen) {
  return [&done, &preempted_seen](accel_task_context_t ctx) -> accel_status_t {
    for (;;) {
      uint32_t preempted = 0;
      EXPECT_EQ(accel_task_context_is_preempted(ctx, &preempted), ACCEL_SUCCESS);
      if (preempted != 0) {
        uint32_t cancelled = 0;
        EXPECT_EQ(accel_task_context_is_cancelled(ctx, &cancelled), ACCEL_SUCCESS);
        EXPECT_EQ(cancelled, 1U) << "a preempted task also reads as asked to stop";
        ++preempted_seen;
        return accel_set_last_error(ACCEL_ERROR_CANCELLED, "preempted: stopping");
      }
      if (done) return ACCEL_SUCCESS;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
}

// Eight preemptible tasks of one whole device each in `queue`, filling the node; empty when a submission failed.
std::vector<accel_future_t> FillWithPreemptible(RuntimeFixture& rt, accel_queue_t queue, std::atomic<bool>& done,
                                                std::atomic<int>& preempted_seen) {
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  std::vector<accel_future_t> futures;
  for (int i = 0; i < 8; ++i) {
    accel_future_t f = nullptr;
    EXPECT_EQ(rt.Submit(&one, Preemptible(done, preempted_seen), &f, {}, 0, "explore", queue, 0, 1), ACCEL_SUCCESS);
    if (f == nullptr) return {};
    futures.push_back(f);
  }
  EXPECT_TRUE(Eventually([&] { return Usage(queue).devices == 8.0; }));
  return futures;
}

TEST(Queues, QuotaIsReclaimedByPreemption) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt(nullptr, 16);
  accel_queue_t research = MakeQueue(rt.get(), "research");  // no quota: everything it holds is over quota
  accel_queue_t prod = MakeQueue(rt.get(), "prod", 4.0);
  std::atomic<bool> research_done{false};
  std::atomic<bool> prod_done{false};
  std::atomic<int> preempted_seen{0};
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  const std::vector<accel_future_t> research_futures = FillWithPreemptible(rt, research, research_done, preempted_seen);
  ASSERT_EQ(research_futures.size(), 8U);
  EXPECT_EQ(Usage(research).over_quota, 1U);
  std::vector<accel_future_t> prod_futures;
  for (int i = 0; i < 4; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  &one,
                  [&](accel_task_context_t) {
                    while (!prod_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    return ACCEL_SUCCESS;
                  },
                  &f, {}, 0, "serve", prod),
              ACCEL_SUCCESS);
    prod_futures.push_back(f);
  }
  // Exactly the room prod's quota needs is reclaimed; the preempted work waits, it is not failed.
  ASSERT_TRUE(Eventually([&] { return Usage(prod).devices == 4.0 && Usage(research).devices == 4.0; }))
      << "prod " << Usage(prod).devices << " research " << Usage(research).devices;
  EXPECT_EQ(rt.Counters().preempted, 4U);
  EXPECT_EQ(preempted_seen.load(), 4);
  EXPECT_EQ(Usage(research).preempted, 4U);
  EXPECT_EQ(Usage(research).pending, 4U);
  EXPECT_EQ(Usage(prod).over_quota, 0U);
  EXPECT_EQ(rt.Counters().failed, 0U);
  // A waiting research task says why it waits.
  std::string why;
  for (accel_future_t f : research_futures) {
    if (accel_future_query(f) == ACCEL_NOT_READY && Message(f).find("capacity") != std::string::npos) why = Message(f);
  }
  EXPECT_FALSE(why.empty());
  prod_done = true;
  research_done = true;
  for (accel_future_t f : prod_futures) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  for (accel_future_t f : research_futures) {
    EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  }
  const auto c = rt.Counters();
  EXPECT_EQ(c.finished, 12U);
  EXPECT_EQ(c.preempted, 4U);
  EXPECT_EQ(c.finished + c.failed + c.cancelled, c.submitted);
}

// A placement group that waits (ACCEL_PLACEMENT_GROUP_WAIT) in a queue under its quota reclaims as a task does:
// exactly the room it needs is preempted from a queue over its quota, then it is placed whole.
TEST(Queues, APendingGroupUnderItsQuotaReclaimsFromQueuesOverTheirs) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt(nullptr, 16);
  accel_queue_t research = MakeQueue(rt.get(), "research");  // no quota
  accel_queue_t prod = MakeQueue(rt.get(), "prod", 4.0);
  std::atomic<bool> research_done{false};
  std::atomic<int> preempted_seen{0};
  const std::vector<accel_future_t> research_futures = FillWithPreemptible(rt, research, research_done, preempted_seen);
  ASSERT_EQ(research_futures.size(), 8U);

  std::vector<accel_resource_request_t> bundles(3, Request(1, 1.0, kGiB));
  accel_placement_group_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
  d.struct_size = sizeof(d);
  d.name = "serving";
  d.flags = ACCEL_PLACEMENT_GROUP_WAIT;
  d.bundles = bundles.data();
  d.bundle_count = 3;
  d.strategy = ACCEL_PLACEMENT_STRATEGY_PACK;
  d.level = ACCEL_TOPOLOGY_LEVEL_NODE;
  d.queue = prod;
  accel_placement_group_t group = nullptr;
  ASSERT_EQ(accel_placement_group_create(rt.get(), &d, &group), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_placement_group_wait(group, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(GroupDevices(group).size(), 3U);
  EXPECT_DOUBLE_EQ(Usage(prod).devices, 3.0);
  EXPECT_EQ(rt.Counters().preempted, 3U) << "exactly the room the group needs";
  ASSERT_TRUE(Eventually([&] { return preempted_seen.load() == 3; })) << preempted_seen.load();
  EXPECT_EQ(Usage(research).preempted, 3U);
  EXPECT_EQ(rt.Counters().failed, 0U);

  // A second group that would take prod past its quota takes nothing from others: it says so and waits.
  std::vector<accel_resource_request_t> more(5, Request(1, 1.0, kGiB));
  d.name = "more";
  d.bundles = more.data();
  d.bundle_count = 5;
  accel_placement_group_t second = nullptr;
  ASSERT_EQ(accel_placement_group_create(rt.get(), &d, &second), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_placement_group_wait(second, 1000000), ACCEL_ERROR_TIMEOUT);
  size_t n = 0;
  ASSERT_EQ(accel_placement_group_get_message(second, 0, nullptr, &n), ACCEL_SUCCESS);
  std::string text(n, '\0');
  ASSERT_EQ(accel_placement_group_get_message(second, n, text.data(), &n), ACCEL_SUCCESS);
  EXPECT_NE(text.find("queue 'prod' is under its quota, but the group (5 device(s), 5 GiB) would take it past its "
                      "quota (3 device(s) of 4 held)"),
            std::string::npos)
      << text;
  EXPECT_EQ(rt.Counters().preempted, 3U) << "prod holds 3 of its quota of 4: nothing is taken for 5 more";
  EXPECT_EQ(accel_placement_group_destroy(second), ACCEL_SUCCESS);

  research_done = true;
  EXPECT_EQ(accel_placement_group_destroy(group), ACCEL_SUCCESS);
  for (accel_future_t f : research_futures) {
    EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  }
  EXPECT_EQ(rt.Counters().finished, 8U) << "the preempted tasks ran again";
}

TEST(Queues, WithoutPreemptibleWorkTheQueueUnderQuotaWaitsAndOthersGetNothingNew) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt(nullptr, 16);
  accel_queue_t batch = MakeQueue(rt.get(), "batch");
  accel_queue_t prod = MakeQueue(rt.get(), "prod", 2.0);
  Gate gate;
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  auto wait = [&](accel_task_context_t) {
    gate.Wait();
    return ACCEL_SUCCESS;
  };
  accel_future_t f = nullptr;
  for (int i = 0; i < 8; ++i) ASSERT_EQ(rt.Submit(&one, wait, &f, {}, 0, "batch", batch), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return Usage(batch).devices == 8.0; }));
  accel_future_t p = nullptr;
  ASSERT_EQ(rt.Submit(&one, wait, &p, {}, 0, "serve", prod), ACCEL_SUCCESS);
  accel_future_t later = nullptr;
  ASSERT_EQ(rt.Submit(&one, wait, &later, {}, 0, "more batch", batch), ACCEL_SUCCESS);
  EXPECT_NE(Message(p).find("queue 'prod' is under its quota, but no preemptible work"), std::string::npos)
      << Message(p);
  EXPECT_NE(Message(later).find("queue 'batch' is over its quota while queue 'prod', under its quota, waits"),
            std::string::npos)
      << Message(later);
  gate.Open();
  EXPECT_EQ(accel_future_wait(p, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(later, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(rt.Counters().preempted, 0U);
}

// A placement group in a queue (1.1): its reservation counts against the queue and its ancestors while it lives;
// past a limit it is refused at once with nothing held; tasks of the queue then meet the limit too.
TEST(Queues, PlacementGroupsCountAgainstTheirQueue) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  accel_queue_t dept = MakeQueue(rt.get(), "dept", 0.0, 4.0);
  accel_queue_t team = MakeQueue(rt.get(), "team", 0.0, 0.0, 1.0, dept);
  auto group_in = [&](accel_queue_t q, uint32_t devices, accel_placement_group_t* out) {
    std::vector<accel_resource_request_t> bundles(devices, Request(1, 1.0, kGiB));
    accel_placement_group_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
    d.struct_size = sizeof(d);
    d.name = "g";
    d.bundles = bundles.data();
    d.bundle_count = devices;
    d.strategy = ACCEL_PLACEMENT_STRATEGY_PACK;
    d.level = ACCEL_TOPOLOGY_LEVEL_NODE;
    d.queue = q;
    return accel_placement_group_create(rt.get(), &d, out);
  };
  auto free_share = [&] {
    double sum = 0;
    for (const auto& dev : rt.Devices()) sum += dev.share_free;
    return sum;
  };
  accel_placement_group_t three = nullptr;
  ASSERT_EQ(group_in(team, 3, &three), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_DOUBLE_EQ(Usage(team).devices, 3.0);
  EXPECT_DOUBLE_EQ(Usage(dept).devices, 3.0) << "an ancestor counts its descendants' groups";
  EXPECT_EQ(Usage(team).memory, 3 * kGiB);
  // Past dept's limit of 4: refused now, and nothing is held.
  const double before = free_share();
  accel_placement_group_t two = nullptr;
  EXPECT_EQ(group_in(team, 2, &two), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error())
                .find("placement group 'g': nothing is held: queue 'dept' is at its limit: it holds 3 of 4 "
                      "device(s) and the group asks 2"),
            std::string::npos)
      << accel_last_error();
  EXPECT_EQ(two, nullptr);
  EXPECT_DOUBLE_EQ(free_share(), before);
  EXPECT_DOUBLE_EQ(Usage(team).devices, 3.0);
  // A queue with children takes no group; a queue of another runtime is refused.
  accel_placement_group_t bad = nullptr;
  EXPECT_EQ(group_in(dept, 1, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("queue 'dept' has child queues"), std::string::npos)
      << accel_last_error();
  {
    RuntimeFixture other;
    accel_queue_t foreign = MakeQueue(other.get(), "foreign");
    EXPECT_EQ(group_in(foreign, 1, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(accel_last_error()).find("'desc->queue' is a queue of another runtime"), std::string::npos)
        << accel_last_error();
    EXPECT_EQ(accel_queue_destroy(foreign), ACCEL_SUCCESS);
  }
  // Tasks of the team meet the same limit: one more device fits, a second waits for it.
  Gate gate;
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  auto wait = [&](accel_task_context_t) {
    gate.Wait();
    return ACCEL_SUCCESS;
  };
  accel_future_t fits = nullptr;
  accel_future_t waits = nullptr;
  ASSERT_EQ(rt.Submit(&one, wait, &fits, {}, 0, "fits", team), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return Usage(team).devices == 4.0; }));
  ASSERT_EQ(rt.Submit(&one, wait, &waits, {}, 0, "waits", team), ACCEL_SUCCESS);
  EXPECT_NE(Message(waits).find("queue 'dept' is at its limit"), std::string::npos) << Message(waits);
  // The queue cannot go while its group lives; destroying the group frees its charge and the waiting task runs.
  EXPECT_EQ(accel_queue_destroy(team), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(accel_placement_group_destroy(three), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return Usage(team).running == 2; })) << Message(waits);
  EXPECT_DOUBLE_EQ(Usage(dept).devices, 2.0);
  gate.Open();
  EXPECT_EQ(accel_future_wait(fits, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(waits, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_DOUBLE_EQ(Usage(dept).devices, 0.0);
  EXPECT_EQ(Usage(dept).memory, 0U);
  EXPECT_EQ(accel_queue_destroy(team), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_queue_destroy(dept), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(rt.Counters().placement_groups_refused, 1U) << "the limit refusal counts; bad input does not";
}

TEST(Queues, LimitsHierarchyAndPriorities) {
  ASSERT_TRUE(kProfileSet);
  ScopedEnv visible("ACCEL_VISIBLE_DEVICES", "0,1,2");
  RuntimeFixture rt(nullptr, 8);
  accel_queue_t dept = MakeQueue(rt.get(), "dept", 1.0, 2.0);
  accel_queue_t p1 = MakeQueue(rt.get(), "p1", 0.0, 0.0, 1.0, dept);
  accel_queue_t p2 = MakeQueue(rt.get(), "p2", 0.0, 0.0, 1.0, dept);
  Gate gate;
  const accel_resource_request_t one = Request(1, 1.0, kGiB);
  auto wait = [&](accel_task_context_t) {
    gate.Wait();
    return ACCEL_SUCCESS;
  };
  accel_future_t f1 = nullptr;
  accel_future_t f2 = nullptr;
  accel_future_t f3 = nullptr;
  ASSERT_EQ(rt.Submit(&one, wait, &f1, {}, 0, nullptr, p1), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(&one, wait, &f2, {}, 0, nullptr, p2), ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(&one, wait, &f3, {}, 0, nullptr, p1), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return Usage(dept).devices == 2.0; }));
  EXPECT_EQ(accel_future_query(f3), ACCEL_NOT_READY);
  EXPECT_NE(Message(f3).find("queue 'dept' is at its limit: it holds 2 of 2 device(s)"), std::string::npos)
      << Message(f3);
  EXPECT_DOUBLE_EQ(Usage(p1).devices, 1.0);
  EXPECT_DOUBLE_EQ(Usage(p2).devices, 1.0);
  // Larger than the limit: refused at once. Into a queue with children: refused.
  const accel_resource_request_t three = Request(3, 1.0, kGiB);
  accel_future_t x = nullptr;
  EXPECT_EQ(rt.Submit(&three, wait, &x, {}, 0, nullptr, p2), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("more than queue 'dept' may ever hold"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(rt.Submit(&one, wait, &x, {}, 0, nullptr, dept), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("has child queues"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_queue_destroy(dept), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(accel_last_error()).find("2 child queue(s)"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_queue_destroy(p1), ACCEL_ERROR_FAILED_PRECONDITION);
  gate.Open();
  for (accel_future_t f : {f1, f2, f3}) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);

  // Priorities: with one device held, the waiting tasks start highest priority first, then in order.
  accel_queue_t solo = MakeQueue(rt.get(), "solo");
  accel_placement_group_t hold = nullptr;
  std::vector<accel_resource_request_t> all(3, Request(1));
  ASSERT_EQ(MakeGroup(rt.get(), all, ACCEL_PLACEMENT_STRATEGY_PACK, ACCEL_TOPOLOGY_LEVEL_NODE, &hold), ACCEL_SUCCESS);
  std::mutex m;
  std::vector<int> order;
  const accel_resource_request_t whole = Request(3, 1.0, kGiB);  // one at a time
  std::vector<accel_future_t> fs;
  for (int prio : {0, 5, 1, 5, -2}) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  &whole,
                  [&, prio](accel_task_context_t) {
                    std::lock_guard lock(m);
                    order.push_back(prio);
                    return ACCEL_SUCCESS;
                  },
                  &f, {}, 0, nullptr, solo, prio),
              ACCEL_SUCCESS);
    fs.push_back(f);
  }
  ASSERT_EQ(accel_placement_group_destroy(hold), ACCEL_SUCCESS);
  for (accel_future_t f : fs) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(order, (std::vector<int>{5, 5, 1, 0, -2}));
  for (accel_queue_t q : {p1, p2, dept, solo}) EXPECT_EQ(accel_queue_destroy(q), ACCEL_SUCCESS) << accel_last_error();
}

TEST(Queues, BadInputIsRefusedWithTheField) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  accel_queue_t q = nullptr;
  struct Case {
    accel_queue_desc_t desc;
    const char* expect;
  };
  const double nan = std::nan("");
  accel_queue_t good = MakeQueue(rt.get(), "good");
  std::vector<Case> cases = {
      {QueueDesc(""), "'desc->name' is NULL or empty"},
      {QueueDesc("a/b"), "contains '/'"},
      {QueueDesc("n", nan), "'desc->quota_devices' is nan"},
      {QueueDesc("n", -1.0), "'desc->quota_devices' is -1"},
      {QueueDesc("n", 0.0, -2.0), "'desc->limit_devices' is -2"},
      {QueueDesc("n", 0.0, 0.0, -1.0), "'desc->weight' is -1"},
      {QueueDesc("n", 4.0, 2.0), "'desc->limit_devices' 2 is below 'desc->quota_devices' 4"},
      {QueueDesc("n", 1e13), "'desc->quota_devices' is 1e+13: at most"},  // share units past int64 (was negative)
      {QueueDesc("n", 0.0, 1e13), "'desc->limit_devices' is 1e+13: at most"},
      {QueueDesc("good"), "queue 'good' exists"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(accel_queue_create(rt.get(), &c.desc, &q), ACCEL_ERROR_INVALID_ARGUMENT) << c.expect;
    EXPECT_NE(std::string(accel_last_error()).find(c.expect), std::string::npos) << accel_last_error();
    EXPECT_EQ(std::string(accel_last_error()).rfind("accel_queue_create: ", 0), 0U)
        << "the message starts with the entry point's name: " << accel_last_error();
    EXPECT_EQ(q, nullptr);
  }
  accel_queue_desc_t d = QueueDesc("x");
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  EXPECT_EQ(accel_queue_create(rt.get(), &d, &q), ACCEL_ERROR_INVALID_ARGUMENT);
  d = QueueDesc("x", 0, 0, 1, reinterpret_cast<accel_queue_t>(uintptr_t{0x1234}));
  EXPECT_EQ(accel_queue_create(rt.get(), &d, &q), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_queue_get_usage(nullptr, nullptr), ACCEL_ERROR_INVALID_HANDLE);
  accel_queue_usage_t u{};
  EXPECT_EQ(accel_queue_get_usage(good, &u), ACCEL_ERROR_INVALID_ARGUMENT);
  // A task marked preemptible with a value other than 0/1.
  accel_task_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  td.struct_size = sizeof(td);
  td.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  td.preemptible = 7;
  accel_future_t f = nullptr;
  EXPECT_EQ(accel_task_submit(rt.get(), &td, &f), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->preemptible' is 7"), std::string::npos);
  EXPECT_EQ(accel_queue_destroy(good), ACCEL_SUCCESS);
  EXPECT_EQ(accel_queue_destroy(good), ACCEL_ERROR_INVALID_HANDLE);
}

// Two threads destroy the same child queue at once: one succeeds, the other finds the handle stale, and the
// parent's count of children drops once (it wrapped before, and the parent then refused work and its own destroy).
TEST(Queues, TwoRacingDestroysOfAQueueLowerItsParentsChildrenOnce) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  for (int round = 0; round < 40; ++round) {
    accel_queue_t parent = MakeQueue(rt.get(), ("parent" + std::to_string(round)).c_str());
    accel_queue_t child = MakeQueue(rt.get(), "child", 0.0, 0.0, 1.0, parent);
    accel_status_t results[2] = {ACCEL_SUCCESS, ACCEL_SUCCESS};
    accel_test::RaceTwo([&](int t) { results[t] = accel_queue_destroy(child); });
    EXPECT_EQ((results[0] == ACCEL_SUCCESS) + (results[1] == ACCEL_SUCCESS), 1)
        << "round " << round << ": " << results[0] << ", " << results[1];
    for (accel_status_t r : results) EXPECT_TRUE(r == ACCEL_SUCCESS || r == ACCEL_ERROR_INVALID_HANDLE) << r;
    EXPECT_EQ(accel_queue_destroy(parent), ACCEL_SUCCESS) << "round " << round << ": " << accel_last_error();
  }
}

// Property: over random request streams, a task of a queue under its quota
// is never starved by a queue over its quota: while it waits, the flooding
// queue gets nothing new, so the flood tasks that start meanwhile are at most
// those already placed when it arrived plus those placed in the pass that
// placed it (32: what fits on the node at share 0.25); and everything ends.
TEST(QueuesProperty, AQueueUnderItsQuotaIsNeverStarved) {
  ASSERT_TRUE(kProfileSet);
  for (uint32_t seed : {1U, 2U, 3U}) {
    RuntimeFixture rt(nullptr, 12);
    accel_queue_t flood = MakeQueue(rt.get(), "flood");
    accel_queue_t guaranteed = MakeQueue(rt.get(), "guaranteed", 8.0);
    std::mt19937 rng(seed);
    std::atomic<uint64_t> flood_starts{0};
    std::atomic<bool> stop{false};
    std::mutex m;
    std::vector<std::pair<uint64_t, uint64_t>> windows;  // flood starts at submission and at start
    std::vector<accel_future_t> mine;
    std::vector<accel_future_t> theirs;
    const double shares[] = {0.25, 0.5, 1.0};
    for (int i = 0; i < 160; ++i) {
      const uint32_t devices = 1 + rng() % 2;
      const double share = shares[rng() % 3];
      const accel_resource_request_t r = Request(devices, share, kGiB);
      const uint32_t preemptible = rng() % 2;
      const int ms = static_cast<int>(rng() % 3);
      accel_future_t f = nullptr;
      ASSERT_EQ(rt.Submit(
                    &r,
                    [&, ms](accel_task_context_t ctx) -> accel_status_t {
                      ++flood_starts;
                      for (int t = 0; t < ms * 4; ++t) {
                        uint32_t p = 0;
                        accel_task_context_is_preempted(ctx, &p);
                        if (p != 0) return accel_set_last_error(ACCEL_ERROR_CANCELLED, "preempted");
                        std::this_thread::sleep_for(std::chrono::microseconds(250));
                      }
                      return ACCEL_SUCCESS;
                    },
                    &f, {}, 0, "flood", flood, 0, preemptible),
                ACCEL_SUCCESS);
      theirs.push_back(f);
      if (i % 8 == 0) {
        const accel_resource_request_t g = Request(1 + rng() % 2, 1.0, kGiB);
        const uint64_t at_submit = flood_starts.load();
        const uint64_t placed_before = rt.Counters().running;
        ASSERT_EQ(rt.Submit(
                      &g,
                      [&, at_submit, placed_before](accel_task_context_t) {
                        std::lock_guard lock(m);
                        windows.emplace_back(flood_starts.load() - at_submit, placed_before);
                        return ACCEL_SUCCESS;
                      },
                      &f, {}, 0, "mine", guaranteed),
                  ACCEL_SUCCESS);
        mine.push_back(f);
      }
    }
    for (accel_future_t f : mine) ASSERT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
    for (accel_future_t f : theirs)
      ASSERT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
    stop = true;
    ASSERT_EQ(windows.size(), mine.size());
    for (const auto& [started_meanwhile, placed_before] : windows) {
      EXPECT_LE(started_meanwhile, placed_before + 32) << "seed " << seed;
    }
    const auto c = rt.Counters();
    EXPECT_EQ(c.finished, c.submitted) << "seed " << seed;
    EXPECT_EQ(Usage(flood).devices, 0.0);
    EXPECT_EQ(Usage(guaranteed).devices, 0.0);
  }
}

// --- Actors -----------------------------------------------------------------

struct Counter {
  std::mutex m;
  std::vector<int> calls;
  accel_buffer_t buffer = nullptr;
  accel_physical_device_t device = nullptr;
  std::atomic<int> inits{0};
  std::atomic<bool> finalized{false};
  std::atomic<bool>* released = nullptr;
};

accel_status_t CounterInit(accel_task_context_t ctx, void* user) {
  auto* c = static_cast<Counter*>(user);
  ++c->inits;
  accel_device_t d = nullptr;
  accel_task_context_get_device(ctx, 0, &d);
  accel_task_context_get_physical_device(ctx, 0, &c->device);
  const accel_buffer_desc_t bd = accel_test::BufferDesc(512 * kMiB);
  return accel_buffer_create(d, &bd, &c->buffer);  // kept across calls
}

accel_status_t CounterFinalize(accel_task_context_t, void* user) {
  auto* c = static_cast<Counter*>(user);
  if (c->buffer != nullptr) accel_buffer_destroy(c->buffer);
  c->buffer = nullptr;
  c->finalized = true;
  return ACCEL_SUCCESS;
}

void CounterRelease(void* user) {
  auto* c = static_cast<Counter*>(user);
  *c->released = true;
  delete c;
}

struct CallArg {
  int index;
};

accel_status_t CounterCall(accel_task_context_t ctx, void* arg) {
  void* state = nullptr;
  accel_task_context_get_actor_data(ctx, &state);
  auto* c = static_cast<Counter*>(state);
  accel_physical_device_t p = nullptr;
  accel_task_context_get_physical_device(ctx, 0, &p);
  if (p != c->device) return accel_set_last_error(ACCEL_ERROR_INTERNAL, "a call ran on another device");
  std::lock_guard lock(c->m);
  c->calls.push_back(static_cast<CallArg*>(arg)->index);
  return ACCEL_SUCCESS;
}

void DeleteArg(void* arg) { delete static_cast<CallArg*>(arg); }

accel_status_t Call(accel_actor_t actor, accel_task_function_t fn, void* arg, void (*release)(void*),
                    accel_future_t* out, uint32_t max_retries = 0) {
  accel_task_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.function = fn;
  d.user_data = arg;
  d.release_user_data = release;
  d.max_retries = max_retries;
  return accel_actor_call(actor, &d, out);
}

accel_actor_info_t Info(accel_actor_t a) {
  accel_actor_info_t i{};
  i.stype = ACCEL_STRUCTURE_TYPE_ACTOR_INFO;
  i.struct_size = sizeof(i);
  EXPECT_EQ(accel_actor_get_info(a, &i), ACCEL_SUCCESS) << accel_last_error();
  return i;
}

std::string ActorMessage(accel_actor_t a) {
  size_t size = 0;
  EXPECT_EQ(accel_actor_get_message(a, 0, nullptr, &size), ACCEL_SUCCESS);
  std::string text(size, '\0');
  EXPECT_EQ(accel_actor_get_message(a, size, text.data(), nullptr), ACCEL_SUCCESS);
  text.resize(size > 0 ? size - 1 : 0);
  return text;
}

TEST(Actors, CallsRunInOrderOnOneReservationWithPersistentMemory) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt(nullptr, 8);
  accel_queue_t q = MakeQueue(rt.get(), "svc");
  std::atomic<bool> released{false};
  auto* state = new Counter;
  state->released = &released;
  const accel_resource_request_t r = Request(1, 0.5, kGiB);
  accel_actor_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
  d.struct_size = sizeof(d);
  d.name = "counter";
  d.request = &r;
  d.init = CounterInit;
  d.finalize = CounterFinalize;
  d.user_data = state;
  d.release_user_data = CounterRelease;
  d.queue = q;
  accel_actor_t actor = nullptr;
  ASSERT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_SUCCESS) << accel_last_error();
  std::vector<accel_future_t> fs;
  for (int i = 0; i < 50; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(Call(actor, CounterCall, new CallArg{i}, DeleteArg, &f), ACCEL_SUCCESS) << accel_last_error();
    fs.push_back(f);
  }
  for (accel_future_t f : fs) EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  {
    std::lock_guard lock(state->m);
    ASSERT_EQ(state->calls.size(), 50U);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(state->calls[static_cast<size_t>(i)], i);
  }
  EXPECT_EQ(state->inits.load(), 1);
  EXPECT_DOUBLE_EQ(Usage(q).devices, 0.5);
  EXPECT_EQ(Usage(q).memory, kGiB);
  auto info = Info(actor);
  EXPECT_EQ(info.state, ACCEL_ACTOR_STATE_ALIVE);
  EXPECT_EQ(info.calls_done, 50U);
  EXPECT_EQ(info.calls_pending, 0U);
  // The 512 MiB init allocated still counts: a call may add 512 MiB more, not 513.
  auto alloc = [](accel_task_context_t ctx, void* arg) -> accel_status_t {
    accel_device_t dev = nullptr;
    accel_task_context_get_device(ctx, 0, &dev);
    const accel_buffer_desc_t bd = accel_test::BufferDesc(*static_cast<uint64_t*>(arg));
    accel_buffer_t b = nullptr;
    const accel_status_t s = accel_buffer_create(dev, &bd, &b);
    if (b != nullptr) accel_buffer_destroy(b);
    return s;
  };
  uint64_t too_much = 513 * kMiB;
  uint64_t fits = 512 * kMiB;
  accel_future_t f1 = nullptr;
  accel_future_t f2 = nullptr;
  ASSERT_EQ(Call(actor, alloc, &too_much, nullptr, &f1), ACCEL_SUCCESS);
  ASSERT_EQ(Call(actor, alloc, &fits, nullptr, &f2), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f1, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_RESOURCE_EXHAUSTED) << Message(f1);
  EXPECT_EQ(accel_future_wait(f2, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f2);
  EXPECT_EQ(Info(actor).state, ACCEL_ACTOR_STATE_ALIVE) << "a failing call does not kill its actor";
  for (accel_future_t f : fs) EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_release(f1), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_release(f2), ACCEL_SUCCESS);
  ASSERT_EQ(accel_actor_destroy(actor), ACCEL_SUCCESS);
  ASSERT_TRUE(Eventually([&] { return released.load(); }));
  EXPECT_EQ(Usage(q).devices, 0.0);
  EXPECT_EQ(accel_actor_destroy(actor), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_queue_destroy(q), ACCEL_SUCCESS) << accel_last_error();
  const auto c = rt.Counters();
  EXPECT_EQ(c.actors_created, 1U);
  EXPECT_EQ(c.actors_died, 0U);
  EXPECT_EQ(c.finished + c.failed + c.cancelled, c.submitted);
}

TEST(Actors, DeviceLossRestartsTheActorElsewhereAndRetriesTheCall) {
  ScopedEnv visible("ACCEL_VISIBLE_DEVICES", "0,1");
  const accel_resource_request_t one = Request(1, 1.0, 64 * kMiB);
  const uint32_t first = FirstDeviceIndex(one);
  ASSERT_LT(first, 2U);
  ScopedEnv faults("ACCEL_SIM_FAULTS", "device_lost_after=1,devices=gpu" + std::to_string(first));
  RuntimeFixture rt;
  struct State {
    std::mutex m;
    std::vector<std::string> log;
  } state;
  auto init = [](accel_task_context_t ctx, void* user) -> accel_status_t {
    uint32_t attempt = 0;
    accel_task_context_get_attempt(ctx, &attempt);
    auto* s = static_cast<State*>(user);
    std::lock_guard lock(s->m);
    s->log.push_back("init " + std::to_string(attempt));
    return ACCEL_SUCCESS;
  };
  accel_actor_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
  d.struct_size = sizeof(d);
  d.name = "trainer";
  d.request = &one;
  d.init = init;
  d.user_data = &state;
  d.max_restarts = 1;
  accel_actor_t actor = nullptr;
  ASSERT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_SUCCESS) << accel_last_error();
  auto step = [](accel_task_context_t ctx, void*) -> accel_status_t {
    void* user = nullptr;
    accel_task_context_get_actor_data(ctx, &user);
    auto* s = static_cast<State*>(user);
    const accel_status_t st = AllocateTwice(ctx);  // the error, if any, is set as the call's
    std::lock_guard lock(s->m);
    s->log.push_back(std::string("step ") + accel_status_name(st));
    return st;
  };
  accel_future_t f = nullptr;
  ASSERT_EQ(Call(actor, step, nullptr, nullptr, &f, /*max_retries=*/1), ACCEL_SUCCESS);
  accel_future_t g = nullptr;
  ASSERT_EQ(Call(actor, step, nullptr, nullptr, &g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(f);
  EXPECT_EQ(accel_future_wait(g, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << Message(g);
  {
    std::lock_guard lock(state.m);
    EXPECT_EQ(state.log, (std::vector<std::string>{"init 0", "step ACCEL_ERROR_DEVICE_LOST", "init 1",
                                                   "step ACCEL_SUCCESS", "step ACCEL_SUCCESS"}));
  }
  auto info = Info(actor);
  EXPECT_EQ(info.state, ACCEL_ACTOR_STATE_ALIVE);
  EXPECT_EQ(info.restarts, 1U);
  const auto c = rt.Counters();
  EXPECT_EQ(c.actors_restarted, 1U);
  EXPECT_EQ(c.devices_lost, 1U);
  EXPECT_EQ(c.retried, 1U);
  // The second loss, with no restart left, kills it: its waiting calls fail and say why.
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_release(g), ACCEL_SUCCESS);
  EXPECT_EQ(accel_actor_destroy(actor), ACCEL_SUCCESS);
}

TEST(Actors, DeathIsReportedAndCallsFailWithTheReason) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  Gate gate;
  auto init = [](accel_task_context_t, void* user) -> accel_status_t {
    static_cast<Gate*>(user)->Wait();
    return accel_set_last_error(ACCEL_ERROR_INVALID_ARGUMENT, "weights file missing");
  };
  const accel_resource_request_t r = Request(1, 0.25, kGiB);
  accel_actor_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
  d.struct_size = sizeof(d);
  d.name = "loader";
  d.request = &r;
  d.init = init;
  d.user_data = &gate;
  d.max_restarts = 3;
  accel_actor_t actor = nullptr;
  ASSERT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_SUCCESS) << accel_last_error();
  accel_future_t f = nullptr;
  ASSERT_EQ(Call(
                actor, [](accel_task_context_t, void*) { return ACCEL_SUCCESS; }, nullptr, nullptr, &f),
            ACCEL_SUCCESS);
  EXPECT_EQ(Info(actor).calls_pending, 1U);
  gate.Open();
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(Message(f).find("init returned ACCEL_ERROR_INVALID_ARGUMENT: weights file missing"), std::string::npos)
      << Message(f);
  ASSERT_TRUE(Eventually([&] { return Info(actor).state == ACCEL_ACTOR_STATE_DEAD; }));
  EXPECT_EQ(Info(actor).restarts, 0U) << "an init error is not a device loss: no restart";
  EXPECT_NE(ActorMessage(actor).find("actor 1 ('loader') died: init returned"), std::string::npos)
      << ActorMessage(actor);
  accel_future_t g = nullptr;
  EXPECT_EQ(Call(
                actor, [](accel_task_context_t, void*) { return ACCEL_SUCCESS; }, nullptr, nullptr, &g),
            ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(accel_last_error()).find("weights file missing"), std::string::npos) << accel_last_error();
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(rt.Counters().actors_died, 1U);
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(accel_actor_destroy(actor), ACCEL_SUCCESS);
  // Everything the dead actor held is free again.
  for (const auto& dev : rt.Devices()) EXPECT_EQ(dev.share_free, 1.0);
}

TEST(Actors, BadInputAndDestroyWhilePending) {
  ASSERT_TRUE(kProfileSet);
  RuntimeFixture rt;
  accel_actor_t actor = nullptr;
  accel_actor_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
  d.struct_size = sizeof(d);
  const accel_resource_request_t nan_share = Request(1, std::nan(""));
  d.request = &nan_share;
  EXPECT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->request->share' is nan"), std::string::npos)
      << accel_last_error();
  const accel_resource_request_t nothing = Request(1, 1.0, 0, "vendor == \"nobody\"");
  d.request = &nothing;
  EXPECT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_ERROR_NOT_FOUND);
  EXPECT_EQ(accel_actor_create(rt.get(), nullptr, &actor), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(actor, nullptr);
  // Pending behind a full node, then destroyed: its calls are cancelled, nothing leaks.
  accel_placement_group_t hold = HoldAll(rt.get());
  const accel_resource_request_t one = Request(1);
  d.request = &one;
  d.name = "waits";
  ASSERT_EQ(accel_actor_create(rt.get(), &d, &actor), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Info(actor).state, ACCEL_ACTOR_STATE_PENDING);
  EXPECT_NE(ActorMessage(actor).find("capacity"), std::string::npos) << ActorMessage(actor);
  accel_future_t f = nullptr;
  ASSERT_EQ(Call(
                actor, [](accel_task_context_t, void*) { return ACCEL_SUCCESS; }, new CallArg{1}, DeleteArg, &f),
            ACCEL_SUCCESS);
  accel_task_desc_t td{};
  td.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  td.struct_size = sizeof(td);
  td.function = [](accel_task_context_t, void*) { return ACCEL_SUCCESS; };
  td.request = &one;
  accel_future_t g = nullptr;
  EXPECT_EQ(accel_actor_call(actor, &td, &g), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("a call runs on the actor's reservation"), std::string::npos);
  td.request = nullptr;
  td.function = nullptr;
  EXPECT_EQ(accel_actor_call(actor, &td, &g), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_actor_destroy(actor), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  EXPECT_EQ(accel_actor_call(actor, &td, &g), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_actor_get_info(actor, nullptr), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_future_release(f), ACCEL_SUCCESS);
  EXPECT_EQ(accel_placement_group_destroy(hold), ACCEL_SUCCESS);
  // An actor alive when its runtime is destroyed is finalized then; its handle goes stale.
  std::atomic<bool> released{false};
  auto* state = new Counter;
  state->released = &released;
  {
    RuntimeFixture other;
    const accel_resource_request_t half = Request(1, 0.5, kGiB);
    accel_actor_desc_t e{};
    e.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
    e.struct_size = sizeof(e);
    e.request = &half;
    e.init = CounterInit;
    e.finalize = CounterFinalize;
    e.user_data = state;
    e.release_user_data = CounterRelease;
    ASSERT_EQ(accel_actor_create(other.get(), &e, &actor), ACCEL_SUCCESS) << accel_last_error();
    ASSERT_TRUE(Eventually([&] { return Info(actor).state == ACCEL_ACTOR_STATE_ALIVE; }));
  }
  EXPECT_TRUE(released.load());
  EXPECT_EQ(accel_actor_get_info(actor, nullptr), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_actor_destroy(actor), ACCEL_SUCCESS) << "the handle is still the caller's to destroy";
}

// Destroying the runtime ends every actor still alive. Ending one without a finalize prunes the runtime's list of
// expired actors; the actor after an expired entry was skipped: never finalized, its user data never released.
TEST(Actors, EveryActorAliveWhenTheRuntimeGoesIsEnded) {
  ASSERT_TRUE(kProfileSet);
  struct State {
    std::atomic<int>* released;
    std::atomic<int>* finalized;
  };
  std::atomic<int> released{0}, finalized{0};
  accel_actor_t actors[3] = {nullptr, nullptr, nullptr};
  {
    RuntimeFixture rt;
    for (int i = 0; i < 3; ++i) {
      accel_actor_desc_t d{};
      d.stype = ACCEL_STRUCTURE_TYPE_ACTOR_DESC;
      d.struct_size = sizeof(d);
      d.name = i == 0 ? "a" : i == 1 ? "b (no finalize)" : "c";
      d.user_data = new State{&released, &finalized};
      d.release_user_data = [](void* p) {
        auto* st = static_cast<State*>(p);
        ++*st->released;
        delete st;
      };
      if (i != 1) {
        d.finalize = [](accel_task_context_t, void* p) -> accel_status_t {
          ++*static_cast<State*>(p)->finalized;
          return ACCEL_SUCCESS;
        };
      }
      ASSERT_EQ(accel_actor_create(rt.get(), &d, &actors[i]), ACCEL_SUCCESS) << accel_last_error();
    }
    for (accel_actor_t a : actors) ASSERT_TRUE(Eventually([&] { return Info(a).state == ACCEL_ACTOR_STATE_ALIVE; }));
    ASSERT_EQ(accel_actor_destroy(actors[0]), ACCEL_SUCCESS) << accel_last_error();  // its entry expires
    ASSERT_TRUE(Eventually([&] { return released.load() == 1; }));
  }
  EXPECT_EQ(released.load(), 3) << "an actor alive when the runtime was destroyed was never ended";
  EXPECT_EQ(finalized.load(), 2) << "a and c have a finalize";
  for (int i = 1; i < 3; ++i) EXPECT_EQ(accel_actor_destroy(actors[i]), ACCEL_SUCCESS);
}

}  // namespace
