// What the cross-process object tests (object_share_test.cc) and their reader
// process (object_share_reader.cc) both compute: a checksum of bytes as text,
// and how the mapping holding an address looks in /proc/self/maps.
#ifndef ACCEL_TESTS_RUNTIME_OBJECT_SHARE_UTIL_H_
#define ACCEL_TESTS_RUNTIME_OBJECT_SHARE_UTIL_H_

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace accel_share_test {

// FNV-1a of `size` bytes at `data`, as 16 hex digits.
inline std::string Checksum(const void* data, uint64_t size) {
  uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (uint64_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%016" PRIx64, h);
  return text;
}

// "perms:kind" of the /proc/self/maps line holding `address` ("r--s:memfd", "rw-p:other"), "none" when unmapped.
inline std::string MappingOf(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t start = 0, end = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %7s", &start, &end, perms) != 3) continue;
    if (a >= start && a < end) {
      return std::string(perms) + ":" + (line.find("/memfd:") != std::string::npos ? "memfd" : "other");
    }
  }
  return "none";
}

}  // namespace accel_share_test

#endif  // ACCEL_TESTS_RUNTIME_OBJECT_SHARE_UTIL_H_
