// PointerRing (core/runtime/pointer_ring.h), the lock-free queue of the
// direct path: order, full and empty, PopIf, and many producers and
// consumers handing over every pointer exactly once.
#include "pointer_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using accel::runtime::PointerRing;

TEST(PointerRing, KeepsOrderAndSaysFullAndEmpty) {
  std::vector<int> values(9);
  PointerRing<int> ring(8);
  EXPECT_EQ(ring.Pop(), nullptr);
  for (int lap = 0; lap < 3; ++lap) {  // wraps around
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(ring.Push(&values[i])) << i;
    EXPECT_FALSE(ring.Push(&values[8])) << "a ninth pointer in 8 slots";
    EXPECT_EQ(ring.Size(), 8U);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(ring.Pop(), &values[i]);
    EXPECT_EQ(ring.Pop(), nullptr);
    EXPECT_EQ(ring.Size(), 0U);
  }
}

TEST(PointerRing, PopIfTakesOnlyTheOldestWhenItIsTheOneAsked) {
  int a = 0, b = 0;
  PointerRing<int> ring(4);
  EXPECT_FALSE(ring.PopIf(&a)) << "empty";
  ASSERT_TRUE(ring.Push(&a));
  ASSERT_TRUE(ring.Push(&b));
  EXPECT_FALSE(ring.PopIf(&b)) << "b is not the oldest";
  EXPECT_TRUE(ring.PopIf(&a));
  EXPECT_TRUE(ring.PopIf(&b));
  EXPECT_EQ(ring.Pop(), nullptr);
}

TEST(PointerRing, ManyProducersAndConsumersHandOverEachPointerOnce) {
  constexpr int kProducers = 3, kConsumers = 3, kEach = 20000;
  std::vector<int> values(kProducers * kEach);
  std::vector<std::atomic<int>> taken(values.size());
  PointerRing<int> ring(64);  // small: producers often find it full
  std::atomic<int> done_producers{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        while (!ring.Push(&values[p * kEach + i])) std::this_thread::yield();
      }
      ++done_producers;
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      for (;;) {
        if (int* v = ring.Pop(); v != nullptr) {
          ++taken[v - values.data()];
        } else if (done_producers.load() == kProducers && ring.Size() == 0) {
          return;
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < taken.size(); ++i) ASSERT_EQ(taken[i].load(), 1) << "value " << i;
}

}  // namespace
