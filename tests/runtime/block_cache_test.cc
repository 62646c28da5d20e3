// BlockCache and CachingAllocator (core/runtime/block_cache.h), the per-thread
// cache of the runtime's task memory: a block freed on a thread comes back to
// that thread's next allocation, the cache keeps no more than its budget and
// hands the rest to a shared depot that an empty cache draws from, a block
// freed on another thread joins that thread's cache, and shared_ptrs
// made with the allocator free through it (leaks and uses after free are
// ASan's and LSan's to find: cached blocks are poisoned).
#include "block_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace {

using accel::runtime::BlockCache;
using accel::runtime::CachingAllocator;

// A size no other test object has, so that each test sees only its own blocks.
struct Payload {
  char bytes[200];
};

TEST(BlockCache, ABlockFreedOnAThreadIsItsNextAllocation) {
  CachingAllocator<Payload> alloc;
  Payload* first = alloc.allocate(1);
  first->bytes[0] = 1;
  alloc.deallocate(first, 1);
  Payload* again = alloc.allocate(1);
  EXPECT_EQ(again, first);
  again->bytes[199] = 2;  // writable again (ASan: unpoisoned)
  alloc.deallocate(again, 1);

  // More than one at a time: last freed, first given.
  Payload* a = alloc.allocate(1);
  Payload* b = alloc.allocate(1);
  alloc.deallocate(a, 1);
  alloc.deallocate(b, 1);
  EXPECT_EQ(alloc.allocate(1), b);
  EXPECT_EQ(alloc.allocate(1), a);
  alloc.deallocate(a, 1);
  alloc.deallocate(b, 1);
}

// Sizes of their own (a cache and a depot each), so that these tests see only their own blocks.
struct Budgeted {
  char bytes[232];
};
struct Streamed {
  char bytes[248];
};

TEST(BlockCache, AFullCacheHandsHalfToTheDepotAndAnEmptyOneTakesItBack) {
  using BudgetCache = BlockCache<sizeof(Budgeted), alignof(Budgeted)>;
  CachingAllocator<Budgeted> alloc;
  const size_t most = BudgetCache::kMostBlocks;
  const size_t half = BudgetCache::kBatchBlocks;
  ASSERT_EQ(most, BudgetCache::kBudgetBytes / sizeof(Budgeted));
  ASSERT_EQ(half, most / 2);
  // Fresh blocks from the heap (this size's cache and depot start empty), then all freed here.
  std::vector<Budgeted*> blocks;
  for (size_t i = 0; i < most + 16; ++i) blocks.push_back(alloc.allocate(1));
  for (Budgeted* p : blocks) alloc.deallocate(p, 1);
  // The cache filled with the first `most`; the next free moved its newest half to the depot as one batch. So the
  // cache gives back the 16 freed last, then the oldest half, newest first; then the depot's batch, newest first.
  std::vector<Budgeted*> expected;
  for (size_t i = most + 16; i-- > most;) expected.push_back(blocks[i]);
  for (size_t i = most - half; i-- > 0;) expected.push_back(blocks[i]);
  for (size_t i = most; i-- > most - half;) expected.push_back(blocks[i]);
  ASSERT_EQ(expected.size(), blocks.size());
  std::vector<Budgeted*> again;
  for (size_t i = 0; i < expected.size(); ++i) {
    again.push_back(alloc.allocate(1));
    ASSERT_EQ(again.back(), expected[i]) << "allocation " << i;
  }
  for (Budgeted* p : again) alloc.deallocate(p, 1);
}

TEST(BlockCache, AStreamFreedOnAnotherThreadComesBackThroughTheDepot) {
  using StreamCache = BlockCache<sizeof(Streamed), alignof(Streamed)>;
  CachingAllocator<Streamed> alloc;
  const size_t most = StreamCache::kMostBlocks;
  // A client allocates, a worker frees (past its budget): the client's next allocations are those blocks, not new
  // ones from the heap.
  std::vector<Streamed*> blocks;
  for (size_t i = 0; i < most + 1; ++i) blocks.push_back(alloc.allocate(1));
  std::thread([&] {
    for (Streamed* p : blocks) alloc.deallocate(p, 1);
  }).join();  // the worker's cache goes to the heap at its exit; the batch it handed over stays in the depot
  const std::set<Streamed*> freed(blocks.begin(), blocks.end());
  std::vector<Streamed*> again;
  for (size_t i = 0; i < StreamCache::kBatchBlocks; ++i) {
    again.push_back(alloc.allocate(1));
    EXPECT_EQ(freed.count(again.back()), 1U) << "allocation " << i << " is not a block the other thread freed";
  }
  for (Streamed* p : again) alloc.deallocate(p, 1);
}

TEST(BlockCache, ABlockFreedOnAnotherThreadJoinsThatThreadsCache) {
  CachingAllocator<Payload> alloc;
  Payload* block = alloc.allocate(1);
  Payload* taken_there = nullptr;
  std::thread([&] {
    alloc.deallocate(block, 1);
    taken_there = alloc.allocate(1);
    alloc.deallocate(taken_there, 1);  // left in that thread's cache: given back to the heap when it exits
  }).join();
  EXPECT_EQ(taken_there, block);
  // This thread's cache does not have it: the next allocation here is another block (the one freed there is still
  // cached or back in the heap, but never handed out here from this thread's cache).
  Payload* here = alloc.allocate(1);
  here->bytes[0] = 3;
  alloc.deallocate(here, 1);
}

TEST(BlockCache, SharedPointersMadeWithItFreeThroughIt) {
  struct Counted {
    int* alive;
    explicit Counted(int* a) : alive(a) { ++*alive; }
    ~Counted() { --*alive; }
    char pad[300];
  };
  int alive = 0;
  std::weak_ptr<Counted> weak;
  {
    auto strong = std::allocate_shared<Counted>(CachingAllocator<Counted>{}, &alive);
    weak = strong;
    EXPECT_EQ(alive, 1);
  }
  EXPECT_EQ(alive, 0) << "destroyed with its last shared_ptr";
  EXPECT_TRUE(weak.expired());
  weak.reset();  // the block goes back to the cache now
  auto next = std::allocate_shared<Counted>(CachingAllocator<Counted>{}, &alive);
  EXPECT_EQ(alive, 1);
  // Arrays (n > 1) bypass the cache.
  CachingAllocator<Payload> alloc;
  Payload* several = alloc.allocate(3);
  several[2].bytes[0] = 4;
  alloc.deallocate(several, 3);
}

}  // namespace
