// FillPattern: a buffer range filled on the host with a 1, 2 or 4 byte pattern. Part of accel_backend_support
// (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_FILL_H_
#define ACCEL_BACKENDS_COMMON_FILL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace accel::backend {

// Fills [dst, dst + size) with the pattern's `pattern_size` bytes repeated from its first: a memset for one byte,
// else one copy of the pattern, then copies of what is written, doubling (memcpy's speed, not a loop of stores).
// `size` need not be a multiple of the pattern. Thread-safe as memcpy is: the caller owns the range.
inline void FillPattern(std::byte* dst, uint64_t size, const std::byte* pattern, uint32_t pattern_size) {
  if (size == 0) return;
  if (pattern_size == 1) {
    std::memset(dst, static_cast<int>(pattern[0]), size);
    return;
  }
  uint64_t written = pattern_size < size ? pattern_size : size;
  std::memcpy(dst, pattern, written);
  while (written < size) {
    const uint64_t chunk = written < size - written ? written : size - written;
    std::memcpy(dst + written, dst, chunk);
    written += chunk;
  }
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_FILL_H_
