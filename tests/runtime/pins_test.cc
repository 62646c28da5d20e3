// Per-thread pins (core/runtime/pins.{h,cc}): a pin is seen by its own thread
// and by a destroyer waiting on other threads, a thread's slots run out
// cleanly, and a thread's record is handed on when it exits (run under TSan
// too).
#include "pins.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using accel::runtime::Pins;

TEST(Pins, APinIsTheThreadsOwnUntilUnpinned) {
  int object = 0;
  EXPECT_FALSE(Pins::PinnedByMe(&object));
  const int slot = Pins::Pin(&object);
  ASSERT_GE(slot, 0);
  ASSERT_LT(slot, Pins::kPerThread);
  EXPECT_TRUE(Pins::PinnedByMe(&object));
  EXPECT_EQ(Pins::Pin(&object), Pins::kAlreadyPinned) << "a second pin of the same object takes no slot";
  Pins::Unpin(Pins::kAlreadyPinned);
  EXPECT_TRUE(Pins::PinnedByMe(&object)) << "unpinning kAlreadyPinned leaves the first pin";
  bool seen_elsewhere = true;
  std::thread([&] { seen_elsewhere = Pins::PinnedByMe(&object); }).join();
  EXPECT_FALSE(seen_elsewhere) << "PinnedByMe is about the calling thread only";
  Pins::WaitUnpinnedByOthers(&object);  // the caller's own pin is not waited for
  Pins::Unpin(slot);
  EXPECT_FALSE(Pins::PinnedByMe(&object));
}

TEST(Pins, SlotsRunOutWithMinusOneAndComeBack) {
  int objects[Pins::kPerThread + 1] = {};
  std::vector<int> slots;
  for (int i = 0; i < Pins::kPerThread; ++i) {
    slots.push_back(Pins::Pin(&objects[i]));
    ASSERT_GE(slots.back(), 0) << "slot " << i;
  }
  EXPECT_EQ(Pins::Pin(&objects[Pins::kPerThread]), -1) << "every slot in use";
  Pins::Unpin(slots.back());
  slots.pop_back();
  const int again = Pins::Pin(&objects[Pins::kPerThread]);
  EXPECT_GE(again, 0);
  Pins::Unpin(again);
  for (int slot : slots) Pins::Unpin(slot);
}

TEST(Pins, ADestroyerWaitsForAnotherThreadsPin) {
  int object = 0;
  std::atomic<bool> pinned{false};
  std::atomic<bool> unpinning{false};
  std::atomic<bool> release{false};
  std::thread user([&] {
    const int slot = Pins::Pin(&object);
    pinned = true;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    unpinning = true;
    Pins::Unpin(slot);
  });
  while (!pinned.load()) std::this_thread::yield();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    release = true;
  });
  Pins::WaitUnpinnedByOthers(&object);
  EXPECT_TRUE(unpinning.load()) << "the wait returned while the other thread still pinned the object";
  user.join();
  releaser.join();
}

TEST(Pins, ManyShortLivedThreadsPinAndExit) {
  // Each thread takes a record on its first pin and hands it on when it exits; none is left pinned.
  int object = 0;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        const int slot = Pins::Pin(&object);
        EXPECT_GE(slot, 0);
        Pins::Unpin(slot);
      });
    }
    for (auto& t : threads) t.join();
  }
  Pins::WaitUnpinnedByOthers(&object);  // returns: nothing pins it (a record left pinned would hang it here)
}

}  // namespace
