// The runtime's decision log (docs/scheduler.md, "Events"): off by default, every counted decision in order once
// on, a ring that says what it dropped, and bad arguments named.
#include <accel/runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

std::vector<accel_runtime_event_t> Events(accel_runtime_t rt, uint64_t after = 0, uint64_t* dropped = nullptr,
                                          uint32_t max = 1024) {
  std::vector<accel_runtime_event_t> out(max);
  out[0].stype = ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT;
  out[0].struct_size = sizeof(accel_runtime_event_t);
  uint32_t count = 0;
  EXPECT_EQ(accel_runtime_get_events(rt, after, max, out.data(), &count, dropped), ACCEL_SUCCESS) << accel_last_error();
  out.resize(count);
  return out;
}

std::vector<uint32_t> KindsOf(const std::vector<accel_runtime_event_t>& events, uint64_t id) {
  std::vector<uint32_t> kinds;
  for (const auto& e : events) {
    if (e.id == id && e.kind != ACCEL_RUNTIME_EVENT_GROUP_CREATED) kinds.push_back(e.kind);
  }
  return kinds;
}

TEST(Events, TheLogIsOffUntilGivenACapacity) {
  RuntimeFixture rt;
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &f),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  uint64_t dropped = 7;
  EXPECT_TRUE(Events(rt.get(), 0, &dropped).empty());
  EXPECT_EQ(dropped, 0U);
}

TEST(Events, EveryDecisionAboutATaskIsRecordedInOrder) {
  RuntimeFixture rt;
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 256), ACCEL_SUCCESS);
  // One task on two devices that ends well, one without devices that fails, one that is cancelled before it starts.
  const accel_resource_request_t two = Request(2);
  accel_future_t ok = nullptr, bad = nullptr, gated = nullptr, cancelled = nullptr;
  ASSERT_EQ(rt.Submit(
                &two, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &ok, {}, 0, "train"),
            ACCEL_SUCCESS);
  ASSERT_EQ(accel_future_wait(ok, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  ASSERT_EQ(
      rt.Submit(
          nullptr, [](accel_task_context_t) { return accel_set_last_error(ACCEL_ERROR_INTERNAL, "broke"); }, &bad),
      ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(bad, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  Gate gate;
  const accel_resource_request_t eight = Request(8);
  ASSERT_EQ(rt.Submit(
                &eight,
                [&](accel_task_context_t) {
                  gate.Wait();
                  return ACCEL_SUCCESS;
                },
                &gated),
            ACCEL_SUCCESS);
  ASSERT_EQ(rt.Submit(
                &two, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &cancelled),
            ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_cancel(cancelled), ACCEL_SUCCESS);
  EXPECT_EQ(accel_future_wait(cancelled, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_CANCELLED);
  gate.Open();
  EXPECT_EQ(accel_future_wait(gated, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);

  const auto events = Events(rt.get());
  ASSERT_FALSE(events.empty());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].stype, static_cast<uint32_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT));
    EXPECT_EQ(events[i].struct_size, sizeof(accel_runtime_event_t));
    EXPECT_EQ(events[i].sequence, i + 1) << "no gap, no repeat";
    if (i > 0) {
      EXPECT_GE(events[i].time_ns, events[i - 1].time_ns);
    }
  }
  accel_runtime_counters_t counters{};
  counters.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS;
  counters.struct_size = sizeof(counters);
  ASSERT_EQ(accel_runtime_get_counters(rt.get(), &counters), ACCEL_SUCCESS);
  auto count = [&](uint32_t kind) {
    size_t n = 0;
    for (const auto& e : events) n += e.kind == kind ? 1 : 0;
    return n;
  };
  // The log and the counters tell the same story.
  EXPECT_EQ(count(ACCEL_RUNTIME_EVENT_SUBMITTED), counters.submitted);
  EXPECT_EQ(count(ACCEL_RUNTIME_EVENT_PLACED), counters.placed);
  EXPECT_EQ(count(ACCEL_RUNTIME_EVENT_FINISHED), counters.finished);
  EXPECT_EQ(count(ACCEL_RUNTIME_EVENT_FAILED), counters.failed);
  EXPECT_EQ(count(ACCEL_RUNTIME_EVENT_CANCELLED), counters.cancelled);
  EXPECT_EQ(counters.submitted, 4U);

  // Per task: the decisions in their order, with its devices and its result.
  const accel_runtime_event_t* train = nullptr;
  for (const auto& e : events) {
    if (e.kind == ACCEL_RUNTIME_EVENT_PLACED && std::strstr(e.name, "'train'") != nullptr) train = &e;
  }
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->device_count, 2U);
  EXPECT_LT(train->device, 8U);
  EXPECT_EQ(KindsOf(events, train->id),
            (std::vector<uint32_t>{ACCEL_RUNTIME_EVENT_SUBMITTED, ACCEL_RUNTIME_EVENT_PLACED,
                                   ACCEL_RUNTIME_EVENT_STARTED, ACCEL_RUNTIME_EVENT_FINISHED}));
  const accel_runtime_event_t* failed = nullptr;
  for (const auto& e : events) {
    if (e.kind == ACCEL_RUNTIME_EVENT_FAILED) failed = &e;
  }
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->status, ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(failed->device, UINT32_MAX);
  EXPECT_EQ(KindsOf(events, failed->id),
            (std::vector<uint32_t>{ACCEL_RUNTIME_EVENT_SUBMITTED, ACCEL_RUNTIME_EVENT_PLACED,
                                   ACCEL_RUNTIME_EVENT_STARTED, ACCEL_RUNTIME_EVENT_FAILED}));
  const auto last = events.back();
  // Reading after the last one gives nothing; after an earlier one, the rest.
  EXPECT_TRUE(Events(rt.get(), last.sequence).empty());
  EXPECT_EQ(Events(rt.get(), last.sequence - 3).size(), 3U);
}

TEST(Events, AFullRingKeepsTheNewestAndSaysWhatItDropped) {
  RuntimeFixture rt;
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 8), ACCEL_SUCCESS);
  for (int i = 0; i < 10; ++i) {
    accel_future_t f = nullptr;
    ASSERT_EQ(rt.Submit(
                  nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &f),
              ACCEL_SUCCESS);
    ASSERT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  }
  // 10 tasks x 4 decisions = 40; the ring holds the last 8.
  uint64_t dropped = 0;
  auto events = Events(rt.get(), 0, &dropped);
  ASSERT_EQ(events.size(), 8U);
  EXPECT_EQ(events.front().sequence, 33U);
  EXPECT_EQ(events.back().sequence, 40U);
  EXPECT_EQ(dropped, 32U);
  events = Events(rt.get(), 35, &dropped);
  EXPECT_EQ(events.size(), 5U);
  EXPECT_EQ(dropped, 0U);
  // A smaller ring keeps the newest that fit; off drops everything, and sequence numbers go on afterwards.
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 2), ACCEL_SUCCESS);
  events = Events(rt.get());
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events.front().sequence, 39U);
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 0), ACCEL_SUCCESS);
  EXPECT_TRUE(Events(rt.get()).empty());
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 4), ACCEL_SUCCESS);
  accel_future_t f = nullptr;
  ASSERT_EQ(rt.Submit(
                nullptr, [](accel_task_context_t) { return ACCEL_SUCCESS; }, &f),
            ACCEL_SUCCESS);
  ASSERT_EQ(accel_future_wait(f, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  events = Events(rt.get());
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events.front().sequence, 41U);
}

TEST(Events, PlacementGroupsAreRecorded) {
  RuntimeFixture rt;
  ASSERT_EQ(accel_runtime_set_event_log(rt.get(), 64), ACCEL_SUCCESS);
  std::vector<accel_resource_request_t> bundles(6, Request(1));
  accel_placement_group_desc_t gd{};
  gd.stype = ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC;
  gd.struct_size = sizeof(gd);
  gd.name = "gang";
  gd.bundles = bundles.data();
  gd.bundle_count = 6;
  gd.strategy = ACCEL_PLACEMENT_STRATEGY_PACK;
  gd.level = ACCEL_TOPOLOGY_LEVEL_NODE;
  accel_placement_group_t g = nullptr;
  ASSERT_EQ(accel_placement_group_create(rt.get(), &gd, &g), ACCEL_SUCCESS) << accel_last_error();
  gd.name = "too-big";  // 6 more of 2 free
  accel_placement_group_t big = nullptr;
  EXPECT_EQ(accel_placement_group_create(rt.get(), &gd, &big), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const auto events = Events(rt.get());
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].kind, static_cast<uint32_t>(ACCEL_RUNTIME_EVENT_GROUP_CREATED));
  EXPECT_STREQ(events[0].name, "gang");
  EXPECT_EQ(events[0].device_count, 6U);
  EXPECT_LT(events[0].device, 8U);
  EXPECT_EQ(events[1].kind, static_cast<uint32_t>(ACCEL_RUNTIME_EVENT_GROUP_REFUSED));
  EXPECT_STREQ(events[1].name, "too-big");
  EXPECT_EQ(events[1].status, ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(accel_placement_group_destroy(g), ACCEL_SUCCESS);
}

TEST(Events, BadArgumentsAreNamed) {
  RuntimeFixture rt;
  EXPECT_EQ(accel_runtime_set_event_log(rt.get(), ACCEL_RUNTIME_EVENT_LOG_MAX + 1), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'capacity' 1048577 is past the maximum"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(accel_runtime_set_event_log(nullptr, 4), ACCEL_ERROR_INVALID_HANDLE);
  uint32_t count = 9;
  EXPECT_EQ(accel_runtime_get_events(rt.get(), 0, 4, nullptr, &count, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'out_events' is NULL"), std::string::npos) << accel_last_error();
  EXPECT_EQ(count, 0U);
  EXPECT_EQ(accel_runtime_get_events(rt.get(), 0, 0, nullptr, nullptr, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'out_count' is NULL"), std::string::npos) << accel_last_error();
  accel_runtime_event_t small{};
  small.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT;
  small.struct_size = 32;
  EXPECT_EQ(accel_runtime_get_events(rt.get(), 0, 1, &small, &count, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("smaller than the 1.3 accel_runtime_event_t"), std::string::npos)
      << accel_last_error();
  EXPECT_EQ(accel_runtime_get_events(rt.get(), 0, 0, nullptr, &count, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(count, 0U);
}

}  // namespace
