// A per-thread cache of equal-sized memory blocks, for objects the runtime
// makes and frees at a high rate (a task and its shared_ptr control block, one
// per submission): a block freed on a thread is kept there, up to a budget,
// and the next allocation of that size on that thread takes it back without a
// call to malloc. glibc keeps only 7 blocks of a size per thread (tcache); a
// client that submits a batch of 1,024 tasks and then releases them would go
// to its arenas for all the others.
//
//   auto task = std::allocate_shared<Task>(CachingAllocator<Task>{});
//
// Blocks move between threads freely: one freed on a thread other than the one
// that took it joins the freeing thread's cache. So that a stream from one
// thread to another (a client's tasks, freed by the workers that ran them)
// does not end in malloc on one side and free on the other, a full cache
// hands half its blocks, as one batch, to a shared depot, and an empty one
// takes a batch from there before it asks the heap: one lock per batch, not
// per block. A thread's cache is given back to the heap when the thread
// exits. Under AddressSanitizer a cached block is poisoned, so a use after
// its object's end is still reported.
//
// Thread-safe: each thread touches only its own cache; the depot has a lock.
#ifndef ACCEL_RUNTIME_BLOCK_CACHE_H_
#define ACCEL_RUNTIME_BLOCK_CACHE_H_

#include <cstddef>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ACCEL_BLOCK_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define ACCEL_BLOCK_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ACCEL_BLOCK_POISON(p, n) ((void)(p), (void)(n))
#define ACCEL_BLOCK_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace accel::runtime {

template <size_t Align>
void* NewBlock(size_t size) {
  if constexpr (Align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) return ::operator new (size, std::align_val_t{Align});
  return ::operator new(size);
}

template <size_t Align>
void DeleteBlock(void* block) noexcept {
  if constexpr (Align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    ::operator delete (block, std::align_val_t{Align});
  } else {
    ::operator delete(block);
  }
}

// Blocks of `Size` bytes, aligned for `Align`, cached per thread up to
// kBudgetBytes of them (1 MiB: about 1,600 tasks, more than a client's batch
// of 1,024 in accel-runtime-bench).
template <size_t Size, size_t Align>
class BlockCache {
 public:
  static constexpr size_t kBudgetBytes = size_t{1} << 20;
  static constexpr size_t kMostBlocks = kBudgetBytes / Size > 0 ? kBudgetBytes / Size : 1;

  // Blocks a full cache hands to the depot at once, and the most the depot keeps (8 MiB of them).
  static constexpr size_t kBatchBlocks = kMostBlocks / 2 > 0 ? kMostBlocks / 2 : 1;
  static constexpr size_t kDepotBatches = 16;

  static void* Take() {
    Cache& cache = Mine();
    if (cache.blocks.empty() && !cache.closed) FromDepot(cache);
    if (!cache.blocks.empty()) {
      void* block = cache.blocks.back();
      cache.blocks.pop_back();
      ACCEL_BLOCK_UNPOISON(block, Size);
      return block;
    }
    return NewBlock<Align>(Size);
  }

  static void Give(void* block) noexcept {
    Cache& cache = Mine();
    if (cache.blocks.size() >= kMostBlocks && !cache.closed) ToDepot(cache);
    if (cache.blocks.size() < kMostBlocks && !cache.closed) {
      try {
        cache.blocks.push_back(block);
        ACCEL_BLOCK_POISON(block, Size);
        return;
      } catch (const std::bad_alloc&) {
        // no room to remember it: back to the heap
      }
    }
    DeleteBlock<Align>(block);
  }

 private:
  struct Cache {
    std::vector<void*> blocks;
    bool closed = false;  // the thread is exiting: a block freed from here on goes to the heap
    ~Cache() {
      closed = true;
      for (void* block : blocks) {
        ACCEL_BLOCK_UNPOISON(block, Size);
        DeleteBlock<Align>(block);
      }
      blocks.clear();
    }
  };
  static Cache& Mine() {
    thread_local Cache cache;
    return cache;
  }
  struct Depot {
    std::mutex mutex;
    std::vector<std::vector<void*>> batches;
  };
  static Depot& TheDepot() {
    static auto* depot = new Depot;  // leaked: threads may free blocks during exit
    return *depot;
  }
  static void FromDepot(Cache& cache) noexcept {
    Depot& depot = TheDepot();
    std::vector<void*> batch;
    {
      const std::lock_guard lock(depot.mutex);
      if (depot.batches.empty()) return;
      batch = std::move(depot.batches.back());
      depot.batches.pop_back();
    }
    std::swap(cache.blocks, batch);  // the cache was empty: its capacity goes back with nothing in it
  }
  static void ToDepot(Cache& cache) noexcept {
    std::vector<void*> batch;
    try {
      batch.assign(cache.blocks.end() - static_cast<std::ptrdiff_t>(kBatchBlocks), cache.blocks.end());
    } catch (const std::bad_alloc&) {
      return;  // the caller frees its block to the heap
    }
    cache.blocks.resize(cache.blocks.size() - kBatchBlocks);
    Depot& depot = TheDepot();
    {
      const std::lock_guard lock(depot.mutex);
      if (depot.batches.size() < kDepotBatches) {
        try {
          depot.batches.push_back(std::move(batch));
          return;
        } catch (const std::bad_alloc&) {
          // the batch goes to the heap below
        }
      }
    }
    for (void* block : batch) {
      ACCEL_BLOCK_UNPOISON(block, Size);
      DeleteBlock<Align>(block);
    }
  }
};

// A stateless allocator over BlockCache, for std::allocate_shared.
template <typename T>
struct CachingAllocator {
  using value_type = T;
  CachingAllocator() = default;
  template <typename U>
  CachingAllocator(const CachingAllocator<U>& /*other*/) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) {
    if (n != 1) return static_cast<T*>(NewBlock<alignof(T)>(n * sizeof(T)));
    return static_cast<T*>(BlockCache<sizeof(T), alignof(T)>::Take());
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n != 1) {
      DeleteBlock<alignof(T)>(p);
      return;
    }
    BlockCache<sizeof(T), alignof(T)>::Give(p);
  }
  template <typename U>
  bool operator==(const CachingAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_BLOCK_CACHE_H_
