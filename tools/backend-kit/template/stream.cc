// Streams and events (docs/streams.md). Each stream is an in-order queue of
// operations run by the stream's own worker thread; enqueueing returns at once.
// Each stream_record_event makes a new Record that the recording stream's worker
// completes; an event points at its latest Record, and a wait holds the Record
// that was current when the wait was enqueued.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "symbols.h"

namespace accel::template_backend {
namespace {

using Clock = std::chrono::steady_clock;  // monotonic: event timestamps never go back

// When a wait of `timeout_ns` ends; nullopt for ACCEL_TIMEOUT_INFINITE (and for timeouts past ~146 years, which
// would overflow the clock).
std::optional<Clock::time_point> DeadlineAfter(uint64_t timeout_ns) {
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE || timeout_ns > (uint64_t{1} << 62)) return std::nullopt;
  return Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(timeout_ns));
}

// Waits on `cv` with `lock` held until `done()` or the deadline; returns done().
bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
               const std::optional<Clock::time_point>& deadline, const std::function<bool()>& done) {
  if (!deadline) {
    cv.wait(lock, done);
    return true;
  }
  return cv.wait_until(lock, *deadline, done);
}

// One recording of an event: pending until the recording stream's worker reaches it, then complete with the
// stream's status at that point and, for a timing event, a timestamp.
// Thread-safe: guarded by its own mutex; Complete wakes every waiter.
class Record {
 public:
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;  // the stream's error message when `status` is an error
    uint64_t timestamp_ns = 0;
  };

  explicit Record(bool timing) : timing_(timing) {}

  void Complete(accel_status_t status, const std::string& message) {
    const uint64_t now =
        timing_ ? static_cast<uint64_t>(
                      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count())
                : 0;
    {
      std::lock_guard lock(mutex_);
      outcome_ = {status, message, now};
      done_ = true;
    }
    completed_.notify_all();
  }

  // The outcome once complete; nullopt while pending.
  std::optional<Outcome> Peek() {
    std::lock_guard lock(mutex_);
    if (!done_) return std::nullopt;
    return outcome_;
  }

  // Waits until complete or the deadline; returns the outcome, or nullopt on timeout.
  std::optional<Outcome> Wait(const std::optional<Clock::time_point>& deadline) {
    std::unique_lock lock(mutex_);
    if (!WaitUntil(completed_, lock, deadline, [this] { return done_; })) return std::nullopt;
    return outcome_;
  }

 private:
  const bool timing_;
  std::mutex mutex_;
  std::condition_variable completed_;
  bool done_ = false;
  Outcome outcome_;
};

// One queued operation. `run` does the work when the stream holds no error and returns its status, setting
// `*message` when it fails; otherwise `skip`, when set, runs instead, told the stream's error. `copies` is added to
// the stream's copy statistics when `run` succeeds. What the lambdas capture (buffer storage, records) lives as long
// as the operation.
struct Operation {
  const char* what = "";
  std::function<accel_status_t(std::string* message)> run;
  std::function<void(accel_status_t error, const std::string& message)> skip;
  accel_copy_statistics_t copies{};
  uint64_t number = 0;  // set by Enqueue: 1 for the stream's first operation
};

void Add(const accel_copy_statistics_t& delta, accel_copy_statistics_t* total) {
  total->host_to_device_copies += delta.host_to_device_copies;
  total->host_to_device_bytes += delta.host_to_device_bytes;
  total->device_to_host_copies += delta.device_to_host_copies;
  total->device_to_host_bytes += delta.device_to_host_bytes;
  total->local_copies += delta.local_copies;
  total->local_bytes += delta.local_bytes;
}

}  // namespace

// An event handle: whether it times, and its latest record (NULL: never recorded, which counts as complete).
// Thread-safe: the current record is read and replaced under the event's mutex.
class Event {
 public:
  Event(Device* device, bool timing) : device_(device), timing_(timing) {}

  const Host& host() const { return *device_->host; }
  bool timing() const { return timing_; }
  std::shared_ptr<Record> current() {
    std::lock_guard lock(mutex_);
    return current_;
  }
  void set_current(std::shared_ptr<Record> record) {
    std::lock_guard lock(mutex_);
    current_.swap(record);
  }

 private:
  Device* const device_;
  const bool timing_;
  std::mutex mutex_;
  std::shared_ptr<Record> current_;
};

// An in-order queue of operations and the worker thread that runs them. After an operation fails the stream keeps
// its status and message (the asynchronous error) and skips later operations: records still complete, carrying the
// error, and host callbacks still run once, told the error.
// Thread-safe: the queue and the error are guarded by the stream's mutex, never held while an operation runs.
class Stream {
 public:
  // Starts the worker; throws std::system_error when the thread cannot be created.
  explicit Stream(Device* device) : device_(device), worker_([this] { Run(); }) {}
  // Runs what is queued, then joins the worker. Never called on the worker itself.
  ~Stream() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    worker_.join();
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const Host& host() const { return *device_->host; }
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

  accel_status_t Enqueue(Operation op) {
    {
      std::lock_guard lock(mutex_);
      op.number = ++enqueued_;
      queue_.push_back(std::move(op));
    }
    work_.notify_one();
    return ACCEL_SUCCESS;
  }

  accel_status_t Query() {
    std::unique_lock lock(mutex_);
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    return IdleLocked() ? ACCEL_SUCCESS : ACCEL_NOT_READY;
  }

  accel_status_t Synchronize(uint64_t timeout_ns) {
    if (OnWorker()) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "called from a host callback of the same stream, which would wait for itself");
    }
    std::unique_lock lock(mutex_);
    if (!WaitUntil(idle_, lock, DeadlineAfter(timeout_ns), [this] { return IdleLocked(); })) {
      const uint64_t pending = queue_.size() + (running_ ? 1 : 0);
      return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had " + std::to_string(pending) +
                                                  " operations pending after " + std::to_string(timeout_ns) + " ns");
    }
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    return ACCEL_SUCCESS;
  }

  accel_status_t ClearError() {
    std::lock_guard lock(mutex_);
    if (!IdleLocked()) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "cannot clear the stream's error while work is pending; synchronize first");
    }
    error_ = ACCEL_SUCCESS;
    error_message_.clear();
    return ACCEL_SUCCESS;
  }

  accel_copy_statistics_t CopyStatistics() {
    std::lock_guard lock(mutex_);
    return copies_;
  }

 private:
  bool IdleLocked() const { return queue_.empty() && !running_; }

  // The worker: pops each operation in order and runs it (or skips it) without holding the lock.
  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and drained
      Operation op = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      const accel_status_t prior = error_;
      const std::string prior_message = prior != ACCEL_SUCCESS ? error_message_ : std::string();
      lock.unlock();

      std::string message;
      const accel_status_t status = Execute(op, prior, prior_message, &message);
      const char* what = op.what;
      const uint64_t number = op.number;
      const accel_copy_statistics_t copies = op.copies;
      op = Operation{};  // releases what it held (a freed buffer's memory) before the stream can report idle

      lock.lock();
      if (prior == ACCEL_SUCCESS && status == ACCEL_SUCCESS) Add(copies, &copies_);
      if (status != ACCEL_SUCCESS && error_ == ACCEL_SUCCESS) {
        error_ = status;
        error_message_ = "operation #" + std::to_string(number) + " (" + what + ") " + message;
      }
      running_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }

  // Runs `op`, or skips it when the stream held an error (`prior`); returns the operation's own status.
  static accel_status_t Execute(Operation& op, accel_status_t prior, const std::string& prior_message,
                                std::string* message) noexcept {
    try {
      if (prior != ACCEL_SUCCESS) {
        if (op.skip) op.skip(prior, prior_message);
        return ACCEL_SUCCESS;
      }
      return op.run(message);
    } catch (const std::exception& e) {
      *message = std::string("threw an exception: ") + e.what();
    } catch (...) {
      *message = "threw an exception";
    }
    return ACCEL_ERROR_INTERNAL;
  }

  Device* const device_;
  std::mutex mutex_;
  std::condition_variable work_;  // the queue grew, or the stream is stopping
  std::condition_variable idle_;  // the queue drained
  std::deque<Operation> queue_;
  bool running_ = false;  // the worker is running an operation it popped
  bool stopping_ = false;
  uint64_t enqueued_ = 0;
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};
  std::thread worker_;  // last: started once everything above is constructed
};

// --- Stream slots ------------------------------------------------------------------------------------------------

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* /*desc*/,
                            accel_bk_stream_t* out_stream) noexcept {
  // The description's priority is ignored (allowed by accel.h).
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "stream_create", [&] {
    try {
      *out_stream = Wrap(std::make_unique<Stream>(device).release());
    } catch (const std::system_error& e) {
      return device->host->Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                                std::string("cannot start the stream's worker thread: ") + e.what());
    }
    return ACCEL_SUCCESS;
  });
}

void StreamDestroy(accel_bk_stream_t handle) noexcept {
  Stream* stream = Unwrap(handle);
  if (stream->OnWorker()) {
    // Destroying waits for the stream's work, which includes the calling callback: leak rather than deadlock.
    stream->host().Log(ACCEL_LOG_LEVEL_ERROR,
                       "stream_destroy was called from a host callback of the same stream; "
                       "the stream is leaked");
    return;
  }
  std::unique_ptr<Stream> owned(stream);
}

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    Operation op{"copy host to buffer", [src, to = Unwrap(dst)->storage, dst_offset, size](std::string*) {
                   std::memcpy(to->data() + dst_offset, src, size);
                   return ACCEL_SUCCESS;
                 }};
    op.copies.host_to_device_copies = 1;
    op.copies.host_to_device_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    Operation op{"copy buffer to host", [from = Unwrap(src)->storage, src_offset, dst, size](std::string*) {
                   std::memcpy(dst, from->data() + src_offset, size);
                   return ACCEL_SUCCESS;
                 }};
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // One device, so both buffers are local. The core rejected overlapping ranges of one buffer.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    Operation op{"copy buffer",
                 [from = Unwrap(src)->storage, src_offset, to = Unwrap(dst)->storage, dst_offset, size](std::string*) {
                   std::memcpy(to->data() + dst_offset, from->data() + src_offset, size);
                   return ACCEL_SUCCESS;
                 }};
    op.copies.local_copies = 1;
    op.copies.local_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamFillBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_fill_buffer", [&] {
    // The core checked that pattern_size is 1, 2 or 4 and that offset and size are multiples of it.
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill patterns are 1, 2 or 4 bytes");
    }
    std::array<std::byte, 4> bytes{};  // copied now: the caller's pattern is valid for the call only
    std::memcpy(bytes.data(), pattern, pattern_size);
    return stream->Enqueue(
        {"fill buffer", [to = Unwrap(buffer)->storage, offset, size, bytes, pattern_size](std::string*) {
           std::byte* data = to->data() + offset;
           for (uint64_t i = 0; i < size; i += pattern_size) std::memcpy(data + i, bytes.data(), pattern_size);
           return ACCEL_SUCCESS;
         }});
  });
}

accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t handle, accel_host_callback_t callback,
                                         void* user_data) noexcept {
  // Runs exactly once, in stream order: with ACCEL_SUCCESS normally (a negative return becomes the stream's error, a
  // positive one is reported as ACCEL_ERROR_INTERNAL); with the stream's error once it holds one (its return value
  // then ignored), so that it can release what `user_data` owns.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_enqueue_host_callback", [&] {
    return stream->Enqueue(
        {"host callback",
         [callback, user_data](std::string* message) {
           const accel_status_t status = callback(user_data, ACCEL_SUCCESS);
           if (status == ACCEL_SUCCESS) return ACCEL_SUCCESS;
           *message = "returned " + std::to_string(status);
           if (status > 0) {
             *message += ", which is not an error; host callbacks return ACCEL_SUCCESS or an error";
             return ACCEL_ERROR_INTERNAL;
           }
           return status;
         },
         [callback, user_data](accel_status_t error, const std::string&) { (void)callback(user_data, error); }});
  });
}

accel_status_t StreamFreeBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_free_buffer", [&] {
    Buffer* buffer = Unwrap(buffer_handle);
    // The operation holds the storage; it is released when the worker reaches (or skips) it.
    const accel_status_t status =
        stream->Enqueue({"free buffer", [storage = buffer->storage](std::string*) { return ACCEL_SUCCESS; }});
    if (status == ACCEL_SUCCESS) BufferDestroy(buffer_handle);  // on failure the buffer stays as it was
    return status;
  });
}

accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_record_event", [&] {
    Event* event = Unwrap(event_handle);
    auto record = std::make_shared<Record>(event->timing());
    const accel_status_t status = stream->Enqueue(
        {"record event",
         [record](std::string*) {
           record->Complete(ACCEL_SUCCESS, std::string());
           return ACCEL_SUCCESS;
         },
         [record](accel_status_t error, const std::string& message) { record->Complete(error, message); }});
    // The new record replaces the earlier one once it is queued (the worker may already have completed it).
    if (status == ACCEL_SUCCESS) event->set_current(std::move(record));
    return status;
  });
}

accel_status_t StreamWaitEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_wait_event", [&] {
    std::shared_ptr<Record> record = Unwrap(event_handle)->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete, nothing to wait for
    return stream->Enqueue({"wait event", [record](std::string* message) {
                              const Record::Outcome outcome = *record->Wait(std::nullopt);
                              if (outcome.status >= 0) return ACCEL_SUCCESS;
                              *message = "waited for an event that completed with " + std::to_string(outcome.status) +
                                         ": " + outcome.message;
                              return outcome.status;
                            }});
  });
}

accel_status_t StreamQuery(accel_bk_stream_t handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_query", [&] { return stream->Query(); });
}

accel_status_t StreamSynchronize(accel_bk_stream_t handle, uint64_t timeout_ns) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_synchronize", [&] { return stream->Synchronize(timeout_ns); });
}

accel_status_t StreamClearError(accel_bk_stream_t handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_clear_error", [&] { return stream->ClearError(); });
}

accel_status_t StreamGetCopyStatistics(accel_bk_stream_t handle, accel_copy_statistics_t* out_statistics) noexcept {
  // The core passes a zeroed struct of its own size.
  const accel_copy_statistics_t statistics = Unwrap(handle)->CopyStatistics();
  WritePrefix(&statistics, out_statistics, out_statistics->struct_size, sizeof(statistics));
  return ACCEL_SUCCESS;
}

// --- Event slots -------------------------------------------------------------------------------------------------

namespace {

// The status of a completed record, with host->set_error when it is an error.
accel_status_t Report(const Host& host, const Record::Outcome& outcome) {
  if (outcome.status >= 0) return ACCEL_SUCCESS;
  return host.Fail(outcome.status,
                   "the event was recorded after an asynchronous error on its stream: " + outcome.message);
}

}  // namespace

accel_status_t EventCreate(accel_bk_device_t device_handle, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept {
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "event_create", [&] {
    const bool timing = desc != nullptr && ACCEL_TEMPLATE_HAS_FIELD(desc, accel_event_desc_t, flags) &&
                        (desc->flags & ACCEL_EVENT_FLAG_TIMING) != 0;
    *out_event = Wrap(std::make_unique<Event>(device, timing).release());
    return ACCEL_SUCCESS;
  });
}

void EventDestroy(accel_bk_event_t event) noexcept {
  // Pending records live on in the operations that complete or wait on them.
  std::unique_ptr<Event> owned(Unwrap(event));
}

accel_status_t EventQuery(accel_bk_event_t handle) noexcept {
  Event* event = Unwrap(handle);
  return Guard(event->host(), "event_query", [&] {
    const std::shared_ptr<Record> record = event->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete
    const std::optional<Record::Outcome> outcome = record->Peek();
    return outcome ? Report(event->host(), *outcome) : ACCEL_NOT_READY;
  });
}

accel_status_t EventSynchronize(accel_bk_event_t handle, uint64_t timeout_ns) noexcept {
  Event* event = Unwrap(handle);
  return Guard(event->host(), "event_synchronize", [&] {
    const std::shared_ptr<Record> record = event->current();
    if (record == nullptr) return ACCEL_SUCCESS;
    const std::optional<Record::Outcome> outcome = record->Wait(DeadlineAfter(timeout_ns));
    if (!outcome) {
      return event->host().Fail(ACCEL_ERROR_TIMEOUT,
                                "the event did not complete within " + std::to_string(timeout_ns) + " ns");
    }
    return Report(event->host(), *outcome);
  });
}

accel_status_t EventElapsedTime(accel_bk_event_t start_handle, accel_bk_event_t end_handle,
                                uint64_t* out_nanoseconds) noexcept {
  Event* events[2] = {Unwrap(start_handle), Unwrap(end_handle)};
  const Host& host = events[0]->host();
  return Guard(host, "event_elapsed_time", [&] {
    const char* roles[2] = {"start", "end"};
    std::optional<Record::Outcome> outcomes[2];
    for (int i = 0; i < 2; ++i) {
      if (!events[i]->timing()) {
        return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         std::string("'") + roles[i] + "' was created without ACCEL_EVENT_FLAG_TIMING");
      }
      const std::shared_ptr<Record> record = events[i]->current();
      if (record == nullptr) {
        return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION, std::string("'") + roles[i] + "' was never recorded");
      }
      outcomes[i] = record->Peek();
    }
    if (!outcomes[0] || !outcomes[1]) return ACCEL_NOT_READY;
    const uint64_t from = outcomes[0]->timestamp_ns;
    const uint64_t to = outcomes[1]->timestamp_ns;
    *out_nanoseconds = to > from ? to - from : 0;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::template_backend
