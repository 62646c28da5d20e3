// Events: records completed by stream workers, and the event slots that query,
// wait on and time them. Recording and waiting are stream operations (stream.cc).
#include "event.h"

#include <chrono>
#include <string>
#include <utility>

#include "device.h"

namespace accel::host {

void Record::Complete(accel_status_t status, std::string message) noexcept {
  uint64_t timestamp_ns = 0;
  if (timing_) {
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    timestamp_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
  }
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    outcome_.status = status;
    outcome_.message = std::move(message);
    outcome_.timestamp_ns = timestamp_ns;
    done_ = true;
  }
  completed_.notify_all();
}

bool Record::Peek(Outcome* out) const {
  std::lock_guard lock(mutex_);
  if (done_ && out != nullptr) *out = outcome_;
  return done_;
}

bool Record::Wait(const Deadline& deadline) const {
  std::unique_lock lock(mutex_);
  return deadline.Wait(completed_, lock, [this] { return done_; });
}

std::shared_ptr<Record> Event::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

void Event::set_current(std::shared_ptr<Record> record) {
  std::shared_ptr<Record> previous;  // released outside the lock
  std::lock_guard lock(mutex_);
  previous = std::exchange(current_, std::move(record));
}

namespace {

// The status of a completed record, with host->set_error when it is an error.
accel_status_t Report(const HostServices& host, const Record::Outcome& outcome) {
  if (outcome.status >= 0) return outcome.status;
  return host.Fail(outcome.status,
                   "the event was recorded after an asynchronous error on its stream: " + outcome.message);
}

}  // namespace

accel_status_t EventCreate(accel_bk_device_t device_handle, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept {
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "event_create", [&] {
    const bool timing = desc != nullptr && ACCEL_BACKEND_HAS_FIELD(desc, accel_event_desc_t, flags) &&
                        (desc->flags & ACCEL_EVENT_FLAG_TIMING) != 0;
    auto event = std::make_unique<Event>(device, timing);
    *out_event = Wrap(event.release());
    return ACCEL_SUCCESS;
  });
}

void EventDestroy(accel_bk_event_t handle) noexcept {
  // Pending records live on in the operations that complete or wait on them.
  std::unique_ptr<Event> event(Unwrap(handle));
}

accel_status_t EventQuery(accel_bk_event_t handle) noexcept {
  const Event* event = Unwrap(handle);
  const HostServices& host = *event->device()->host;
  return Guard(host, "event_query", [&]() -> accel_status_t {
    const std::shared_ptr<Record> record = event->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete
    Record::Outcome outcome;
    if (!record->Peek(&outcome)) return ACCEL_NOT_READY;
    return Report(host, outcome);
  });
}

accel_status_t EventSynchronize(accel_bk_event_t handle, uint64_t timeout_ns) noexcept {
  const Event* event = Unwrap(handle);
  const HostServices& host = *event->device()->host;
  return Guard(host, "event_synchronize", [&]() -> accel_status_t {
    const std::shared_ptr<Record> record = event->current();
    if (record == nullptr) return ACCEL_SUCCESS;
    if (!record->Wait(Deadline(timeout_ns))) {
      return host.Fail(ACCEL_ERROR_TIMEOUT, "the event did not complete within " + std::to_string(timeout_ns) + " ns");
    }
    Record::Outcome outcome;
    record->Peek(&outcome);
    return Report(host, outcome);
  });
}

accel_status_t EventElapsedTime(accel_bk_event_t start_handle, accel_bk_event_t end_handle,
                                uint64_t* out_nanoseconds) noexcept {
  const Event* start = Unwrap(start_handle);
  const Event* end = Unwrap(end_handle);
  const HostServices& host = *start->device()->host;
  return Guard(host, "event_elapsed_time", [&]() -> accel_status_t {
    const struct {
      const char* role;
      const Event* event;
    } events[] = {{"start", start}, {"end", end}};
    std::shared_ptr<Record> records[2];
    for (int i = 0; i < 2; ++i) {
      if (!events[i].event->timing()) {
        return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         std::string("the ") + events[i].role + " event was created without ACCEL_EVENT_FLAG_TIMING");
      }
      records[i] = events[i].event->current();
      if (records[i] == nullptr) {
        return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION, std::string("'") + events[i].role + "' was never recorded");
      }
    }
    Record::Outcome outcomes[2];
    if (!records[0]->Peek(&outcomes[0]) || !records[1]->Peek(&outcomes[1])) return ACCEL_NOT_READY;
    const uint64_t from = outcomes[0].timestamp_ns;
    const uint64_t to = outcomes[1].timestamp_ns;
    *out_nanoseconds = to > from ? to - from : 0;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::host
