#include "event_log.h"

#include <algorithm>
#include <cstring>

namespace accel::runtime {

void EventLog::SetCapacity(uint32_t capacity) {
  std::lock_guard lock(mutex_);
  std::vector<accel_runtime_event_t> ring(capacity);
  // Keep the newest events that fit, at their places in the new ring.
  const uint64_t keep = std::min<uint64_t>(capacity, last_ + 1 - first_);
  for (uint64_t seq = last_ + 1 - keep; seq <= last_ && keep > 0; ++seq) {
    ring[(seq - 1) % capacity] = ring_[(seq - 1) % ring_.size()];
  }
  ring_ = std::move(ring);
  first_ = last_ + 1 - keep;
  enabled_.store(capacity > 0, std::memory_order_relaxed);
}

void EventLog::Append(accel_runtime_event_kind_t kind, uint64_t id, std::string_view name, uint32_t device,
                      uint32_t device_count, accel_status_t status) {
  std::lock_guard lock(mutex_);
  if (ring_.empty()) return;  // turned off since the caller looked
  const auto now = std::chrono::steady_clock::now();  // under the lock: times rise with sequence numbers
  const uint64_t seq = ++last_;
  if (seq - first_ >= ring_.size()) first_ = seq + 1 - ring_.size();
  accel_runtime_event_t& e = ring_[(seq - 1) % ring_.size()];
  e = accel_runtime_event_t{};
  e.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT;
  e.struct_size = sizeof(e);
  e.sequence = seq;
  e.time_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - origin_).count());
  e.kind = static_cast<uint32_t>(kind);
  e.status = status;
  e.id = id;
  e.device = device;
  e.device_count = device_count;
  const size_t n = std::min(name.size(), sizeof(e.name) - 1);
  std::memcpy(e.name, name.data(), n);
  e.name[n] = '\0';
}

void EventLog::Read(uint64_t after, uint32_t capacity, void* out, uint32_t stride, uint32_t* count,
                    uint64_t* dropped) const {
  std::lock_guard lock(mutex_);
  const uint64_t from = std::max(after + 1, first_);
  if (dropped != nullptr) *dropped = from > after + 1 && after < last_ ? from - (after + 1) : 0;
  uint32_t n = 0;
  for (uint64_t seq = from; seq <= last_ && n < capacity; ++seq, ++n) {
    auto* slot = static_cast<unsigned char*>(out) + static_cast<size_t>(n) * stride;
    std::memset(slot, 0, stride);
    std::memcpy(slot, &ring_[(seq - 1) % ring_.size()], sizeof(accel_runtime_event_t));
  }
  *count = n;
}

}  // namespace accel::runtime
