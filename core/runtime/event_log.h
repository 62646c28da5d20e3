// The runtime's decision log (docs/scheduler.md, "Events"): the last N decisions in a ring, off until given a
// capacity. Recording checks one relaxed flag when the log is off, so the direct path pays nothing for it.
//
//   EventLog log;
//   log.SetCapacity(1024);
//   log.Record(ACCEL_RUNTIME_EVENT_SUBMITTED, 7, "task 7", kNoDevice, 0, ACCEL_SUCCESS);
//   std::vector<accel_runtime_event_t> out(16);
//   log.Read(0, 16, out.data(), sizeof(out[0]), &count, &dropped);
//
// Thread safety: every member function is safe from any thread.
#ifndef ACCEL_CORE_RUNTIME_EVENT_LOG_H_
#define ACCEL_CORE_RUNTIME_EVENT_LOG_H_

#include <accel/runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace accel::runtime {

class EventLog {
 public:
  static constexpr uint32_t kNoDevice = UINT32_MAX;

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  void SetCapacity(uint32_t capacity);

  // Records one decision when the log is on. `name` is cut to 63 bytes.
  void Record(accel_runtime_event_kind_t kind, uint64_t id, std::string_view name, uint32_t device,
              uint32_t device_count, accel_status_t status) {
    if (enabled()) Append(kind, id, name, device, device_count, status);
  }

  // Copies the events after `after`, oldest first, at most `capacity`, at `stride` bytes apart (each header set).
  void Read(uint64_t after, uint32_t capacity, void* out, uint32_t stride, uint32_t* count, uint64_t* dropped) const;

 private:
  void Append(accel_runtime_event_kind_t kind, uint64_t id, std::string_view name, uint32_t device,
              uint32_t device_count, accel_status_t status);

  const std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  std::vector<accel_runtime_event_t> ring_;  // ring_[(sequence - 1) % size]
  uint64_t last_ = 0;                        // the sequence number of the newest event
  uint64_t first_ = 1;                       // the oldest one the ring holds (last_ + 1 when empty)
};

}  // namespace accel::runtime

#endif  // ACCEL_CORE_RUNTIME_EVENT_LOG_H_
