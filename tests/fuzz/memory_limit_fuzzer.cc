// libFuzzer target for ACCEL_MEMORY_LIMIT (core/lib/memory_account.h), the
// text up to its first NUL as getenv would give it: it is rejected with
// INVALID_ARGUMENT and a message, or gives one limit per device named at most
// once, each a byte count or a share in (0, 100]; written back, the limits read
// the same. Nothing throws, crashes, leaks or reads out of bounds (ASan, UBSan).
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "memory_account.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  text.resize(strnlen(text.c_str(), text.size()));
  auto parsed = accel::core::ParseMemoryLimit(text);
  if (!parsed.ok()) {
    if (parsed.status().code() != ACCEL_ERROR_INVALID_ARGUMENT || parsed.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (parsed->empty()) __builtin_trap();
  std::string written;
  for (size_t i = 0; i < parsed->size(); ++i) {
    const accel::core::MemoryLimitEntry& e = (*parsed)[i];
    for (size_t j = 0; j < i; ++j) {
      if ((*parsed)[j].device == e.device) __builtin_trap();  // each device at most once
    }
    // Trimmed, and without the separators (a blank inside is kept: it then names no device, and the instance says so).
    if (e.device.find_first_of("=,") != std::string::npos) __builtin_trap();
    if (!e.device.empty() && (std::strchr(" \t", e.device.front()) || std::strchr(" \t", e.device.back()))) {
      __builtin_trap();
    }
    if (e.is_percent && !(std::isfinite(e.percent) && e.percent > 0 && e.percent <= 100)) __builtin_trap();
    written += (written.empty() ? "" : ",") + (e.device.empty() ? "" : e.device + "=") +
               (e.is_percent ? fmt::format("{}%", e.percent) : std::to_string(e.bytes));
  }
  auto again = accel::core::ParseMemoryLimit(written);
  if (!again.ok() || again->size() != parsed->size()) __builtin_trap();
  for (size_t i = 0; i < parsed->size(); ++i) {
    const auto& a = (*parsed)[i];
    const auto& b = (*again)[i];
    if (a.device != b.device || a.is_percent != b.is_percent || a.bytes != b.bytes || a.percent != b.percent) {
      __builtin_trap();
    }
  }
  return 0;
}
