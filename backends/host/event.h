// Events: each stream_record_event makes a new Record, which the recording
// stream completes in order; the Event handle only points at its latest Record.
// A wait enqueued on another stream holds the Record that was current when it
// was enqueued, so re-recording the event later does not change what it waits for,
// and destroying the event while records are pending is safe.
#ifndef ACCEL_BACKENDS_HOST_EVENT_H_
#define ACCEL_BACKENDS_HOST_EVENT_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "host_backend.h"

namespace accel::host {

// One recording of an event: pending until the recording stream's worker reaches it, then complete with that
// stream's status at that point (and a steady-clock timestamp when the event times).
// Thread-safe: every member is guarded by the record's mutex; Complete wakes every waiter.
class Record {
 public:
  // What a completed record holds.
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;        // the stream's error message when status is an error
    uint64_t timestamp_ns = 0;  // steady clock, when the event times
  };

  explicit Record(bool timing) : timing_(timing) {}

  // Completes the record (once; later calls are ignored) and wakes its waiters.
  void Complete(accel_status_t status, std::string message) noexcept;

  // Whether it completed; when it did and `out` is not NULL, copies the outcome.
  bool Peek(Outcome* out) const;

  // Waits until the record completes or the deadline passes; returns whether it completed.
  bool Wait(const Deadline& deadline) const;

 private:
  const bool timing_;
  mutable std::mutex mutex_;
  mutable std::condition_variable completed_;
  bool done_ = false;
  Outcome outcome_;
};

// An event handle: its device, whether it times, and its current (latest) record.
// Thread-safe: the current record is read and replaced under the event's mutex.
class Event {
 public:
  Event(Device* device, bool timing) : device_(device), timing_(timing) {}

  Device* device() const { return device_; }
  bool timing() const { return timing_; }

  // The latest record; nullptr when the event was never recorded.
  std::shared_ptr<Record> current() const;
  void set_current(std::shared_ptr<Record> record);

 private:
  Device* const device_;
  const bool timing_;
  mutable std::mutex mutex_;
  std::shared_ptr<Record> current_;
};

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_EVENT_H_
