// Deadlines. Part of the host engine that the host and sim backends share
// (backends/host/README.md); status names, versions and the core's host
// services are backends/common's.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "host_backend.h"

namespace accel::host {

Deadline::Deadline(uint64_t timeout_ns) {
  // Timeouts past ~146 years cannot be added to steady_clock::now() without overflow; they are infinite in practice.
  constexpr uint64_t kLongestFinite = uint64_t{1} << 62;
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE || timeout_ns > kLongestFinite) return;
  end_ = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(timeout_ns));
}

}  // namespace accel::host
