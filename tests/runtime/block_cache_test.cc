// BlockCache and CachingAllocator (core/runtime/block_cache.h), the per-thread
// cache of the runtime's task memory: a block freed on a thread comes back to
// that thread's next allocation, the cache keeps no more than its budget, a
// block freed on another thread joins that thread's cache, and shared_ptrs
// made with the allocator free through it (leaks and uses after free are
// ASan's and LSan's to find: cached blocks are poisoned).
#include "block_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace {

using accel::runtime::BlockCache;
using accel::runtime::CachingAllocator;

// A size no other test object has, so that each test sees only its own blocks.
struct Payload {
  char bytes[200];
};
using Cache = BlockCache<sizeof(Payload), alignof(Payload)>;

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

TEST(BlockCache, KeepsNoMoreThanItsBudget) {
  CachingAllocator<Payload> alloc;
  const size_t most = Cache::kMostBlocks;
  ASSERT_EQ(most, Cache::kBudgetBytes / sizeof(Payload));
  // Empty the thread's cache first (earlier tests left blocks in it), then free more than it keeps.
  std::vector<Payload*> drained;
  for (size_t i = 0; i < most; ++i) drained.push_back(alloc.allocate(1));
  std::vector<Payload*> blocks;
  for (size_t i = 0; i < most + 16; ++i) blocks.push_back(alloc.allocate(1));
  for (Payload* p : drained) ::operator delete(p);  // straight to the heap: the cache stays empty
  for (Payload* p : blocks) alloc.deallocate(p, 1);
  // The first `most` freed were kept; the 16 after went to the heap, so the cache gives back exactly those kept,
  // newest first.
  std::vector<Payload*> again;
  for (size_t i = 0; i < most; ++i) {
    again.push_back(alloc.allocate(1));
    ASSERT_EQ(again.back(), blocks[most - 1 - i]) << "allocation " << i;
  }
  for (Payload* p : again) alloc.deallocate(p, 1);
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
