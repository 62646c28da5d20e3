// The lane of light group tasks (core/runtime/light_lane.h): the owner's end newest first, the thieves' oldest
// first, full and empty, and one owner with three thieves handing over 200,000 tasks through 4,096 slots, each
// taken exactly once (run under ThreadSanitizer too).
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

TEST(LightLane, OneOwnerAndThreeThievesTakeEachTaskOnce) {
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
  for (uint64_t id = 1; id <= kTasks; ++id) {
    while (!lane.Push(Numbered(id))) {
      if (lane.Pop(&t)) {
        ++taken[t.id];
        ++count;
      }
    }
    if (id % 3 == 0 && lane.Pop(&t)) {  // the owner runs some itself, as a group wait does
      ++taken[t.id];
      ++count;
    }
  }
  while (lane.Pop(&t)) {
    ++taken[t.id];
    ++count;
  }
  while (count.load() < kTasks) std::this_thread::yield();
  done = true;
  for (auto& th : thieves) th.join();
  EXPECT_EQ(count.load(), kTasks);
  for (uint64_t id = 1; id <= kTasks; ++id) ASSERT_EQ(taken[id].load(), 1) << id;
}

}  // namespace
