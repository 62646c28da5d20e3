// The replaced global allocation functions of failing_allocator.h.
#include "failing_allocator.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<size_t> g_fail_from{0};  // 0: allocations succeed
std::atomic<long> g_countdown{0};    // > 0: the allocation that brings it to 0 fails

void* Allocate(size_t size) {
  const size_t from = g_fail_from.load(std::memory_order_relaxed);
  if (from != 0 && size >= from) throw std::bad_alloc();
  if (g_countdown.load(std::memory_order_relaxed) > 0 && g_countdown.fetch_sub(1) == 1) throw std::bad_alloc();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace accel_test {

void FailAllocationsFrom(size_t bytes) { g_fail_from.store(bytes); }
void FailAllocationAfter(long n) { g_countdown.store(n); }
bool StopCountdown() { return g_countdown.exchange(0) <= 0; }

}  // namespace accel_test

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): left to the sanitizer's, they allocate
// with its operator new and are freed by the free() below, which ASan reports as a mismatch.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
