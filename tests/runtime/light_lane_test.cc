// The lane of light group tasks (core/runtime/light_lane.h): the owner's end newest first (one at a time and in
// batches), the thieves' oldest first, full and empty, and one owner with three thieves handing over 200,000 tasks
// through 4,096 slots, each taken exactly once, the owner popping one at a time or in batches (run under
// ThreadSanitizer too).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "light_lane.h"

namespace {

using accel::runtime::LightLane;
using accel::runtime::LightTask;

LightTask Numbered(uint64_t id) { return LightTask{nullptr, nullptr, nullptr, id}; }

TEST(LightLane, TheOwnerTakesTheNewestAndThievesTheOldest) {
  LightLane lane;
  for (uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(lane.Push(Numbered(i)));
  EXPECT_EQ(lane.Size(), 3U);
  LightTask t;
  ASSERT_TRUE(lane.Steal(&t));
  EXPECT_EQ(t.id, 1U);
  ASSERT_TRUE(lane.Pop(&t));
  EXPECT_EQ(t.id, 3U);
  ASSERT_TRUE(lane.Pop(&t));
  EXPECT_EQ(t.id, 2U);
  EXPECT_FALSE(lane.Pop(&t));
  EXPECT_FALSE(lane.Steal(&t));
  EXPECT_EQ(lane.Size(), 0U);
}

TEST(LightLane, AFullLaneRefusesAndTakesAgainOnceRoomIsMade) {
  LightLane lane;
  for (int64_t i = 0; i < LightLane::kSlots; ++i) ASSERT_TRUE(lane.Push(Numbered(static_cast<uint64_t>(i))));
  EXPECT_FALSE(lane.Push(Numbered(99999)));
  LightTask t;
  ASSERT_TRUE(lane.Steal(&t));
  EXPECT_EQ(t.id, 0U);
  EXPECT_TRUE(lane.Push(Numbered(99999)));  // into the slot the steal freed
  ASSERT_TRUE(lane.Pop(&t));
  EXPECT_EQ(t.id, 99999U);
}

TEST(LightLane, ABatchTakesTheNewestAndLeavesTheOldestToPopAndTheThieves) {
  LightLane lane;
  for (uint64_t i = 1; i <= 10; ++i) ASSERT_TRUE(lane.Push(Numbered(i)));
  LightTask few[4];
  ASSERT_EQ(lane.PopBatch(few, 4), 4U);
  EXPECT_EQ(few[0].id, 10U);
  EXPECT_EQ(few[3].id, 7U);
  LightTask t;
  ASSERT_TRUE(lane.Steal(&t));
  EXPECT_EQ(t.id, 1U);
  // Five left (2 to 6): a batch leaves the oldest, which thieves may reach.
  LightTask more[8];
  ASSERT_EQ(lane.PopBatch(more, 8), 4U);
  EXPECT_EQ(more[0].id, 6U);
  EXPECT_EQ(more[3].id, 3U);
  EXPECT_EQ(lane.PopBatch(more, 8), 0U);  // one left: Pop's
  ASSERT_TRUE(lane.Pop(&t));
  EXPECT_EQ(t.id, 2U);
  EXPECT_EQ(lane.PopBatch(more, 8), 0U);
  EXPECT_EQ(lane.Size(), 0U);
  ASSERT_TRUE(lane.Push(Numbered(11)));  // the batches gave their slots back
  EXPECT_EQ(lane.Size(), 1U);
}

// The owner pops one at a time, or (`batches`) in batches of up to 8 first.
void HandOver(bool batches) {
  LightLane lane;
  constexpr uint64_t kTasks = 200000;
  std::vector<std::atomic<int>> taken(kTasks + 1);
  std::atomic<uint64_t> count{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> thieves;
  for (int i = 0; i < 3; ++i) {
    thieves.emplace_back([&] {
      LightTask t;
      while (!done.load()) {
        if (lane.Steal(&t)) {
          ++taken[t.id];
          ++count;
        }
      }
    });
  }
  LightTask t;
  LightTask few[8];
  auto own = [&] {  // the owner runs some itself, as a group wait does
    const size_t n = batches ? lane.PopBatch(few, 8) : 0;
    for (size_t i = 0; i < n; ++i) {
      ++taken[few[i].id];
      ++count;
    }
    if (n > 0) return true;
    if (!lane.Pop(&t)) return false;
    ++taken[t.id];
    ++count;
    return true;
  };
  for (uint64_t id = 1; id <= kTasks; ++id) {
    while (!lane.Push(Numbered(id))) own();
    if (id % 3 == 0) own();
  }
  while (own()) {
  }
  while (count.load() < kTasks) std::this_thread::yield();
  done = true;
  for (auto& th : thieves) th.join();
  EXPECT_EQ(count.load(), kTasks);
  for (uint64_t id = 1; id <= kTasks; ++id) ASSERT_EQ(taken[id].load(), 1) << id;
}

TEST(LightLane, OneOwnerAndThreeThievesTakeEachTaskOnce) { HandOver(false); }

TEST(LightLane, OneOwnerPoppingInBatchesAndThreeThievesTakeEachTaskOnce) { HandOver(true); }

}  // namespace
