// The runtime's handle table (core/runtime/handles.{h,cc}): a value is never
// given out twice, a removed value is stale even after its slot is reused,
// wrong types and garbage are named, and threads inserting, finding and
// removing at once each see their own objects (run under TSan too).
#include "handles.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace {

using accel::runtime::HandleTable;
using accel::runtime::HandleType;

TEST(HandleTable, ValuesAreNeverGivenOutTwiceAndRemovedOnesStayStale) {
  HandleTable& table = HandleTable::Get();
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> removed;
  // Far more than the slots kept free before reuse: slots are reused, values are not.
  for (int i = 0; i < 20000; ++i) {
    const uint64_t h = table.Insert(HandleType::kFuture, std::make_shared<int>(i));
    ASSERT_TRUE(seen.insert(h).second) << "value 0x" << std::hex << h << " given out twice";
    std::string why;
    auto found = table.Find(h, HandleType::kFuture, &why);
    ASSERT_NE(found, nullptr) << why;
    EXPECT_EQ(*std::static_pointer_cast<int>(found), i);
    ASSERT_TRUE(table.Remove(h));
    EXPECT_FALSE(table.Remove(h)) << "removed twice";
    if (i % 1000 == 0) removed.push_back(h);
  }
  for (uint64_t h : removed) {
    std::string why;
    EXPECT_EQ(table.Find(h, HandleType::kFuture, &why), nullptr);
    EXPECT_EQ(why, "is a stale future handle (already destroyed or released)");
  }
}

TEST(HandleTable, WrongTypesAndGarbageAreNamed) {
  HandleTable& table = HandleTable::Get();
  const uint64_t h = table.Insert(HandleType::kQueue, std::make_shared<int>(1));
  std::string why;
  EXPECT_EQ(table.Find(h, HandleType::kActor, &why), nullptr);
  EXPECT_EQ(why, "is a queue handle, not an actor handle");
  EXPECT_EQ(table.Find(0, HandleType::kRuntime, &why), nullptr);
  EXPECT_EQ(why, "is NULL (expected a runtime handle)");
  EXPECT_EQ(table.Find(0x1234, HandleType::kRuntime, &why), nullptr);
  EXPECT_NE(why.find("is not an Accel runtime handle"), std::string::npos) << why;
  const uint64_t no_generation = h & ~(uint64_t{0xFFFFFF} << 32);
  EXPECT_EQ(table.Find(no_generation, HandleType::kQueue, &why), nullptr);
  EXPECT_NE(why.find("is not an Accel runtime handle"), std::string::npos) << why;
  const uint64_t far_slot = (h & ~uint64_t{0xFFFFFFFF}) | 0xFFFFFFF0;
  EXPECT_EQ(table.Find(far_slot, HandleType::kQueue, &why), nullptr);
  EXPECT_EQ(why, "is a stale queue handle (already destroyed or released)");
  EXPECT_FALSE(table.Remove(far_slot));
  EXPECT_TRUE(table.Remove(h));
}

TEST(HandleTable, ThreadsInsertFindAndRemoveAtOnce) {
  HandleTable& table = HandleTable::Get();
  constexpr int kThreads = 4;
  constexpr int kEach = 20000;
  const uint64_t shared = table.Insert(HandleType::kRuntime, std::make_shared<int>(-1));
  std::vector<std::thread> threads;
  std::vector<int> errors(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint64_t> mine;
      for (int i = 0; i < kEach; ++i) {
        mine.push_back(table.Insert(HandleType::kObject, std::make_shared<int>(t * kEach + i)));
        std::string why;
        auto rt = table.Find(shared, HandleType::kRuntime, &why);  // every thread finds one handle
        if (!rt || *std::static_pointer_cast<int>(rt) != -1) ++errors[t];
        if (mine.size() > 8) {
          const uint64_t h = mine.front();
          auto found = table.Find(h, HandleType::kObject, &why);
          if (!found || *std::static_pointer_cast<int>(found) != t * kEach + i - 8) ++errors[t];
          if (!table.Remove(h)) ++errors[t];
          mine.erase(mine.begin());
        }
      }
      for (uint64_t h : mine) {
        if (!table.Remove(h)) ++errors[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;
  EXPECT_TRUE(table.Remove(shared));
}

TEST(HandleTable, PeekFindsOnlyALiveValueOfItsType) {
  HandleTable& table = HandleTable::Get();
  auto object = std::make_shared<int>(7);
  const uint64_t h = table.Insert(HandleType::kRuntime, object);
  EXPECT_EQ(table.Peek(h, HandleType::kRuntime), object.get());
  EXPECT_EQ(table.Peek(h, HandleType::kFuture), nullptr) << "a runtime's value is no future";
  EXPECT_EQ(table.Peek(0, HandleType::kRuntime), nullptr);
  EXPECT_EQ(table.Peek(h ^ (uint64_t{1} << 32), HandleType::kRuntime), nullptr) << "another generation";
  EXPECT_EQ(table.Peek((h & ~uint64_t{0xffffffff}) | 0xfffffff0U, HandleType::kRuntime), nullptr)
      << "a slot never made";
  ASSERT_TRUE(table.Remove(h));
  EXPECT_EQ(table.Peek(h, HandleType::kRuntime), nullptr) << "removed";
  EXPECT_EQ(object.use_count(), 1) << "the table dropped its reference";
}

TEST(HandleTable, TakeRemovesOnlyALiveValueOfItsTypeAndGivesItsReference) {
  HandleTable& table = HandleTable::Get();
  auto object = std::make_shared<int>(9);
  const uint64_t h = table.Insert(HandleType::kFuture, object);
  EXPECT_EQ(table.Take(h, HandleType::kRuntime), nullptr) << "a future's value is no runtime";
  EXPECT_EQ(table.Take(0, HandleType::kFuture), nullptr);
  auto taken = table.Take(h, HandleType::kFuture);
  EXPECT_EQ(taken.get(), object.get());
  EXPECT_EQ(object.use_count(), 2) << "the table's reference went to the caller";
  EXPECT_EQ(table.Take(h, HandleType::kFuture), nullptr) << "taken once";
  std::string why;
  EXPECT_EQ(table.Find(h, HandleType::kFuture, &why), nullptr);
  EXPECT_NE(why.find("stale"), std::string::npos) << why;
}

TEST(HandleTable, PeekWhileOtherThreadsInsertAndRemoveSeesOnlyLiveObjects) {
  HandleTable& table = HandleTable::Get();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> current{0};
  std::atomic<int> wrong{0};
  std::thread churn([&] {
    for (int i = 0; i < 20000; ++i) {
      const uint64_t h = table.Insert(HandleType::kQueue, std::make_shared<int>(i));
      current.store(h, std::memory_order_release);
      table.Remove(h);
    }
    stop = true;
  });
  while (!stop.load()) {
    const uint64_t h = current.load(std::memory_order_acquire);
    if (void* p = table.Peek(h, HandleType::kQueue); p != nullptr) {
      // The object may go right after the Peek (nothing pins it here); its value is read only through Find's
      // reference, which is null or the same object.
      std::string why;
      auto found = table.Find(h, HandleType::kQueue, &why);
      if (found && found.get() != p) ++wrong;
    }
  }
  churn.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
