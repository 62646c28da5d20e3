// Streams and events of the GPU backends whose runtimes share one model, CUDA's driver API, HIP and Level Zero
// (docs/streams.md): what backends/cuda/stream.cc, backends/hip/stream.cc and backends/level_zero/stream.cc share,
// over a small traits struct of the vendor calls (Level Zero's stream is an immediate command list, its event one of
// its own pool). Part of accel_backend_support (backend_support.h); header-only, since it is templates.
//
// A stream is a vendor stream (non-blocking) plus a worker thread for what cannot run on the calling thread:
//   - device operations (copies, fills, launches, event records, waits on records already enqueued) are enqueued
//     on the vendor stream by the calling thread, under the stream's mutex, when nothing is queued on the worker:
//     an enqueue costs its own runtime call;
//   - host operations (callbacks) and waits on records not yet enqueued go to the worker's FIFO; once it holds
//     anything, later device operations queue behind it and the worker enqueues them, in order.
// Each device operation gets a sequence number; what it uses (buffer storage, modules) is held until a drain says
// the vendor stream passed it: stream_synchronize, a successful stream_query, stream_clear_error, a host operation
// (which needs everything before it complete), and the worker after a stream_free_buffer or once 256 operations are
// outstanding (waiting asleep on an event created with blocking sync). So a buffer destroyed while work uses it
// goes back at the latest when its stream is next synchronized or queried. The stream keeps its asynchronous error
// (sticky, skipping later operations) and its copy statistics. Each stream_record_event makes a new Record with its
// own vendor event; an event points at its latest Record, and a wait holds the Record current when it was enqueued.
//
// What the traits struct T supplies (every call returns the vendor's error code, T::Result):
//   types     Device (with `const HostServices* host`), Result, StreamHandle, EventHandle, Buffer (with
//             `std::shared_ptr<Storage> storage`), Scope (makes a device current on the calling thread for its
//             scope: Scope(const Device*), Result result() const)
//   values    kSuccess, kNotReady, kOutOfMemory; the call names messages give: kMakeCurrent, kEventCreate,
//             kEventQuery, kEventSynchronize, kEventRecord, kStreamCreate, kStreamQuery, kStreamSynchronize,
//             kStreamWaitEvent, kEventElapsedTime
//   calls     EventCreate(device, EventHandle*, bool timing, bool blocking_sync), EventDestroy(device, event),
//             EventQuery(device, event), EventSynchronize(device, event), EventRecord(device, event, stream),
//             EventElapsedTime(device, float* ms, start, end), StreamCreate(device, StreamHandle*) (non-blocking),
//             StreamDestroy(device, stream), StreamQuery(device, stream), StreamSynchronize(device, stream),
//             StreamWaitEvent(device, stream, event)
//   errors    StatusFrom(Result): the Accel status; Failure(device, call, Result): "<call> failed with <name>: <text>"
//   buffers   DestroyBuffer(accel_bk_buffer_t): the backend's buffer_destroy slot
// Calls run with the device current (inside a Scope) unless said otherwise.
//
// Lock order, outermost first: GpuStream::mutex_ > GpuRecord::mutex_. No lock is held while a host callback runs or
// while a thread waits for the device.
#ifndef ACCEL_BACKENDS_COMMON_GPU_STREAM_H_
#define ACCEL_BACKENDS_COMMON_GPU_STREAM_H_

#include <accel_backend.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/prefix.h"
#include "common/recorded_events.h"
#include "common/services.h"

namespace accel::backend {

// One queued operation of a stream. Exactly one of `submit` (device work) and `host` (host work) is set.
//   - `submit` enqueues vendor work on the stream's vendor stream without waiting, with the stream's device
//     current; it runs on the calling thread when nothing is queued ahead of it on the stream's worker, else on
//     the worker, in order; it is skipped (`skipped` called instead) when the stream holds an error.
//   - `host` runs on the worker once every earlier operation completed, always: told `prior`, the stream's error
//     (ACCEL_SUCCESS when none), it does its work or, given an error, only releases what it holds.
//   - `after`, when set, is a record `submit` waits for: the operation goes to the worker while that record is not
//     yet enqueued on its own stream.
// What the functions capture, and `keep`, lives until the work completed on the device.
template <typename StreamHandle, typename Record>
struct GpuOperation {
  const char* what = "";
  std::function<accel_status_t(StreamHandle stream, std::string* message)> submit;
  std::function<accel_status_t(accel_status_t prior, std::string* message)> host;
  std::function<void(accel_status_t status, const std::string& error)> skipped;
  std::shared_ptr<Record> after;
  bool drain_soon = false;  // the worker waits for the device soon after (a free: its memory comes back)
  std::vector<std::shared_ptr<const void>> keep;
  accel_copy_statistics_t copies{};  // added to the stream's statistics once the work completed
};

// Counts a buffer-to-buffer copy of `size` bytes in `*copies`: local when both buffers are on the stream's device,
// peer when they are on two devices with peer access between them, staged otherwise.
inline void CountBufferCopy(bool local, bool peer, uint64_t size, accel_copy_statistics_t* copies) {
  if (local) {
    copies->local_copies = 1;
    copies->local_bytes = size;
  } else if (peer) {
    copies->peer_copies = 1;
    copies->peer_bytes = size;
  } else {
    copies->staged_copies = 1;
    copies->staged_bytes = size;
  }
}

// Sleeps a little while polling the runtime for a bounded wait: 20 us, doubling up to 1 ms.
class PollBackoff {
 public:
  void Sleep() {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    delay_us_ = std::min(delay_us_ * 2, 1000);
  }

 private:
  int delay_us_ = 20;
};

// One recording of an event: queued until its stream enqueues the event record, then pending until the vendor event
// completes; or failed, when its stream held an error and skipped it (or the record itself failed).
// Thread-safe: the state is guarded by its own mutex; no driver call that waits runs under it.
template <typename T>
class GpuRecord {
 public:
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;  // why, when `status` is an error
  };

  // Creates the vendor event on `device`; throws std::runtime_error with the runtime's reason when it cannot.
  using Device = typename T::Device;
  using EventHandle = typename T::EventHandle;
  using Result = typename T::Result;

  GpuRecord(Device* device, bool timing) : device_(device), timing_(timing) {
    typename T::Scope scope(device_);
    const Result r = scope.result() != T::kSuccess ? scope.result()
                                                   : T::EventCreate(device_, &event_, timing, /*blocking_sync=*/false);
    if (r != T::kSuccess) {
      event_ = nullptr;
      throw std::runtime_error(T::Failure(device_, T::kEventCreate, r));
    }
  }
  ~GpuRecord() {
    if (event_ == nullptr) return;
    typename T::Scope scope(device_);
    T::EventDestroy(device_, event_);
  }
  GpuRecord(const GpuRecord&) = delete;
  GpuRecord& operator=(const GpuRecord&) = delete;

  EventHandle event() const { return event_; }
  Device* device() const { return device_; }
  bool timing() const { return timing_; }

  void Submitted() {
    {
      std::lock_guard lock(mutex_);
      if (state_ == State::kQueued) state_ = State::kSubmitted;
    }
    changed_.notify_all();
  }
  // Skipped (its stream held an error): settled, with `status`. Called on the stream's worker too, so it never
  // throws: without the memory to copy `message`, the status stands alone (a waiter must not block forever).
  void Fail(accel_status_t status, const std::string& message) {
    {
      std::lock_guard lock(mutex_);
      if (state_ != State::kQueued) return;
      state_ = State::kFailed;
      outcome_.status = status;
      try {
        outcome_.message = message;
      } catch (...) {
        outcome_.message.clear();
      }
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
  // Blocks until Settled(), copying nothing (the stream's worker, which must not allocate).
  void AwaitSettled() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return state_ != State::kQueued; });
  }

  // The outcome when the record completed, nullopt while it is pending (never waits).
  std::optional<Outcome> Poll() {
    {
      std::lock_guard lock(mutex_);
      if (state_ == State::kFailed) return outcome_;
      if (state_ == State::kQueued) return std::nullopt;
    }
    typename T::Scope scope(device_);
    return FromDriver(T::EventQuery(device_, event_), T::kEventQuery);
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
    typename T::Scope scope(device_);  // event calls run with the event's device current
    if (!deadline) return FromDriver(T::EventSynchronize(device_, event_), T::kEventSynchronize);
    PollBackoff backoff;
    for (;;) {
      auto outcome = FromDriver(T::EventQuery(device_, event_), T::kEventQuery);
      if (outcome || Clock::now() >= *deadline) return outcome;
      backoff.Sleep();
    }
  }

 private:
  enum class State { kQueued, kSubmitted, kFailed };

  std::optional<Outcome> FromDriver(Result r, const char* call) const {
    if (r == T::kNotReady) return std::nullopt;
    Outcome outcome;
    if (r != T::kSuccess) {
      outcome.status = T::StatusFrom(r);
      outcome.message = T::Failure(device_, call, r);
    }
    return outcome;
  }

  Device* const device_;
  const bool timing_;
  EventHandle event_ = nullptr;
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_ = State::kQueued;
  Outcome outcome_;
};

// An event handle: whether it times, and its latest record (NULL: never recorded, which counts as complete).
// Thread-safe: the current record is read and replaced under the event's mutex.
template <typename T>
class GpuEvent {
 public:
  using Device = typename T::Device;
  using Record = GpuRecord<T>;

  GpuEvent(Device* device, bool timing) : device_(device), timing_(timing) {}

  const HostServices& host() const { return *device_->host; }
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

// A vendor stream, the operations queued for its worker, the device work enqueued and not yet known complete, and the
// stream's asynchronous error and copy statistics (the file comment says how they work together).
// Thread-safe: everything is guarded by the stream's mutex, which direct submissions hold while they enqueue (so
// that the vendor stream's order is the stream's); it is never held while a thread waits for the device or a host
// operation runs.
template <typename T>
class GpuStream {
 public:
  // Takes `stream`; throws std::runtime_error when the drain event cannot be made, std::system_error when the
  // worker cannot be started.
  using Device = typename T::Device;
  using StreamHandle = typename T::StreamHandle;
  using EventHandle = typename T::EventHandle;
  using Result = typename T::Result;
  using Operation = GpuOperation<StreamHandle, GpuRecord<T>>;

  GpuStream(Device* device, StreamHandle stream) : device_(device), stream_(stream) {
    typename T::Scope scope(device_);
    const Result r = T::EventCreate(device_, &drain_event_, /*timing=*/false, /*blocking_sync=*/true);
    if (r != T::kSuccess) {
      T::StreamDestroy(device_, stream_);
      throw std::runtime_error(T::Failure(device_, T::kEventCreate, r));
    }
    try {
      worker_ = std::thread([this] { Run(); });
    } catch (...) {  // no thread: the stream was taken, so it and the drain event go here (the destructor never runs)
      T::EventDestroy(device_, drain_event_);
      T::StreamDestroy(device_, stream_);
      throw;
    }
  }
  // Runs what is queued and waits for the device, then joins the worker. Never called on the worker itself.
  ~GpuStream() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_one();
    worker_.join();
    typename T::Scope scope(device_);
    try {
      T::StreamSynchronize(device_, stream_);
    } catch (...) {  // Level Zero's may allocate (a marker); a destructor must not throw
    }
    std::unique_lock lock(mutex_);  // nothing else runs now
    CompleteLocked(lock, submitted_);
    lock.unlock();
    T::EventDestroy(device_, drain_event_);
    T::StreamDestroy(device_, stream_);
  }
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;

  const HostServices& host() const { return *device_->host; }
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
    std::unique_lock lock(mutex_);
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    if (!fifo_.empty() || busy_) return ACCEL_NOT_READY;
    if (submitted_ > completed_) {
      Result r = T::kSuccess;
      {
        typename T::Scope scope(device_);
        r = T::StreamQuery(device_, stream_);
      }
      if (r == T::kNotReady) return ACCEL_NOT_READY;
      const uint64_t target = submitted_;
      if (r != T::kSuccess) {
        SetErrorLocked(T::StatusFrom(r), "device work", T::Failure(device_, T::kStreamQuery, r));
        // The query may have failed before it looked (Level Zero's makes a marker): the work may still run, so wait
        // for the stream before its entries let go of what they hold, as Drain does.
        lock.unlock();
        WaitForStream();
        lock.lock();
      }
      CompleteLocked(lock, target);
    }
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    return ACCEL_SUCCESS;
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
      Result r = T::kSuccess;
      lock.unlock();
      {
        typename T::Scope scope(device_);
        if (!deadline) {
          r = T::StreamSynchronize(device_, stream_);
        } else {
          PollBackoff backoff;
          while ((r = T::StreamQuery(device_, stream_)) == T::kNotReady && Clock::now() < *deadline) {
            backoff.Sleep();
          }
        }
      }
      lock.lock();
      if (r == T::kNotReady) return TimedOutLocked(timeout_ns);
      if (r != T::kSuccess)
        SetErrorLocked(T::StatusFrom(r), "device work", T::Failure(device_, T::kStreamSynchronize, r));
      CompleteLocked(lock, target);
    }
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    return ACCEL_SUCCESS;
  }

  accel_status_t ClearError() {
    std::unique_lock lock(mutex_);
    bool pending = !fifo_.empty() || busy_;
    if (!pending && submitted_ > completed_) {
      Result r = T::kSuccess;
      {
        typename T::Scope scope(device_);
        r = T::StreamQuery(device_, stream_);
      }
      pending = r == T::kNotReady;
      if (!pending && r != T::kSuccess) {
        return host().Fail(T::StatusFrom(r),
                           "cannot clear the stream's error: " + T::Failure(device_, T::kStreamQuery, r) +
                               " (whether its work is done is unknown)");
      }
    }
    if (pending) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "cannot clear the stream's error while work is pending; synchronize first");
    }
    error_ = ACCEL_SUCCESS;
    error_message_.clear();
    CompleteLocked(lock, submitted_);
    return ACCEL_SUCCESS;
  }

  accel_copy_statistics_t CopyStatistics() {
    std::lock_guard lock(mutex_);
    return copies_;
  }

 private:
  // Device work enqueued on the vendor stream, held (with what it uses) until the vendor stream passed it.
  struct Inflight {
    uint64_t number = 0;
    Operation op;
  };

  accel_status_t TimedOutLocked(uint64_t timeout_ns) {
    return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had work pending after " + std::to_string(timeout_ns) +
                                                " ns (" + std::to_string(fifo_.size() + (busy_ ? 1 : 0)) +
                                                " host-side operation(s) queued or running)");
  }

  // Waits for everything enqueued on the vendor stream, with the device current; its failure goes unreported (the
  // caller has one to report already), and so does an exception (Level Zero's may allocate a marker). For the
  // failure paths, before what the work holds is let go.
  void WaitForStream() noexcept {
    try {
      typename T::Scope scope(device_);
      if (scope.result() == T::kSuccess) static_cast<void>(T::StreamSynchronize(device_, stream_));
    } catch (...) {
    }
  }

  // The driver's message for `call` failing with `r`, or none without the memory for it (the worker's failures:
  // it has no caller to report running out of memory to, and the status says enough).
  std::string FailureText(const char* call, Result r) const noexcept {
    try {
      return T::Failure(device_, call, r);
    } catch (...) {
      return std::string();
    }
  }

  // Records the stream's first error (later ones are consequences): `status`, and "<what>: <message>" (a
  // string_view, so that a literal makes no string before the guard: failures met while out of host memory pass one).
  void SetErrorLocked(accel_status_t status, const char* what, std::string_view message) noexcept {
    if (error_ != ACCEL_SUCCESS) return;
    error_ = status;
    try {
      error_message_.assign(what).append(": ").append(message);
    } catch (...) {  // out of host memory: the status stands without its message
      error_message_.clear();
    }
  }

  // Enqueues a device operation on the vendor stream, or skips it when the stream holds an error.
  void SubmitLocked(Operation op) {
    if (error_ != ACCEL_SUCCESS) {
      if (op.skipped) op.skipped(error_, error_message_);
      return;
    }
    std::string message;
    accel_status_t status = ACCEL_SUCCESS;
    {
      typename T::Scope scope(device_);
      if (scope.result() != T::kSuccess) {
        status = T::StatusFrom(scope.result());
        message = FailureText(T::kMakeCurrent, scope.result());
      } else {
        try {
          status = op.submit(stream_, &message);
        } catch (const std::bad_alloc&) {  // out of host memory before anything was enqueued (a submit enqueues last)
          SetErrorLocked(ACCEL_ERROR_RESOURCE_EXHAUSTED, op.what, "out of host memory");
          status = ACCEL_ERROR_RESOURCE_EXHAUSTED;
        } catch (...) {
          SetErrorLocked(ACCEL_ERROR_INTERNAL, op.what, "internal error: the submission threw an exception");
          status = ACCEL_ERROR_INTERNAL;
        }
      }
    }
    if (status < 0) {
      SetErrorLocked(status, op.what, message);
      if (op.skipped) op.skipped(error_, error_message_);
      return;
    }
    Inflight entry{++submitted_, std::move(op)};  // with what its functions captured
    try {
      inflight_.push_back(std::move(entry));
    } catch (...) {
      // Out of host memory for the bookkeeping of work the device has already: it completes here, before what it
      // holds goes, and the stream fails.
      WaitForStream();
      SetErrorLocked(ACCEL_ERROR_RESOURCE_EXHAUSTED, entry.op.what, "out of host memory");
    }
  }

  // Marks the device work up to `number` complete, counts its copies, and drops what it held outside the stream's
  // mutex (a buffer's last reference frees its memory), released by `lock` meanwhile, a few operations at a time.
  // It allocates nothing: host memory running out cannot stop it, and the worker, which has no caller to tell,
  // could not report it. Returns with `lock` held.
  void CompleteLocked(std::unique_lock<std::mutex>& lock, uint64_t number) {
    if (number > completed_) completed_ = number;
    // Every completed copy counts before the lock is first released: a synchronize that finds `completed_` past its
    // work (another thread is releasing it) reads complete statistics.
    for (Inflight& entry : inflight_) {
      if (entry.number > number) break;
      backend::AddCopyStatistics(entry.op.copies, &copies_);
      entry.op.copies = accel_copy_statistics_t{};
    }
    changed_.notify_all();
    std::array<Inflight, 8> taken;
    for (;;) {
      size_t n = 0;
      while (n < taken.size() && !inflight_.empty() && inflight_.front().number <= number) {
        taken[n++] = std::move(inflight_.front());
        inflight_.pop_front();
      }
      if (n == 0) return;
      lock.unlock();
      for (size_t i = 0; i < n; ++i) taken[i] = Inflight();
      lock.lock();
    }
  }

  // Waits, asleep, for the device work enqueued so far; on the worker.
  void Drain(std::unique_lock<std::mutex>& lock) {
    const uint64_t target = submitted_;
    Result r = T::kSuccess;
    {
      typename T::Scope scope(device_);
      r = scope.result() != T::kSuccess ? scope.result() : T::EventRecord(device_, drain_event_, stream_);
    }
    if (r == T::kSuccess) {
      lock.unlock();
      {
        typename T::Scope scope(device_);
        r = T::EventSynchronize(device_, drain_event_);
      }
      lock.lock();
    }
    if (r != T::kSuccess) {
      SetErrorLocked(T::StatusFrom(r), "device work", FailureText(T::kEventSynchronize, r));
      // The work may still run (the record failed, e.g. out of memory): wait for the stream itself before its
      // entries let go of what they hold (a buffer's last reference frees its memory). Should that fail too, the
      // context is lost (CUDA's errors past this point are sticky) and runs nothing more.
      lock.unlock();
      WaitForStream();
      lock.lock();
    }
    CompleteLocked(lock, target);
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
          accel_status_t status = ACCEL_SUCCESS;
          const char* thrown = nullptr;  // no exception may end the worker
          try {
            status = op.host(prior, &message);
          } catch (const std::bad_alloc&) {
            status = ACCEL_ERROR_RESOURCE_EXHAUSTED;
            thrown = "out of host memory";
          } catch (...) {  // the application's callback threw: as the host and Vulkan backends report it
            status = ACCEL_ERROR_INTERNAL;
            thrown = "threw an exception";
          }
          op = Operation();  // what it held goes now
          lock.lock();
          if (thrown != nullptr && prior == ACCEL_SUCCESS) SetErrorLocked(status, "host callback", thrown);
          if (status < 0 && prior == ACCEL_SUCCESS) SetErrorLocked(status, "host callback", message);
        } else {
          if (op.after) {
            lock.unlock();
            op.after->AwaitSettled();  // its own stream enqueues or skips it; `submit` reads which
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
  const StreamHandle stream_;
  EventHandle drain_event_ = nullptr;
  std::mutex mutex_;
  std::condition_variable work_;     // the worker waits here for operations
  std::condition_variable changed_;  // synchronize waits here for the worker
  std::deque<Operation> fifo_;
  bool busy_ = false;
  bool stopping_ = false;
  bool idle_ = false;             // the worker waits for operations (and drains nothing)
  bool drain_requested_ = false;  // a free was enqueued: the worker waits for the device soon
  uint64_t submitted_ = 0;        // device operations enqueued on the vendor stream
  uint64_t completed_ = 0;        // of those, how many are known complete
  std::deque<Inflight> inflight_;
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};
  std::thread worker_;
};

// The slots of streams and events that involve no vendor call beyond the traits' (abi/accel_backend.h documents
// each); a backend's slot functions forward to these. Each runs inside Guard with the object's host services.
template <typename T>
struct GpuStreamSlots {
  using Device = typename T::Device;
  using Stream = GpuStream<T>;
  using Event = GpuEvent<T>;
  using Record = GpuRecord<T>;
  using Operation = typename Stream::Operation;
  using Result = typename T::Result;

  static Stream* ToStream(accel_bk_stream_t handle) { return reinterpret_cast<Stream*>(handle); }
  static Event* ToEvent(accel_bk_event_t handle) { return reinterpret_cast<Event*>(handle); }

  // The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
  static accel_status_t Enqueued(const Device* device, const char* call, Result r, std::string* message) {
    if (r == T::kSuccess) return ACCEL_SUCCESS;
    *message = T::Failure(device, call, r);
    return T::StatusFrom(r);
  }

  static accel_status_t StreamCreate(Device* device, accel_bk_stream_t* out_stream) {
    return Guard(*device->host, "stream_create", [&] {
      typename T::StreamHandle stream = nullptr;
      {
        typename T::Scope scope(device);
        const Result r = scope.result() != T::kSuccess ? scope.result() : T::StreamCreate(device, &stream);
        if (r != T::kSuccess) {
          return device->host->Fail(r == T::kOutOfMemory ? ACCEL_ERROR_RESOURCE_EXHAUSTED : T::StatusFrom(r),
                                    T::Failure(device, T::kStreamCreate, r));
        }
      }
      try {
        // NOLINTNEXTLINE: owned by the handle, freed by StreamDestroy
        *out_stream = reinterpret_cast<accel_bk_stream_t>(new Stream(device, stream));
      } catch (const std::system_error& e) {
        return device->host->Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                                  std::string("cannot start the stream's worker thread: ") + e.what());
      } catch (const std::runtime_error& e) {
        return device->host->Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, e.what());
      }
      return ACCEL_SUCCESS;
    });
  }

  static void StreamDestroy(accel_bk_stream_t stream) noexcept { std::unique_ptr<Stream> owned(ToStream(stream)); }

  // stream_create and event_create as the function table takes them (the stream and event descriptors have nothing
  // these backends use but the event's timing flag).
  static accel_status_t StreamCreateSlot(accel_bk_device_t device, const accel_stream_desc_t*,
                                         accel_bk_stream_t* out_stream) noexcept {
    return StreamCreate(reinterpret_cast<Device*>(device), out_stream);
  }
  static accel_status_t EventCreateSlot(accel_bk_device_t device, const accel_event_desc_t* desc,
                                        accel_bk_event_t* out_event) noexcept {
    return EventCreate(reinterpret_cast<Device*>(device), desc, out_event);
  }

  // Runs exactly once on the worker, in stream order, once the device work before it completed: with ACCEL_SUCCESS
  // normally (a negative return becomes the stream's error, a positive one ACCEL_ERROR_INTERNAL); with the stream's
  // error once it holds one (its return value then ignored).
  static accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t handle, accel_host_callback_t callback,
                                                  void* user_data) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_enqueue_host_callback", [&] {
      Operation op;
      op.what = "host callback";
      op.host = [callback, user_data](accel_status_t prior, std::string* message) {
        if (prior != ACCEL_SUCCESS) {
          (void)callback(user_data, prior);
          return ACCEL_SUCCESS;
        }
        return HostCallbackResult(callback(user_data, ACCEL_SUCCESS), message);
      };
      return stream->Enqueue(std::move(op));
    });
  }

  static accel_status_t StreamFreeBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer_handle) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_free_buffer", [&] {
      // An operation that enqueues nothing and holds the storage until the device work before it completed.
      Operation op;
      op.what = "free buffer";
      op.submit = [](typename T::StreamHandle, std::string*) { return ACCEL_SUCCESS; };
      op.keep.push_back(reinterpret_cast<typename T::Buffer*>(buffer_handle)->storage);
      op.drain_soon = true;  // the memory comes back without waiting for the application's next synchronize
      const accel_status_t status = stream->Enqueue(std::move(op));
      if (status == ACCEL_SUCCESS) T::DestroyBuffer(buffer_handle);  // on failure the buffer stays as it was
      return status;
    });
  }

  static accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_record_event", [&] {
      Event* event = ToEvent(event_handle);
      // The vendor event lives on the recording stream's device (recording it needs that).
      auto record = std::make_shared<Record>(stream->device(), event->timing());
      Device* device = stream->device();
      Operation op;
      op.what = "record event";
      op.submit = [device, record](typename T::StreamHandle s, std::string* message) {
        const accel_status_t status =
            Enqueued(device, T::kEventRecord, T::EventRecord(device, record->event(), s), message);
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

  // On the device: a stream wait on the record's vendor event (of any device) once its stream enqueued it; until
  // then the wait goes to the worker, which blocks until the record is enqueued or skipped. A record skipped after
  // an error passes that error to this stream.
  static accel_status_t StreamWaitEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_wait_event", [&] {
      std::shared_ptr<Record> record = ToEvent(event_handle)->current();
      if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete, nothing to wait for
      Device* device = stream->device();
      Operation op;
      op.what = "wait event";
      op.after = record;
      op.submit = [device, record](typename T::StreamHandle s, std::string* message) {
        if (const auto failed = record->WaitSettled()) {
          *message = std::string("waited for an event that completed with ") + StatusName(failed->status) + ": " +
                     failed->message;
          return failed->status;
        }
        return Enqueued(device, T::kStreamWaitEvent, T::StreamWaitEvent(device, s, record->event()), message);
      };
      op.keep.push_back(record);
      return stream->Enqueue(std::move(op));
    });
  }

  static accel_status_t StreamQuery(accel_bk_stream_t handle) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_query", [&] { return stream->Query(); });
  }

  static accel_status_t StreamSynchronize(accel_bk_stream_t handle, uint64_t timeout_ns) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_synchronize", [&] { return stream->Synchronize(timeout_ns); });
  }

  static accel_status_t StreamClearError(accel_bk_stream_t handle) noexcept {
    Stream* stream = ToStream(handle);
    return Guard(stream->host(), "stream_clear_error", [&] { return stream->ClearError(); });
  }

  static accel_status_t StreamGetCopyStatistics(accel_bk_stream_t handle,
                                                accel_copy_statistics_t* out_statistics) noexcept {
    const accel_copy_statistics_t statistics = ToStream(handle)->CopyStatistics();
    WritePrefix(&statistics, out_statistics, out_statistics->struct_size, sizeof(statistics));
    return ACCEL_SUCCESS;
  }

  static accel_status_t EventCreate(Device* device, const accel_event_desc_t* desc,
                                    accel_bk_event_t* out_event) noexcept {
    return Guard(*device->host, "event_create", [&] {
      const bool timing = desc != nullptr && ACCEL_BACKEND_HAS_FIELD(desc, accel_event_desc_t, flags) &&
                          (desc->flags & ACCEL_EVENT_FLAG_TIMING) != 0;
      *out_event = reinterpret_cast<accel_bk_event_t>(std::make_unique<Event>(device, timing).release());
      return ACCEL_SUCCESS;
    });
  }

  static void EventDestroy(accel_bk_event_t event) noexcept {
    // Pending records live on in the operations that complete or wait on them.
    std::unique_ptr<Event> owned(ToEvent(event));
  }

  static std::optional<typename Record::Outcome> PollRecord(Record& record) { return record.Poll(); }

  static accel_status_t EventQuery(accel_bk_event_t handle) noexcept {
    Event* event = ToEvent(handle);
    return Guard(event->host(), "event_query", [&] { return QueryRecordedEvent(*event, PollRecord); });
  }

  static accel_status_t EventSynchronize(accel_bk_event_t handle, uint64_t timeout_ns) noexcept {
    Event* event = ToEvent(handle);
    return Guard(event->host(), "event_synchronize", [&] { return SynchronizeRecordedEvent(*event, timeout_ns); });
  }

  static accel_status_t EventElapsedTime(accel_bk_event_t start_handle, accel_bk_event_t end_handle,
                                         uint64_t* out_nanoseconds) noexcept {
    Event* const events[2] = {ToEvent(start_handle), ToEvent(end_handle)};
    const HostServices& host = events[0]->host();
    return Guard(host, "event_elapsed_time", [&] {
      std::optional<typename Record::Outcome> outcomes[2];
      const accel_status_t checked = RecordedEventOutcomes(host, events, PollRecord, outcomes);
      if (checked != ACCEL_SUCCESS) return checked;
      for (int i = 0; i < 2; ++i) {
        if (outcomes[i]->status < 0) return ReportRecordOutcome(host, *outcomes[i]);
      }
      const std::shared_ptr<Record> start = events[0]->current();
      const std::shared_ptr<Record> end = events[1]->current();
      float milliseconds = 0;
      typename T::Scope scope(start->device());
      const Result r = T::EventElapsedTime(start->device(), &milliseconds, start->event(), end->event());
      if (r == T::kNotReady) return ACCEL_NOT_READY;
      if (r != T::kSuccess) return host.Fail(T::StatusFrom(r), T::Failure(start->device(), T::kEventElapsedTime, r));
      const double ns = static_cast<double>(milliseconds) * 1e6;
      *out_nanoseconds = ns > 0 ? static_cast<uint64_t>(ns) : 0;
      return ACCEL_SUCCESS;
    });
  }
};

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_GPU_STREAM_H_
