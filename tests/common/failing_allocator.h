// Host memory that runs out on demand, for out-of-memory tests (docs/errors.md: a call that meets it fails with
// ACCEL_ERROR_RESOURCE_EXHAUSTED and loses nothing). Linking failing_allocator.cc into a test program replaces the
// global operator new (every form, and their deletes) for the whole process, libaccel and the backends included.
// Disarmed, it is malloc and free.
//
//   accel_test::FailAllocationsFrom(1024);  // from now on, allocations of 1 KiB and more throw std::bad_alloc
//   ...
//   accel_test::FailAllocationsFrom(0);     // disarmed
//
// Thread-safety: the settings are atomics; any thread may arm or disarm them while others allocate.
#ifndef ACCEL_TESTS_COMMON_FAILING_ALLOCATOR_H_
#define ACCEL_TESTS_COMMON_FAILING_ALLOCATOR_H_

#include <cstddef>

namespace accel_test {

// Allocations of `bytes` and more fail from now on (0: none fails for its size).
void FailAllocationsFrom(size_t bytes);

// The `n`-th allocation from now fails (0: none is counted down).
void FailAllocationAfter(long n);

// Stops the count of FailAllocationAfter; true when the allocation it named was reached (and failed).
bool StopCountdown();

}  // namespace accel_test

#endif  // ACCEL_TESTS_COMMON_FAILING_ALLOCATOR_H_
