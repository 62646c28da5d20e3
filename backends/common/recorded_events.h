// Stream and event support for backends whose events point at shared records: a record is one recording of an
// event, completed once by whoever learns of it first and waited on by many (the OpenCL and Vulkan backends). Part
// of accel_backend_support (backend_support.h).
//
// What a backend supplies:
//   Event:  const HostServices& host() const; bool timing() const; std::shared_ptr<Record> current();
//   Record: std::optional<Outcome> Wait(const std::optional<Clock::time_point>& deadline);
//   Outcome: accel_status_t status; std::string message (the stream's error when status < 0).
// The query function the slots take says how the backend learns of completion without waiting (Peek, or a poll of
// the runtime). Each function runs inside the backend's Guard; the thread-safety is the Event's and Record's.
#ifndef ACCEL_BACKENDS_COMMON_RECORDED_EVENTS_H_
#define ACCEL_BACKENDS_COMMON_RECORDED_EVENTS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/services.h"

namespace accel::backend {

using Clock = std::chrono::steady_clock;  // monotonic: deadlines and host timestamps never go back

// When a wait of `timeout_ns` ends; nullopt for ACCEL_TIMEOUT_INFINITE (and for timeouts past ~146 years, which
// would overflow the clock).
inline std::optional<Clock::time_point> DeadlineAfter(uint64_t timeout_ns) {
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE || timeout_ns > (uint64_t{1} << 62)) return std::nullopt;
  return Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(timeout_ns));
}

// Adds the counts and bytes of `delta` to `*total`.
inline void AddCopyStatistics(const accel_copy_statistics_t& delta, accel_copy_statistics_t* total) {
  total->host_to_device_copies += delta.host_to_device_copies;
  total->host_to_device_bytes += delta.host_to_device_bytes;
  total->device_to_host_copies += delta.device_to_host_copies;
  total->device_to_host_bytes += delta.device_to_host_bytes;
  total->local_copies += delta.local_copies;
  total->local_bytes += delta.local_bytes;
  total->peer_copies += delta.peer_copies;
  total->peer_bytes += delta.peer_bytes;
  total->staged_copies += delta.staged_copies;
  total->staged_bytes += delta.staged_bytes;
}

// The status of a completed record: success, or the asynchronous error of the stream it was recorded on.
template <typename Outcome>
accel_status_t ReportRecordOutcome(const HostServices& host, const Outcome& outcome) {
  if (outcome.status >= 0) return ACCEL_SUCCESS;
  return host.Fail(outcome.status,
                   "the event was recorded after an asynchronous error on its stream: " + outcome.message);
}

// The body of event_query. `query(record)` is the outcome when the record completed, nullopt while it is pending.
template <typename Event, typename Query>
accel_status_t QueryRecordedEvent(Event& event, Query&& query) {
  const auto record = event.current();
  if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete
  const auto outcome = query(*record);
  return outcome ? ReportRecordOutcome(event.host(), *outcome) : ACCEL_NOT_READY;
}

// The body of event_synchronize.
template <typename Event>
accel_status_t SynchronizeRecordedEvent(Event& event, uint64_t timeout_ns) {
  const auto record = event.current();
  if (record == nullptr) return ACCEL_SUCCESS;
  const auto outcome = record->Wait(DeadlineAfter(timeout_ns));
  if (!outcome) {
    return event.host().Fail(ACCEL_ERROR_TIMEOUT,
                             "the event did not complete within " + std::to_string(timeout_ns) + " ns");
  }
  return ReportRecordOutcome(event.host(), *outcome);
}

// The checks event_elapsed_time makes before it reads timestamps: both events time and were recorded (else
// FAILED_PRECONDITION naming 'start' or 'end'), both records completed (else ACCEL_NOT_READY). Fills `outcomes` and
// returns ACCEL_SUCCESS when the backend may go on; a record that completed with an error is for the backend to
// report, since what it means for the timestamp differs.
template <typename Event, typename Query, typename Outcome>
accel_status_t RecordedEventOutcomes(const HostServices& host, Event* const (&events)[2], Query&& query,
                                     std::optional<Outcome> (&outcomes)[2]) {
  const char* roles[2] = {"start", "end"};
  for (int i = 0; i < 2; ++i) {
    if (!events[i]->timing()) {
      return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                       std::string("'") + roles[i] + "' was created without ACCEL_EVENT_FLAG_TIMING");
    }
    const auto record = events[i]->current();
    if (record == nullptr) {
      return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION, std::string("'") + roles[i] + "' was never recorded");
    }
    outcomes[i] = query(*record);
  }
  return outcomes[0] && outcomes[1] ? ACCEL_SUCCESS : ACCEL_NOT_READY;
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_RECORDED_EVENTS_H_
