// Text of a device descriptor, shared by the backends that map vendor attributes to one (cuda, hip, level_zero):
// bounded copies into its fixed-size fields and the normalised SKU spelling. Part of accel_backend_support
// (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_DESCRIPTOR_TEXT_H_
#define ACCEL_BACKENDS_COMMON_DESCRIPTOR_TEXT_H_

#include <cctype>
#include <cstring>
#include <string>
#include <string_view>

namespace accel::backend {

// Copies `source` into a field of `capacity` bytes, cut to fit, NUL-padded to the end.
inline void CopyString(char* destination, size_t capacity, std::string_view source) {
  const size_t length = source.size() < capacity - 1 ? source.size() : capacity - 1;
  std::memcpy(destination, source.data(), length);
  std::memset(destination + length, 0, capacity - length);
}

// Lowercase letters and digits, every other run one '-', none leading or trailing ("NVIDIA H100 80GB HBM3" ->
// "nvidia-h100-80gb-hbm3").
inline std::string NormaliseSku(std::string_view text) {
  std::string out;
  bool dash = false;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      dash = true;
    }
  }
  return out;
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_DESCRIPTOR_TEXT_H_
