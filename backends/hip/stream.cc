// Streams and events (docs/streams.md). A stream is a hipStream_t (non-blocking, on its device) plus
// a worker thread for what cannot run on the calling thread:
//   - device operations (copies, fills, launches, event records, waits on records already enqueued) are enqueued
//     on the hipStream_t by the calling thread, under the stream's mutex, when nothing is queued on the worker: an
//     enqueue costs its own driver call;
//   - host operations (callbacks) and waits on records not yet enqueued go to the worker's FIFO; once it holds
//     anything, later device operations queue behind it and the worker enqueues them, in order.
// Each device operation gets a sequence number; what it uses (buffer storage, modules) is held until a drain says
// the hipStream_t passed it: stream_synchronize, a successful stream_query, stream_clear_error, a host operation (which
// needs everything before it complete), and the worker after a stream_free_buffer or once 256 operations are
// outstanding (waiting asleep on an event recorded with hipEventBlockingSync). So a buffer destroyed while work
// uses it goes back at the latest when its stream is next synchronized or queried. The stream keeps its asynchronous
// error (sticky, skipping later operations) and its copy statistics. Each stream_record_event makes a new Record with
// its own hipEvent_t; an event points at its latest Record, and a wait holds the Record current when it was enqueued.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/recorded_events.h"
#include "hip_backend.h"

namespace accel::hip {
namespace {

using backend::Clock;
using backend::DeadlineAfter;

// Sleeps a little while polling the driver for a bounded wait: 20 us, doubling up to 1 ms.
class Backoff {
 public:
  void Sleep() {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    delay_us_ = std::min(delay_us_ * 2, 1000);
  }

 private:
  int delay_us_ = 20;
};

}  // namespace

// One recording of an event: queued until its stream enqueues the hipEventRecord, then pending until the hipEvent_t
// completes; or failed, when its stream held an error and skipped it (or the record itself failed).
// Thread-safe: the state is guarded by its own mutex; no driver call that waits runs under it.
class Record {
 public:
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;  // why, when `status` is an error
  };

  // Creates the hipEvent_t on `device`; throws std::runtime_error with the driver's reason when it cannot.
  Record(Device* device, bool timing) : device_(device), timing_(timing) {
    const HipApi& hip = device_->runtime->hip;
    ScopedDevice scope(device_);
    const hipError_t r = scope.result() != hipSuccess
                             ? scope.result()
                             : hip.hipEventCreateWithFlags(&event_, timing ? 0u : hipEventDisableTiming);
    if (r != hipSuccess) {
      event_ = nullptr;
      throw std::runtime_error(HipFailure(hip, "hipEventCreateWithFlags", r));
    }
  }
  ~Record() {
    if (event_ == nullptr) return;
    ScopedDevice scope(device_);
    device_->runtime->hip.hipEventDestroy(event_);
  }
  Record(const Record&) = delete;
  Record& operator=(const Record&) = delete;

  hipEvent_t event() const { return event_; }
  Device* device() const { return device_; }
  bool timing() const { return timing_; }
  const HipApi& hip() const { return device_->runtime->hip; }

  void Submitted() {
    {
      std::lock_guard lock(mutex_);
      if (state_ == State::kQueued) state_ = State::kSubmitted;
    }
    changed_.notify_all();
  }
  void Fail(accel_status_t status, std::string message) {
    {
      std::lock_guard lock(mutex_);
      if (state_ != State::kQueued) return;
      state_ = State::kFailed;
      outcome_.status = status;
      outcome_.message = std::move(message);
    }
    changed_.notify_all();
  }
  // Whether the record's stream enqueued it or skipped it: a wait on it need not block.
  bool Settled() {
    std::lock_guard lock(mutex_);
    return state_ != State::kQueued;
  }
  // Blocks until Settled(); the failure, or nullopt once enqueued.
  std::optional<Outcome> WaitSettled() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return state_ != State::kQueued; });
    if (state_ == State::kFailed) return outcome_;
    return std::nullopt;
  }

  // The outcome when the record completed, nullopt while it is pending (never waits).
  std::optional<Outcome> Poll() {
    {
      std::lock_guard lock(mutex_);
      if (state_ == State::kFailed) return outcome_;
      if (state_ == State::kQueued) return std::nullopt;
    }
    ScopedDevice scope(device_);
    return FromDriver(hip().hipEventQuery(event_), "hipEventQuery");
  }

  // Waits until the record completed or `deadline` passed (nullopt then).
  std::optional<Outcome> Wait(const std::optional<Clock::time_point>& deadline) {
    {
      std::unique_lock lock(mutex_);
      const auto settled = [&] { return state_ != State::kQueued; };
      if (!deadline) {
        changed_.wait(lock, settled);
      } else if (!changed_.wait_until(lock, *deadline, settled)) {
        return std::nullopt;
      }
      if (state_ == State::kFailed) return outcome_;
    }
    ScopedDevice scope(device_);  // event calls run with the event's device current
    if (!deadline) return FromDriver(hip().hipEventSynchronize(event_), "hipEventSynchronize");
    Backoff backoff;
    for (;;) {
      auto outcome = FromDriver(hip().hipEventQuery(event_), "hipEventQuery");
      if (outcome || Clock::now() >= *deadline) return outcome;
      backoff.Sleep();
    }
  }

 private:
  enum class State { kQueued, kSubmitted, kFailed };

  std::optional<Outcome> FromDriver(hipError_t r, const char* call) const {
    if (r == hipErrorNotReady) return std::nullopt;
    Outcome outcome;
    if (r != hipSuccess) {
      outcome.status = StatusFromHip(r);
      outcome.message = HipFailure(hip(), call, r);
    }
    return outcome;
  }

  Device* const device_;
  const bool timing_;
  hipEvent_t event_ = nullptr;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::kQueued;
  Outcome outcome_;
};

// An event handle: whether it times, and its latest record (NULL: never recorded, which counts as complete).
// Thread-safe: the current record is read and replaced under the event's mutex.
class Event {
 public:
  Event(Device* device, bool timing) : device_(device), timing_(timing) {}

  const Host& host() const { return *device_->host; }
  Device* device() const { return device_; }
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

// A hipStream_t, the operations queued for its worker, the device work enqueued and not yet known complete, and the
// stream's asynchronous error and copy statistics (the file comment says how they work together).
// Thread-safe: everything is guarded by the stream's mutex, which direct submissions hold while they enqueue (so
// that the hipStream_t's order is the stream's); it is never held while a thread waits for the device or a host
// operation runs.
class Stream {
 public:
  // Takes `stream`; throws std::runtime_error when the drain event cannot be made, std::system_error when the
  // worker cannot be started.
  Stream(Device* device, hipStream_t stream) : device_(device), stream_(stream) {
    const HipApi& hip = device_->runtime->hip;
    ScopedDevice scope(device_);
    const hipError_t r = hip.hipEventCreateWithFlags(&drain_event_, hipEventBlockingSync | hipEventDisableTiming);
    if (r != hipSuccess) {
      hip.hipStreamDestroy(stream_);
      throw std::runtime_error(HipFailure(hip, "hipEventCreateWithFlags", r));
    }
    worker_ = std::thread([this] { Run(); });
  }
  // Runs what is queued and waits for the device, then joins the worker. Never called on the worker itself.
  ~Stream() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    worker_.join();
    ScopedDevice scope(device_);
    const HipApi& hip = device_->runtime->hip;
    hip.hipStreamSynchronize(stream_);
    Release(TakeCompletedLocked(submitted_));  // nothing else runs now
    hip.hipEventDestroy(drain_event_);
    hip.hipStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const Host& host() const { return *device_->host; }
  Device* device() const { return device_; }
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

  // Outstanding device operations past which the worker waits for the device on its own.
  static constexpr size_t kDrainAfter = 256;

  accel_status_t Enqueue(Operation op) {
    std::unique_lock lock(mutex_);
    if (op.host || !fifo_.empty() || busy_ || (op.after && !op.after->Settled())) {
      fifo_.push_back(std::move(op));
      lock.unlock();
      work_.notify_one();
      return ACCEL_SUCCESS;
    }
    if (op.drain_soon) drain_requested_ = true;
    SubmitLocked(std::move(op));
    // The worker waits for the device only when asked to (a free) or when much is outstanding: a launch or copy
    // followed by the application's own synchronize costs no wake-up.
    const bool wake = idle_ && submitted_ > completed_ && (drain_requested_ || inflight_.size() >= kDrainAfter);
    lock.unlock();
    if (wake) work_.notify_one();
    return ACCEL_SUCCESS;
  }

  accel_status_t Query() {
    std::vector<Inflight> done;
    accel_status_t status = ACCEL_SUCCESS;
    {
      std::lock_guard lock(mutex_);
      if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
      if (!fifo_.empty() || busy_) return ACCEL_NOT_READY;
      if (submitted_ > completed_) {
        ScopedDevice scope(device_);
        const hipError_t r = device_->runtime->hip.hipStreamQuery(stream_);
        if (r == hipErrorNotReady) return ACCEL_NOT_READY;
        if (r != hipSuccess) SetErrorLocked(StatusFromHip(r), "device work", HipFailure(hip(), "hipStreamQuery", r));
        done = TakeCompletedLocked(submitted_);
      }
      if (error_ != ACCEL_SUCCESS) status = host().Fail(error_, error_message_);
    }
    Release(std::move(done));
    return status;
  }

  accel_status_t Synchronize(uint64_t timeout_ns) {
    if (OnWorker()) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "called from a host callback of the same stream, which would wait for itself");
    }
    const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout_ns);
    std::unique_lock lock(mutex_);
    const auto worker_idle = [&] { return fifo_.empty() && !busy_; };
    if (!deadline) {
      changed_.wait(lock, worker_idle);
    } else if (!changed_.wait_until(lock, *deadline, worker_idle)) {
      return TimedOutLocked(timeout_ns);
    }
    const uint64_t target = submitted_;
    if (target > completed_) {
      hipError_t r = hipSuccess;
      lock.unlock();
      {
        ScopedDevice scope(device_);
        if (!deadline) {
          r = hip().hipStreamSynchronize(stream_);
        } else {
          Backoff backoff;
          while ((r = hip().hipStreamQuery(stream_)) == hipErrorNotReady && Clock::now() < *deadline) {
            backoff.Sleep();
          }
        }
      }
      lock.lock();
      if (r == hipErrorNotReady) return TimedOutLocked(timeout_ns);
      if (r != hipSuccess)
        SetErrorLocked(StatusFromHip(r), "device work", HipFailure(hip(), "hipStreamSynchronize", r));
      std::vector<Inflight> done = TakeCompletedLocked(target);
      lock.unlock();
      Release(std::move(done));
      lock.lock();
    }
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    return ACCEL_SUCCESS;
  }

  accel_status_t ClearError() {
    std::vector<Inflight> done;
    {
      std::lock_guard lock(mutex_);
      bool pending = !fifo_.empty() || busy_;
      if (!pending && submitted_ > completed_) {
        ScopedDevice scope(device_);
        const hipError_t r = hip().hipStreamQuery(stream_);
        pending = r == hipErrorNotReady;
        if (!pending) done = TakeCompletedLocked(submitted_);
      }
      if (pending) {
        return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                           "cannot clear the stream's error while work is pending; synchronize first");
      }
      error_ = ACCEL_SUCCESS;
      error_message_.clear();
    }
    Release(std::move(done));
    return ACCEL_SUCCESS;
  }

  accel_copy_statistics_t CopyStatistics() {
    std::lock_guard lock(mutex_);
    return copies_;
  }

 private:
  // Device work enqueued on the hipStream_t, held (with what it uses) until the hipStream_t passed it.
  struct Inflight {
    uint64_t number = 0;
    Operation op;
  };

  const HipApi& hip() const { return device_->runtime->hip; }

  accel_status_t TimedOutLocked(uint64_t timeout_ns) {
    return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had work pending after " + std::to_string(timeout_ns) +
                                                " ns (" + std::to_string(fifo_.size() + (busy_ ? 1 : 0)) +
                                                " host-side operation(s) queued or running)");
  }

  // Records the stream's first error (later ones are consequences).
  void SetErrorLocked(accel_status_t status, const char* what, const std::string& message) {
    if (error_ != ACCEL_SUCCESS) return;
    error_ = status;
    error_message_ = std::string(what) + ": " + message;
  }

  // Enqueues a device operation on the hipStream_t, or skips it when the stream holds an error.
  void SubmitLocked(Operation op) {
    if (error_ != ACCEL_SUCCESS) {
      if (op.skipped) op.skipped(error_, error_message_);
      return;
    }
    std::string message;
    accel_status_t status = ACCEL_SUCCESS;
    {
      ScopedDevice scope(device_);
      if (scope.result() != hipSuccess) {
        status = StatusFromHip(scope.result());
        message = HipFailure(hip(), "hipSetDevice", scope.result());
      } else {
        status = op.submit(stream_, &message);
      }
    }
    if (status < 0) {
      SetErrorLocked(status, op.what, message);
      if (op.skipped) op.skipped(error_, error_message_);
      return;
    }
    inflight_.push_back(Inflight{++submitted_, std::move(op)});  // with what its functions captured
  }

  // Marks the device work up to `number` complete and takes what it held; its copies count from now on.
  std::vector<Inflight> TakeCompletedLocked(uint64_t number) {
    std::vector<Inflight> done;
    if (number > completed_) completed_ = number;
    while (!inflight_.empty() && inflight_.front().number <= number) {
      backend::AddCopyStatistics(inflight_.front().op.copies, &copies_);
      done.push_back(std::move(inflight_.front()));
      inflight_.pop_front();
    }
    changed_.notify_all();
    return done;
  }

  // Drops what completed work held, outside the stream's mutex (a buffer's last reference frees its memory).
  static void Release(std::vector<Inflight> done) { done.clear(); }

  // Waits, asleep, for the device work enqueued so far; on the worker.
  void Drain(std::unique_lock<std::mutex>& lock) {
    const uint64_t target = submitted_;
    hipError_t r = hipSuccess;
    {
      ScopedDevice scope(device_);
      r = scope.result() != hipSuccess ? scope.result() : hip().hipEventRecord(drain_event_, stream_);
    }
    if (r == hipSuccess) {
      lock.unlock();
      {
        ScopedDevice scope(device_);
        r = hip().hipEventSynchronize(drain_event_);
      }
      lock.lock();
    }
    if (r != hipSuccess) SetErrorLocked(StatusFromHip(r), "device work", HipFailure(hip(), "hipEventSynchronize", r));
    std::vector<Inflight> done = TakeCompletedLocked(target);
    lock.unlock();
    Release(std::move(done));
    lock.lock();
  }

  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!fifo_.empty()) {
        Operation op = std::move(fifo_.front());
        fifo_.pop_front();
        busy_ = true;
        if (op.host) {
          if (submitted_ > completed_) Drain(lock);  // everything before it completed
          const accel_status_t prior = error_;
          std::string message;
          lock.unlock();
          const accel_status_t status = op.host(prior, &message);
          op = Operation();  // what it held goes now
          lock.lock();
          if (status < 0 && prior == ACCEL_SUCCESS) SetErrorLocked(status, "host callback", message);
        } else {
          if (op.after) {
            lock.unlock();
            (void)op.after->WaitSettled();  // its own stream enqueues or skips it; `submit` reads which
            lock.lock();
          }
          if (op.drain_soon) drain_requested_ = true;
          SubmitLocked(std::move(op));
        }
        busy_ = false;
        changed_.notify_all();
        continue;
      }
      if (submitted_ > completed_ && (stopping_ || drain_requested_ || inflight_.size() >= kDrainAfter)) {
        drain_requested_ = false;
        Drain(lock);
        continue;
      }
      if (stopping_) return;
      idle_ = true;
      work_.wait(lock);
      idle_ = false;
    }
  }

  Device* const device_;
  const hipStream_t stream_;
  hipEvent_t drain_event_ = nullptr;
  std::mutex mutex_;
  std::condition_variable work_;     // the worker waits here for operations
  std::condition_variable changed_;  // synchronize waits here for the worker
  std::deque<Operation> fifo_;
  bool busy_ = false;
  bool stopping_ = false;
  bool idle_ = false;             // the worker waits for operations (and drains nothing)
  bool drain_requested_ = false;  // a free was enqueued: the worker waits for the device soon
  uint64_t submitted_ = 0;        // device operations enqueued on the hipStream_t
  uint64_t completed_ = 0;        // of those, how many are known complete
  std::deque<Inflight> inflight_;
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};
  std::thread worker_;
};

accel_status_t EnqueueOperation(Stream* stream, Operation op) { return stream->Enqueue(std::move(op)); }

Device* StreamDevice(Stream* stream) { return stream->device(); }

// --- Stream slots ------------------------------------------------------------------------------------------------

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t*,
                            accel_bk_stream_t* out_stream) noexcept {
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "stream_create", [&] {
    const HipApi& hip = device->runtime->hip;
    hipStream_t stream = nullptr;
    {
      ScopedDevice scope(device);
      const hipError_t r =
          scope.result() != hipSuccess ? scope.result() : hip.hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
      if (r != hipSuccess) {
        return device->host->Fail(r == hipErrorOutOfMemory ? ACCEL_ERROR_RESOURCE_EXHAUSTED : StatusFromHip(r),
                                  HipFailure(hip, "hipStreamCreateWithFlags", r));
      }
    }
    try {
      *out_stream = Wrap(new Stream(device, stream));  // NOLINT: owned by the handle, freed by StreamDestroy
    } catch (const std::system_error& e) {
      return device->host->Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                                std::string("cannot start the stream's worker thread: ") + e.what());
    } catch (const std::runtime_error& e) {
      return device->host->Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, e.what());
    }
    return ACCEL_SUCCESS;
  });
}

void StreamDestroy(accel_bk_stream_t stream) noexcept { std::unique_ptr<Stream> owned(Unwrap(stream)); }

namespace {

// The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
accel_status_t Enqueued(const HipApi& hip, const char* call, hipError_t r, std::string* message) {
  if (r == hipSuccess) return ACCEL_SUCCESS;
  *message = HipFailure(hip, call, r);
  return StatusFromHip(r);
}

}  // namespace

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "copy host to buffer";
    op.submit = [hip, address = to->address() + dst_offset, src, size](hipStream_t s, std::string* message) {
      return Enqueued(*hip, "hipMemcpyHtoDAsync",
                      hip->hipMemcpyHtoDAsync(Ptr(address), const_cast<void*>(src), static_cast<size_t>(size), s),
                      message);
    };
    op.keep.push_back(std::move(to));
    op.copies.host_to_device_copies = 1;
    op.copies.host_to_device_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "copy buffer to host";
    op.submit = [hip, address = from->address() + src_offset, dst, size](hipStream_t s, std::string* message) {
      return Enqueued(*hip, "hipMemcpyDtoHAsync",
                      hip->hipMemcpyDtoHAsync(dst, Ptr(address), static_cast<size_t>(size), s), message);
    };
    op.keep.push_back(std::move(from));
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // One device: hipMemcpyDtoDAsync. Two devices: hipMemcpyPeerAsync, which goes peer to peer where access is enabled
  // (backend.cc) and is staged by the runtime otherwise; counted as the link between them declares.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Device* here = stream->device();
    const HipApi* hip = &here->runtime->hip;
    const DeviceAddress from_address = from->address() + src_offset;
    const DeviceAddress to_address = to->address() + dst_offset;
    Operation op;
    op.what = "copy buffer";
    if (from->device() == to->device()) {
      op.submit = [hip, from_address, to_address, size](hipStream_t s, std::string* message) {
        return Enqueued(*hip, "hipMemcpyDtoDAsync",
                        hip->hipMemcpyDtoDAsync(Ptr(to_address), Ptr(from_address), static_cast<size_t>(size), s),
                        message);
      };
    } else {
      const int from_ordinal = from->device()->ordinal;
      const int to_ordinal = to->device()->ordinal;
      op.submit = [hip, from_address, to_address, from_ordinal, to_ordinal, size](hipStream_t s, std::string* message) {
        return Enqueued(*hip, "hipMemcpyPeerAsync",
                        hip->hipMemcpyPeerAsync(Ptr(to_address), to_ordinal, Ptr(from_address), from_ordinal,
                                                static_cast<size_t>(size), s),
                        message);
      };
    }
    if (from->device() == here && to->device() == here) {
      op.copies.local_copies = 1;
      op.copies.local_bytes = size;
    } else if (from->device() != to->device() && LinkBetween(*from->device(), *to->device()).peer_access != 0) {
      op.copies.peer_copies = 1;
      op.copies.peer_bytes = size;
    } else {
      op.copies.staged_copies = 1;
      op.copies.staged_bytes = size;
    }
    op.keep.push_back(std::move(from));
    op.keep.push_back(std::move(to));
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamFillBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_fill_buffer", [&] {
    // The core checked that pattern_size is 1, 2 or 4 and that offset and size are multiples of it; buffers start
    // 256-byte aligned, so the address is aligned for hipMemsetD16/D32.
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill patterns are 1, 2 or 4 bytes");
    }
    uint32_t value = 0;  // copied now: the caller's pattern is valid for the call only
    std::memcpy(&value, pattern, pattern_size);
    std::shared_ptr<Storage> to = Unwrap(buffer)->storage;
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "fill buffer";
    op.submit = [hip, address = to->address() + offset, count = static_cast<size_t>(size / pattern_size), value,
                 pattern_size](hipStream_t s, std::string* message) {
      switch (pattern_size) {
        case 1:
          return Enqueued(*hip, "hipMemsetD8Async",
                          hip->hipMemsetD8Async(Ptr(address), static_cast<unsigned char>(value), count, s), message);
        case 2:
          return Enqueued(*hip, "hipMemsetD16Async",
                          hip->hipMemsetD16Async(Ptr(address), static_cast<unsigned short>(value), count, s),  // NOLINT
                          message);
        default:
          return Enqueued(*hip, "hipMemsetD32Async",
                          hip->hipMemsetD32Async(Ptr(address), static_cast<int>(value), count, s), message);
      }
    };
    op.keep.push_back(std::move(to));
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t handle, accel_host_callback_t callback,
                                         void* user_data) noexcept {
  // Runs exactly once on the worker, in stream order, once the device work before it completed: with ACCEL_SUCCESS
  // normally (a negative return becomes the stream's error, a positive one ACCEL_ERROR_INTERNAL); with the stream's
  // error once it holds one (its return value then ignored).
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_enqueue_host_callback", [&] {
    Operation op;
    op.what = "host callback";
    op.host = [callback, user_data](accel_status_t prior, std::string* message) {
      if (prior != ACCEL_SUCCESS) {
        (void)callback(user_data, prior);
        return ACCEL_SUCCESS;
      }
      return backend::HostCallbackResult(callback(user_data, ACCEL_SUCCESS), message);
    };
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamFreeBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_free_buffer", [&] {
    // An operation that enqueues nothing and holds the storage until the device work before it completed.
    Operation op;
    op.what = "free buffer";
    op.submit = [](hipStream_t, std::string*) { return ACCEL_SUCCESS; };
    op.keep.push_back(Unwrap(buffer_handle)->storage);
    op.drain_soon = true;  // the memory comes back without waiting for the application's next synchronize
    const accel_status_t status = stream->Enqueue(std::move(op));
    if (status == ACCEL_SUCCESS) BufferDestroy(buffer_handle);  // on failure the buffer stays as it was
    return status;
  });
}

accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_record_event", [&] {
    Event* event = Unwrap(event_handle);
    // The hipEvent_t lives on the recording stream's device (hipEventRecord needs that).
    auto record = std::make_shared<Record>(stream->device(), event->timing());
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "record event";
    op.submit = [hip, record](hipStream_t s, std::string* message) {
      const accel_status_t status = Enqueued(*hip, "hipEventRecord", hip->hipEventRecord(record->event(), s), message);
      if (status == ACCEL_SUCCESS) record->Submitted();
      return status;
    };
    op.skipped = [record](accel_status_t status, const std::string& error) { record->Fail(status, error); };
    const accel_status_t status = stream->Enqueue(std::move(op));
    // The new record replaces the earlier one once it is queued (it may already be complete).
    if (status == ACCEL_SUCCESS) event->set_current(std::move(record));
    return status;
  });
}

accel_status_t StreamWaitEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  // On the device: hipStreamWaitEvent on the record's hipEvent_t (of any device) once its stream enqueued it; until
  // then the wait goes to the worker, which blocks until the record is enqueued or skipped. A record skipped after
  // an error passes that error to this stream.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_wait_event", [&] {
    std::shared_ptr<Record> record = Unwrap(event_handle)->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete, nothing to wait for
    const HipApi* hip = &stream->device()->runtime->hip;
    Operation op;
    op.what = "wait event";
    op.after = record;
    op.submit = [hip, record](hipStream_t s, std::string* message) {
      if (const auto failed = record->WaitSettled()) {
        *message = std::string("waited for an event that completed with ") + StatusName(failed->status) + ": " +
                   failed->message;
        return failed->status;
      }
      return Enqueued(*hip, "hipStreamWaitEvent", hip->hipStreamWaitEvent(s, record->event(), 0), message);
    };
    op.keep.push_back(record);
    return stream->Enqueue(std::move(op));
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
  const accel_copy_statistics_t statistics = Unwrap(handle)->CopyStatistics();
  WritePrefix(&statistics, out_statistics, out_statistics->struct_size, sizeof(statistics));
  return ACCEL_SUCCESS;
}

// --- Event slots -------------------------------------------------------------------------------------------------

namespace {

std::optional<Record::Outcome> PollRecord(Record& record) { return record.Poll(); }

}  // namespace

accel_status_t EventCreate(accel_bk_device_t device_handle, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept {
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "event_create", [&] {
    const bool timing = desc != nullptr && ACCEL_BACKEND_HAS_FIELD(desc, accel_event_desc_t, flags) &&
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
  return Guard(event->host(), "event_query", [&] { return backend::QueryRecordedEvent(*event, PollRecord); });
}

accel_status_t EventSynchronize(accel_bk_event_t handle, uint64_t timeout_ns) noexcept {
  Event* event = Unwrap(handle);
  return Guard(event->host(), "event_synchronize",
               [&] { return backend::SynchronizeRecordedEvent(*event, timeout_ns); });
}

accel_status_t EventElapsedTime(accel_bk_event_t start_handle, accel_bk_event_t end_handle,
                                uint64_t* out_nanoseconds) noexcept {
  Event* const events[2] = {Unwrap(start_handle), Unwrap(end_handle)};
  const Host& host = events[0]->host();
  return Guard(host, "event_elapsed_time", [&] {
    std::optional<Record::Outcome> outcomes[2];
    const accel_status_t checked = backend::RecordedEventOutcomes(host, events, PollRecord, outcomes);
    if (checked != ACCEL_SUCCESS) return checked;
    for (int i = 0; i < 2; ++i) {
      if (outcomes[i]->status < 0) return backend::ReportRecordOutcome(host, *outcomes[i]);
    }
    const std::shared_ptr<Record> start = events[0]->current();
    const std::shared_ptr<Record> end = events[1]->current();
    float milliseconds = 0;
    ScopedDevice scope(start->device());
    const hipError_t r = start->hip().hipEventElapsedTime(&milliseconds, start->event(), end->event());
    if (r == hipErrorNotReady) return ACCEL_NOT_READY;
    if (r != hipSuccess) return host.Fail(StatusFromHip(r), HipFailure(start->hip(), "hipEventElapsedTime", r));
    const double ns = static_cast<double>(milliseconds) * 1e6;
    *out_nanoseconds = ns > 0 ? static_cast<uint64_t>(ns) : 0;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::hip
