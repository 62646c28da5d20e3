// Streams and events (docs/streams.md). A stream is an in-order OpenCL command
// queue with profiling enabled, plus a worker thread for what cannot run on
// the calling thread:
//   - device operations (copies, fills, launches, event records as markers,
//     waits as barriers on another stream's marker) are enqueued directly by
//     the calling thread, under the stream's mutex, without events and without
//     a flush: an enqueue costs only its own OpenCL calls;
//   - host operations (callbacks, copies between platforms) and waits for
//     records not yet enqueued go to the worker's FIFO; once the FIFO holds
//     anything, later device operations queue behind it and the worker
//     enqueues them, in order, when it reaches them.
// Enqueued operations are "submitted": they hold what they use (buffers,
// bounce buffers, records) until a drain, one clFinish on the queue, completes
// them all in order. A prepared launch enqueued right behind another (the
// operation submitted last, still submitted) runs on that operation: one more
// clEnqueueNDRangeKernel, a reference at most, no operation of its own. A
// drain runs in stream_synchronize (on the caller), before a host operation
// (on the worker), and on the worker when asked to make progress without
// blocking the caller (stream_query, a finite timeout, an error). The stream
// keeps its asynchronous error (sticky, skipping later operations) and its
// copy statistics. Each stream_record_event makes a new
// Record: a marker with an event, flushed so that it progresses on its own; an
// event points at its latest Record, and a wait holds the Record current when
// it was enqueued.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/recorded_events.h"
#include "common/ring.h"
#include "opencl_backend.h"

namespace accel::opencl {
namespace {

using backend::Clock;
using backend::DeadlineAfter;

uint64_t HostNowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// The status of an enqueue: ACCEL_SUCCESS, or its failure with `*message` naming the call.
accel_status_t Enqueued(const char* call, cl_int err, std::string* message) {
  if (err == CL_SUCCESS) return ACCEL_SUCCESS;
  *message = ClFailure(call, err);
  return StatusFromCl(err);
}

// Enqueues the transfer's one command on the submission's queue (non-blocking, no event).
accel_status_t SubmitTransfer(const Transfer& t, Submission& s, std::string* message) {
  const ClApi& cl = s.runtime->cl;
  const auto size = static_cast<size_t>(t.size);
  switch (t.kind) {
    case Transfer::Kind::kWrite:
      return Enqueued("clEnqueueWriteBuffer",
                      cl.EnqueueWriteBuffer(s.queue, t.to->mem(), CL_FALSE, static_cast<size_t>(t.dst_offset), size,
                                            t.src, 0, nullptr, nullptr),
                      message);
    case Transfer::Kind::kRead:
      return Enqueued("clEnqueueReadBuffer",
                      cl.EnqueueReadBuffer(s.queue, t.from->mem(), CL_FALSE, static_cast<size_t>(t.src_offset), size,
                                           t.dst, 0, nullptr, nullptr),
                      message);
    case Transfer::Kind::kCopy:
      return Enqueued("clEnqueueCopyBuffer",
                      cl.EnqueueCopyBuffer(s.queue, t.from->mem(), t.to->mem(), static_cast<size_t>(t.src_offset),
                                           static_cast<size_t>(t.dst_offset), size, 0, nullptr, nullptr),
                      message);
    case Transfer::Kind::kFill:
      return Enqueued("clEnqueueFillBuffer",
                      cl.EnqueueFillBuffer(s.queue, t.to->mem(), t.pattern.data(), t.pattern_size,
                                           static_cast<size_t>(t.dst_offset), size, 0, nullptr, nullptr),
                      message);
    case Transfer::Kind::kNone: break;
  }
  *message = "an empty transfer";
  return ACCEL_ERROR_INTERNAL;
}

}  // namespace

// One recording of an event: pending until it completes, then complete with a status and, for a timing event,
// timestamps. Once the recording stream enqueued its marker, the record holds it (until the record goes), so that
// streams of the same cl_context wait for it on the device and event_query / event_synchronize look at the marker
// themselves. Whoever first learns that the marker completed completes the record: the recording stream's drain,
// event_query, event_synchronize, a stream that waited for it, or the marker's callback (registered only for a
// finite event_synchronize). A record skipped after an error completes with that error.
// Thread-safe: guarded by its own mutex; completing wakes every waiter. No OpenCL call that waits runs under it.
class Record : public std::enable_shared_from_this<Record> {
 public:
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;     // the stream's error message when `status` is an error
    uint64_t device_ns = 0;  // the marker's CL_PROFILING_COMMAND_END; 0 when unknown
    uint64_t host_ns = 0;    // the host's steady clock when the record completed
  };

  Record(Runtime* runtime, bool timing) : runtime_(runtime), timing_(timing) {}

  bool timing() const { return timing_; }

  // The recording stream enqueued (and flushed) its marker in `context`; the record owns it from now on.
  void Submitted(ClEvent marker, cl_context context) {
    {
      std::lock_guard lock(mutex_);
      marker_ = std::move(marker);
      context_ = context;
    }
    changed_.notify_all();
  }

  // Completes with an error (the record was skipped, or its stream's drain failed). First completion wins.
  void Fail(accel_status_t status, std::string message) {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      outcome_.status = status;
      outcome_.message = std::move(message);
      outcome_.host_ns = HostNowNs();
      done_ = true;
    }
    changed_.notify_all();
  }

  // The marker completed with `execution_status` (CL_COMPLETE, or a negative error). First completion wins.
  void MarkerCompleted(cl_int execution_status) {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      outcome_.host_ns = HostNowNs();
      if (execution_status < 0) {
        outcome_.status = ACCEL_ERROR_INTERNAL;
        outcome_.message = "the commands before the event failed on the device with " + ClErrorName(execution_status);
      } else if (timing_ && marker_) {
        cl_ulong end = 0;
        if (runtime_->cl.GetEventProfilingInfo(marker_.get(), CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr) ==
            CL_SUCCESS) {
          outcome_.device_ns = end;
        }
      }
      done_ = true;
    }
    changed_.notify_all();
  }

  std::optional<Outcome> Peek() {
    std::lock_guard lock(mutex_);
    if (!done_) return std::nullopt;
    return outcome_;
  }

  // Peek, and when the marker is enqueued, ask OpenCL whether it completed (no wait).
  std::optional<Outcome> Poll() {
    cl_event marker = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (done_) return outcome_;
      if (!marker_) return std::nullopt;
      marker = marker_.get();  // lives as long as the record
    }
    cl_int status = CL_QUEUED;
    const cl_int err =
        runtime_->cl.GetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
    if (err != CL_SUCCESS) status = err;
    if (status > CL_COMPLETE) return std::nullopt;
    MarkerCompleted(status);
    return Peek();
  }

  // Waits until the record completed, or until `deadline`: on the marker once it is enqueued (clWaitForEvents when
  // unbounded, its completion callback when bounded; polling its status every millisecond when the callback could not
  // be registered), on the condition variable before.
  std::optional<Outcome> Wait(const std::optional<Clock::time_point>& deadline) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (done_) return outcome_;
      if (marker_ && !deadline) {
        cl_event marker = marker_.get();
        lock.unlock();
        runtime_->cl.WaitForEvents(1, &marker);
        cl_int status = CL_COMPLETE;
        const cl_int err =
            runtime_->cl.GetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
        MarkerCompleted(err != CL_SUCCESS ? err : std::min<cl_int>(status, CL_COMPLETE));
        lock.lock();
        continue;
      }
      if (marker_ && !callback_registered_) {
        callback_registered_ = true;
        cl_event marker = marker_.get();
        auto* self = new std::weak_ptr<Record>(weak_from_this());
        lock.unlock();  // the callback may run at once, on this thread
        const bool registered =
            runtime_->cl.SetEventCallback(marker, CL_COMPLETE, &Record::OnMarker, self) == CL_SUCCESS;
        lock.lock();
        if (!registered) {
          // No callback will come (OpenCL out of host memory, say) while the marker may still be running: every
          // bounded waiter, this one and those already waiting, polls it instead.
          delete self;
          polling_ = true;
          changed_.notify_all();
        }
        continue;
      }
      if (!deadline) {
        changed_.wait(lock);
      } else if (polling_ && marker_) {
        lock.unlock();
        const bool complete = Poll().has_value();
        lock.lock();
        if (complete || done_) continue;
        if (Clock::now() >= *deadline) return std::nullopt;
        changed_.wait_until(lock, std::min(*deadline, Clock::now() + std::chrono::milliseconds(1)));
      } else if (changed_.wait_until(lock, *deadline) == std::cv_status::timeout && !done_) {
        return std::nullopt;
      }
    }
  }

  // Whether a stream of `context` can wait for the record without blocking: it is complete, or its marker is
  // enqueued in that context.
  bool ReadyFor(cl_context context) {
    std::lock_guard lock(mutex_);
    return done_ || (marker_ && context_ == context);
  }

  // Blocks until the marker is enqueued; returns it (owned by the record) when it is in `context`, for a barrier.
  // A marker of another cl_context, which no command of `context` can wait for, is waited for here, on the host
  // (clWaitForEvents; nobody else need ever look at the record): NULL once the record is complete, as for a record
  // that was complete already.
  cl_event MarkerFor(cl_context context) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return done_ || marker_; });
      if (done_) return nullptr;
      if (context_ == context) return marker_.get();
    }
    (void)Wait(std::nullopt);
    return nullptr;
  }

 private:
  static void CL_CALLBACK OnMarker(cl_event, cl_int status, void* user_data) {
    std::unique_ptr<std::weak_ptr<Record>> self(static_cast<std::weak_ptr<Record>*>(user_data));
    if (std::shared_ptr<Record> record = self->lock()) record->MarkerCompleted(std::min<cl_int>(status, CL_COMPLETE));
  }

  Runtime* const runtime_;
  const bool timing_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  bool callback_registered_ = false;
  bool polling_ = false;  // the completion callback could not be registered: bounded waits poll the marker
  Outcome outcome_;
  ClEvent marker_;
  cl_context context_ = nullptr;
};

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

// An in-order command queue, the operations submitted to it and not yet completed, and the worker for host work
// (the file comment says how). After an operation fails the stream keeps its status and message and skips later
// operations: records still complete, carrying the error, and host callbacks still run once, told the error.
// Thread-safe: everything is guarded by the stream's mutex, which direct submissions hold while they enqueue (so
// that the queue's order is the stream's); it is never held while the stream waits (clFinish) or a host operation
// or a blocking wait runs. Only one thread submits at a time: callers while the worker is idle, the worker while it
// is busy.
class Stream {
 public:
  // Starts the worker; throws std::system_error when the thread cannot be created.
  Stream(Device* device, ClQueue queue)
      : device_(device),
        queue_(std::move(queue)),
        submitted_(ReservedPending()),
        batch_(ReservedPending()),
        spare_launches_(Reserved(kSpareLaunches)),
        recycled_(Reserved(kSpareLaunches)),
        worker_([this] { Run(); }) {}
  // Runs what is queued and completes it, then joins the worker. Never called on the worker itself.
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
  Device* device() const { return device_; }
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

  accel_status_t Enqueue(Operation&& op) {
    std::unique_lock lock(mutex_);
    return EnqueueLocked(lock, std::move(op));
  }

  // Enqueues a kernel launch that `fill` copies into a launch the stream recycles, taken in the same lock round trip
  // as the enqueue (`fill` runs under the stream's mutex: it copies, and calls nothing that takes it). A fill that
  // fails enqueues nothing; its status is returned.
  accel_status_t EnqueueLaunch(accel_status_t (*fill)(void* context, Launch& launch), void* context) {
    std::unique_lock lock(mutex_);
    std::unique_ptr<Launch> launch = SpareLaunchLocked();
    const accel_status_t filled = fill(context, *launch);
    if (filled != ACCEL_SUCCESS) {
      launch->Release();
      spare_launches_.push_back(std::move(launch));  // its room is reserved: it was just taken, or there was none
      return filled;
    }
    Operation op;
    op.what = "kernel launch";
    op.launch = std::move(launch);
    return EnqueueLocked(lock, std::move(op));
  }

  // A prepared launch (module.cc): its own operation, as EnqueueLaunch makes, unless it runs on the operation of the
  // prepared launch submitted last (RunAfterLastLocked).
  accel_status_t EnqueuePrepared(const std::shared_ptr<const PreparedLaunch>& prepared) {
    std::unique_lock lock(mutex_);
    if (RunAfterLastLocked(prepared)) return ACCEL_SUCCESS;
    std::unique_ptr<Launch> launch = SpareLaunchLocked();
    launch->prepared = prepared;
    Operation op;
    op.what = "kernel launch";
    op.launch = std::move(launch);
    return EnqueueLocked(lock, std::move(op));
  }

  // Enqueues `prepared` on the operation submitted last, when that is a prepared launch still submitted (not
  // draining) and successful, with the worker idle, nothing queued and no error: one more clEnqueueNDRangeKernel on
  // the queue, after that operation's; the operation keeps `prepared` alive (a reference, unless it holds it last
  // already) and completes with it. False when it did not (then nothing was enqueued).
  bool RunAfterLastLocked(const std::shared_ptr<const PreparedLaunch>& prepared) {
    if (!fifo_.empty() || busy_ || error_ != ACCEL_SUCCESS || submitted_.empty()) return false;
    Pending& last = submitted_.back();
    Launch* launch = last.op.launch.get();
    if (last.status != ACCEL_SUCCESS || launch == nullptr || launch->prepared == nullptr) return false;
    const std::shared_ptr<const PreparedLaunch>& held =
        launch->prepared_after.empty() ? launch->prepared : launch->prepared_after.back();
    const bool add = held != prepared;
    // Launches alternating between prepared launches add a reference each: past kMaxRunOnChanges, an operation of
    // its own (the list's memory stays with the recycled launch, so it must not grow without end).
    if (add && launch->prepared_after.size() >= kMaxRunOnChanges) return false;
    if (add) {
      try {
        launch->prepared_after.push_back(prepared);
      } catch (const std::bad_alloc&) {
        return false;  // no memory for the reference: an operation of its own
      }
    }
    accel_status_t submitted = ACCEL_ERROR_RESOURCE_EXHAUSTED;
    try {
      std::string message;
      submitted = SubmitPrepared(*prepared, last.submission, &message);
    } catch (const std::bad_alloc&) {  // building the failure's message
    }
    if (submitted != ACCEL_SUCCESS) {
      // Not enqueued: its own operation tries again and, failing, makes the stream's error with the message.
      if (add) launch->prepared_after.pop_back();
      return false;
    }
    ++enqueued_;
    ++last.launches_after;
    ++launches_after_;
    return true;
  }

  // Enqueue's body, with the stream's mutex held by `lock` (released on return).
  accel_status_t EnqueueLocked(std::unique_lock<std::mutex>& lock, Operation&& op) {
    op.number = ++enqueued_;
    if (op.host || !fifo_.empty() || busy_ || (op.would_block && op.would_block())) {
      fifo_.append() = std::move(op);
      lock.unlock();
      work_.notify_one();
      return ACCEL_SUCCESS;
    }
    // The worker is idle and nothing is queued ahead: enqueue here, in order, under the stream's mutex, straight into
    // the submitted operations (no copy of the operation on the way).
    auto [prior, prior_message] = ErrorLocked();
    Pending& entry = submitted_.emplace_back(std::move(op));
    Prepare(prior, std::move(prior_message), &entry);
    const bool wake = SubmittedLocked(entry);
    lock.unlock();
    if (wake) work_.notify_one();
    return ACCEL_SUCCESS;
  }

  // Has the worker drain once its FIFO is empty (progress without blocking the caller).
  void RequestDrain() {
    {
      std::lock_guard lock(mutex_);
      if (drain_requested_) return;
      drain_requested_ = true;
    }
    work_.notify_one();
  }

  accel_status_t Query() {
    std::unique_lock lock(mutex_);
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    if (IdleLocked()) return ACCEL_SUCCESS;
    // Only submitted work left: have the worker wait for it, so that a later query sees it complete.
    if (fifo_.empty() && !busy_ && !draining_ && !submitted_.empty() && !drain_requested_) {
      drain_requested_ = true;
      lock.unlock();
      work_.notify_one();
    }
    return ACCEL_NOT_READY;
  }

  accel_status_t Synchronize(uint64_t timeout_ns) {
    if (OnWorker()) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "called from a host callback of the same stream, which would wait for itself");
    }
    std::unique_lock lock(mutex_);
    const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout_ns);
    while (!IdleLocked()) {
      const bool drainable = fifo_.empty() && !busy_ && !draining_ && !submitted_.empty();
      if (drainable && !deadline) {
        DrainLocked(lock);  // one clFinish, here
        continue;
      }
      if (drainable && !drain_requested_) {
        // A bounded wait cannot be a clFinish: the worker drains, and this thread waits for it with the deadline.
        drain_requested_ = true;
        work_.notify_one();
      }
      if (!deadline) {
        changed_.wait(lock);
      } else if (changed_.wait_until(lock, *deadline) == std::cv_status::timeout && !IdleLocked()) {
        return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had " + std::to_string(PendingLocked()) +
                                                    " operations pending after " + std::to_string(timeout_ns) + " ns");
      }
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
  static constexpr size_t kSpareLaunches = 256;   // completed launches kept for reuse; more are freed
  static constexpr size_t kMaxRunOnChanges = 64;  // prepared launches one operation keeps for its run-on launches
  // A device operation taken in order, with its status so far: ACCEL_SUCCESS while its commands may still run, or
  // why it failed or was skipped (then `message` is the stream's error).
  struct Pending {
    Pending() = default;
    explicit Pending(Operation&& operation) : op(std::move(operation)) {}

    Operation op;
    Submission submission;
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;
    bool skipped = false;
    uint64_t launches_after = 0;  // prepared launches enqueued on this operation after its own (EnqueuePrepared)
  };

  bool IdleLocked() const { return fifo_.empty() && !busy_ && outstanding_ == 0; }
  uint64_t PendingLocked() const { return fifo_.size() + outstanding_ + launches_after_ + (busy_ ? 1 : 0); }

  // A released launch of the stream's for reuse, or a new one.
  std::unique_ptr<Launch> SpareLaunchLocked() {
    if (spare_launches_.empty()) return std::make_unique<Launch>();
    std::unique_ptr<Launch> launch = std::move(spare_launches_.back());
    spare_launches_.pop_back();
    return launch;
  }

  // Records the stream's first error (later ones are consequences); returns the stream's error message.
  std::string SetErrorLocked(accel_status_t status, const Operation& op, const std::string& message) {
    if (error_ == ACCEL_SUCCESS) {
      error_ = status;
      error_number_ = op.number;
      error_message_ = "operation #" + std::to_string(op.number) + " (" + op.what + ") " + message;
    }
    return error_message_;
  }

  // The stream's error and its message (the status alone when there is no memory to copy the message).
  std::pair<accel_status_t, std::string> ErrorLocked() const noexcept {
    std::pair<accel_status_t, std::string> error{error_, std::string()};
    if (error_ != ACCEL_SUCCESS) {
      try {
        error.second = error_message_;
      } catch (...) {
      }
    }
    return error;
  }

  // Submits the device operation of `*entry` (a new Pending) (enqueues its commands), or skips it when the stream
  // held `prior`. Runs on the one thread allowed to submit; does not touch the stream's state.
  void Prepare(accel_status_t prior, std::string&& prior_message, Pending* entry) {
    entry->submission.runtime = device_->runtime;
    entry->submission.device = device_;
    entry->submission.queue = queue_.get();
    if (prior != ACCEL_SUCCESS) {
      entry->status = prior;
      entry->message = std::move(prior_message);
      entry->skipped = true;
      return;
    }
    entry->status = Guarded(
        [&] {
          if (entry->op.launch) return SubmitLaunch(*entry->op.launch, entry->submission, &entry->message);
          if (entry->op.transfer.kind != Transfer::Kind::kNone) {
            return SubmitTransfer(entry->op.transfer, entry->submission, &entry->message);
          }
          return entry->op.submit(entry->submission, &entry->message);
        },
        &entry->message);
  }

  // Counts a prepared operation, the last of the submitted ones; a failed or skipped one makes the stream's error
  // (when it is the first) and asks the worker to drain, so that it completes (records, waiters) without anyone
  // synchronizing. Returns whether the worker must be woken.
  bool SubmittedLocked(Pending& entry) {
    bool wake = false;
    if (entry.status != ACCEL_SUCCESS) {
      if (!entry.skipped) entry.message = SetErrorLocked(entry.status, entry.op, entry.message);
      if (!drain_requested_) wake = drain_requested_ = true;
    }
    ++outstanding_;
    return wake;
  }

  // Waits for every operation submitted so far (one clFinish) and completes them in order. Waits first for a drain
  // in progress on another thread. Called with `lock` held; releases it while it waits and completes.
  void DrainLocked(std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [this] { return !draining_; });
    if (submitted_.empty()) return;
    draining_ = true;
    std::vector<Pending>& batch = batch_;  // empty; both vectors keep their memory, so a drain allocates nothing
    batch.swap(submitted_);
    const uint64_t count = batch.size();
    uint64_t launches_after = 0;
    for (const Pending& entry : batch) launches_after += entry.launches_after;
    // The stream's error as the batch starts: an operation after the one that made it was submitted before it was
    // known (a completion that failed in an earlier drain, while this batch was submitted) and reports it.
    const accel_status_t prior = error_;
    const uint64_t prior_number = error_number_;
    lock.unlock();
    const cl_int err = device_->runtime->cl.Finish(queue_.get());
    // clFinish failing means a command failed (or the queue is lost): the first operation that was still running
    // takes the error; those after it report it. So does an operation's completion that fails (a wait for an event
    // whose work failed): the operations after it report the stream's error.
    accel_status_t failure = ACCEL_SUCCESS;
    std::string failure_message;
    accel_copy_statistics_t copies{};  // of the operations that completed successfully
    for (Pending& entry : batch) {
      if (entry.status == ACCEL_SUCCESS && failure == ACCEL_SUCCESS && prior != ACCEL_SUCCESS &&
          entry.op.number > prior_number) {
        failure = prior;
        std::lock_guard state(mutex_);
        failure_message = error_message_;
      }
      if (entry.status == ACCEL_SUCCESS && err != CL_SUCCESS && failure == ACCEL_SUCCESS) {
        failure = ACCEL_ERROR_INTERNAL;
        std::lock_guard state(mutex_);
        failure_message = SetErrorLocked(failure, entry.op, "failed on the device: " + ClFailure("clFinish", err));
        entry.status = failure;
        entry.message = failure_message;
      } else if (entry.status == ACCEL_SUCCESS && failure != ACCEL_SUCCESS) {
        entry.status = failure;
        entry.message = failure_message;
        entry.skipped = true;
      }
      const accel_status_t finished = Finish(entry);
      if (finished == ACCEL_SUCCESS && !entry.skipped) {
        backend::AddCopyStatistics(entry.op.copies, &copies);
      } else if (finished != ACCEL_SUCCESS && failure == ACCEL_SUCCESS) {
        failure = finished;  // its completion failed: the stream's error now
        std::lock_guard state(mutex_);
        failure_message = error_message_;
      }
      if (entry.op.launch && recycled_.size() < kSpareLaunches) recycled_.push_back(std::move(entry.op.launch));
    }
    batch.clear();  // releases temporaries and captures before the stream can report idle
    lock.lock();    // once per drain, not once per operation
    backend::AddCopyStatistics(copies, &copies_);
    while (!recycled_.empty() && spare_launches_.size() < kSpareLaunches) {
      spare_launches_.push_back(std::move(recycled_.back()));
      recycled_.pop_back();
    }
    recycled_.clear();  // launches past the spares, released already: frees their vectors only (no callback)
    outstanding_ -= count;
    launches_after_ -= launches_after;
    draining_ = false;
    changed_.notify_all();
  }

  // Room for one pending operation, so that a vector of them never has none (Run).
  static std::vector<Pending> ReservedPending() {
    std::vector<Pending> pending;
    pending.reserve(1);
    return pending;
  }

  static std::vector<std::unique_ptr<Launch>> Reserved(size_t capacity) {
    std::vector<std::unique_ptr<Launch>> launches;
    launches.reserve(capacity);
    return launches;
  }

  // Runs the operation's completion and releases what its launch held (the launch itself stays, for reuse); returns
  // its final status (a failed completion has made it the stream's error). Not under the stream's mutex.
  accel_status_t Finish(Pending& entry) {
    accel_status_t status = entry.status;
    if (entry.op.complete) {
      std::string message;
      const accel_status_t completed =
          Guarded([&] { return entry.op.complete(entry.status, entry.message, entry.submission, &message); }, &message);
      if (status == ACCEL_SUCCESS && completed != ACCEL_SUCCESS) {
        status = completed;
        std::lock_guard lock(mutex_);
        SetErrorLocked(status, entry.op, message);
      }
    }
    if (entry.op.launch) entry.op.launch->Release();  // here, not under the mutex: a Storage may go
    return status;
  }

  // The worker: takes each queued operation in order; drains when asked, and before host work and blocking waits.
  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (!fifo_.empty()) {
        Operation op = fifo_.pop_front();
        busy_ = true;
        if (op.host || (op.would_block && op.would_block())) DrainLocked(lock);  // everything before it completed
        if (op.host) {
          lock.unlock();
          RunHost(std::move(op));
          lock.lock();
          continue;
        }
        // Room for the entry first, so that recording it after Prepare cannot throw on the worker (nothing else
        // touches submitted_ while busy_: drains and direct submissions wait for it). Without the memory to grow,
        // what is submitted completes first: submitted_ is then empty, and holds one at least (ReservedPending).
        if (submitted_.size() == submitted_.capacity()) {
          try {
            submitted_.reserve(2 * submitted_.size());
          } catch (const std::bad_alloc&) {
            DrainLocked(lock);
          }
        }
        auto [prior, prior_message] = ErrorLocked();
        lock.unlock();
        Pending entry(std::move(op));
        Prepare(prior, std::move(prior_message), &entry);  // may block: a wait on another stream
        lock.lock();
        submitted_.push_back(std::move(entry));
        SubmittedLocked(submitted_.back());
        continue;
      }
      if (busy_) {
        busy_ = false;
        changed_.notify_all();
      }
      if (drain_requested_ || (stopping_ && outstanding_ > 0)) {
        drain_requested_ = false;
        DrainLocked(lock);
        continue;
      }
      if (stopping_) return;
      work_.wait(lock, [this] { return stopping_ || drain_requested_ || !fifo_.empty(); });
    }
  }

  void RunHost(Operation op) {
    std::string message;
    accel_status_t prior = ACCEL_SUCCESS;
    {
      std::lock_guard lock(mutex_);
      prior = error_;
    }
    const accel_status_t status = Guarded([&] { return op.host(prior, &message); }, &message);
    {
      std::lock_guard lock(mutex_);
      if (prior == ACCEL_SUCCESS) {
        if (status == ACCEL_SUCCESS) {
          backend::AddCopyStatistics(op.copies, &copies_);
        } else {
          SetErrorLocked(status, op, message);
        }
      }
    }
    op = Operation{};
  }

  // Runs `body`; an exception becomes ACCEL_ERROR_INTERNAL with its text in `*message`.
  template <typename Body>
  static accel_status_t Guarded(Body&& body, std::string* message) noexcept {
    try {
      return body();
    } catch (const std::exception& e) {
      *message = std::string("threw an exception: ") + e.what();
    } catch (...) {
      *message = "threw an exception";
    }
    return ACCEL_ERROR_INTERNAL;
  }

  Device* const device_;
  ClQueue queue_;
  std::mutex mutex_;
  std::condition_variable work_;     // the FIFO grew, a drain was asked for, or the stream is stopping
  std::condition_variable changed_;  // a drain ended, or the worker went idle
  backend::Ring<Operation> fifo_;    // for the worker: host work, and everything queued behind it
  std::vector<Pending> submitted_;   // enqueued (or skipped), not yet drained
  std::vector<Pending> batch_;       // the batch DrainLocked completes (one drain at a time), empty otherwise
  std::vector<std::unique_ptr<Launch>> spare_launches_;  // completed launches for reuse
  std::vector<std::unique_ptr<Launch>> recycled_;        // the drain's released launches, on their way to the spares
  bool busy_ = false;                                    // the worker holds an operation it took from the FIFO
  bool draining_ = false;                                // a thread is in DrainLocked with a batch
  bool drain_requested_ = false;                         // the worker should drain once its FIFO is empty
  bool stopping_ = false;
  uint64_t enqueued_ = 0;
  uint64_t outstanding_ = 0;     // submitted_ plus the batch being drained
  uint64_t launches_after_ = 0;  // their Pending::launches_after, added up
  accel_status_t error_ = ACCEL_SUCCESS;
  uint64_t error_number_ = 0;  // the operation that made error_
  std::string error_message_;
  accel_copy_statistics_t copies_{};
  std::thread worker_;  // last: started once everything above is constructed
};

accel_status_t EnqueueOperation(Stream* stream, Operation&& op) { return stream->Enqueue(std::move(op)); }

accel_status_t EnqueueLaunch(Stream* stream, accel_status_t (*fill)(void* context, Launch& launch), void* context) {
  return stream->EnqueueLaunch(fill, context);
}

accel_status_t EnqueuePrepared(Stream* stream, const std::shared_ptr<const PreparedLaunch>& prepared) {
  return stream->EnqueuePrepared(prepared);
}

// --- Stream slots ------------------------------------------------------------------------------------------------

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* /*desc*/,
                            accel_bk_stream_t* out_stream) noexcept {
  // The description's priority is ignored (allowed by accel.h).
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "stream_create", [&] {
    const cl_command_queue_properties properties = device->properties.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    cl_int err = CL_SUCCESS;
    cl_command_queue queue =
        device->runtime->cl.CreateCommandQueue(device->platform->context.get(), device->id, properties, &err);
    if (queue == nullptr) {
      return device->host->Fail(StatusFromCl(err), ClFailure("clCreateCommandQueue", err));
    }
    ClQueue owned(device->runtime, queue);
    try {
      *out_stream = Wrap(std::make_unique<Stream>(device, std::move(owned)).release());
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
                       "stream_destroy was called from a host callback of the same stream; the stream is leaked");
    return;
  }
  std::unique_ptr<Stream> owned(stream);
}

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  // Non-blocking: the caller keeps `src` valid until the copy completes (docs/ownership.md).
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    Operation op;
    op.what = "copy host to buffer";
    op.transfer.kind = Transfer::Kind::kWrite;
    op.transfer.to = Unwrap(dst)->storage;
    op.transfer.src = src;
    op.transfer.dst_offset = dst_offset;
    op.transfer.size = size;
    op.copies.host_to_device_copies = 1;
    op.copies.host_to_device_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    Operation op;
    op.what = "copy buffer to host";
    op.transfer.kind = Transfer::Kind::kRead;
    op.transfer.from = Unwrap(src)->storage;
    op.transfer.dst = dst;
    op.transfer.src_offset = src_offset;
    op.transfer.size = size;
    op.copies.device_to_host_copies = 1;
    op.copies.device_to_host_bytes = size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // The core rejected overlapping ranges of one buffer. Buffers of one platform share its cl_context, so OpenCL
  // copies between them (the runtime moves the bytes); buffers of two platforms are staged through host memory.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    std::shared_ptr<Storage> from = Unwrap(src)->storage;
    std::shared_ptr<Storage> to = Unwrap(dst)->storage;
    Device* here = stream->device();
    Operation op;
    op.what = "copy buffer";
    if (from->device()->platform == to->device()->platform) {
      op.transfer.kind = Transfer::Kind::kCopy;
      op.transfer.from = from;
      op.transfer.to = to;
      op.transfer.src_offset = src_offset;
      op.transfer.dst_offset = dst_offset;
      op.transfer.size = size;
    } else {
      // Host work: everything before it completed; read on the source's device, write on the destination's.
      op.host = [from, src_offset, to, dst_offset, size](accel_status_t prior, std::string* message) {
        if (prior != ACCEL_SUCCESS) return ACCEL_SUCCESS;
        std::vector<std::byte> staging(static_cast<size_t>(size));
        Runtime* runtime = from->device()->runtime;
        cl_int err = runtime->cl.EnqueueReadBuffer(from->device()->internal_queue.get(), from->mem(), CL_TRUE,
                                                   static_cast<size_t>(src_offset), staging.size(), staging.data(), 0,
                                                   nullptr, nullptr);
        if (err != CL_SUCCESS) {
          *message = ClFailure("clEnqueueReadBuffer", err) + " staging from another platform's device";
          return StatusFromCl(err);
        }
        err = runtime->cl.EnqueueWriteBuffer(to->device()->internal_queue.get(), to->mem(), CL_TRUE,
                                             static_cast<size_t>(dst_offset), staging.size(), staging.data(), 0,
                                             nullptr, nullptr);
        if (err != CL_SUCCESS) {
          *message = ClFailure("clEnqueueWriteBuffer", err) + " staging to another platform's device";
          return StatusFromCl(err);
        }
        return ACCEL_SUCCESS;
      };
    }
    if (from->device() == here && to->device() == here) {
      op.copies.local_copies = 1;
      op.copies.local_bytes = size;
    } else {
      // Devices declare no peer access (topology.cc): a copy that involves another device is counted as staged.
      op.copies.staged_copies = 1;
      op.copies.staged_bytes = size;
    }
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
    Operation op;
    op.what = "fill buffer";
    op.transfer.kind = Transfer::Kind::kFill;
    op.transfer.to = Unwrap(buffer)->storage;
    op.transfer.dst_offset = offset;
    op.transfer.size = size;
    std::memcpy(op.transfer.pattern.data(), pattern, pattern_size);  // the caller's is valid for the call only
    op.transfer.pattern_size = pattern_size;
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t handle, accel_host_callback_t callback,
                                         void* user_data) noexcept {
  // Runs exactly once on the worker, in stream order: with ACCEL_SUCCESS normally (a negative return becomes the
  // stream's error, a positive one is reported as ACCEL_ERROR_INTERNAL); with the stream's error once it holds one
  // (its return value then ignored), so that it can release what `user_data` owns.
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
    // The operation holds the storage and enqueues nothing; it completes, dropping the storage, after every
    // operation before it.
    Operation op;
    op.what = "free buffer";
    op.submit = [storage = Unwrap(buffer_handle)->storage](Submission&, std::string*) { return ACCEL_SUCCESS; };
    const accel_status_t status = stream->Enqueue(std::move(op));
    if (status == ACCEL_SUCCESS) BufferDestroy(buffer_handle);  // on failure the buffer stays as it was
    stream->RequestDrain();  // the worker gives the storage back once the work before it completed
    return status;
  });
}

accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  // A marker with an event, flushed so that it completes without anyone waiting on this stream (event_query, a
  // wait on another queue): the one flush outside a wait, per record.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_record_event", [&] {
    Event* event = Unwrap(event_handle);
    auto record = std::make_shared<Record>(stream->device()->runtime, event->timing());
    Operation op;
    op.what = "record event";
    op.submit = [record](Submission& s, std::string* message) {
      cl_event marker = nullptr;
      const cl_int err = s.runtime->cl.EnqueueMarkerWithWaitList(s.queue, 0, nullptr, &marker);
      if (err != CL_SUCCESS) {
        if (marker != nullptr) s.runtime->cl.ReleaseEvent(marker);
        return Enqueued("clEnqueueMarkerWithWaitList", err, message);
      }
      record->Submitted(ClEvent(s.runtime, marker), s.device->platform->context.get());
      return Enqueued("clFlush", s.runtime->cl.Flush(s.queue), message);
    };
    op.complete = [record](accel_status_t status, const std::string& error, const Submission&, std::string*) {
      if (status == ACCEL_SUCCESS) {
        record->MarkerCompleted(CL_COMPLETE);  // drained: the marker completed
      } else {
        record->Fail(status, error);
      }
      return ACCEL_SUCCESS;
    };
    const accel_status_t status = stream->Enqueue(std::move(op));
    // The new record replaces the earlier one once it is queued (it may already be complete).
    if (status == ACCEL_SUCCESS) event->set_current(std::move(record));
    return status;
  });
}

namespace {

std::string WaitedForFailure(const Record::Outcome& outcome) {
  return std::string("waited for an event that completed with ") + StatusName(outcome.status) + ": " + outcome.message;
}

}  // namespace

accel_status_t StreamWaitEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  // On the device where it can: a barrier on the recording stream's marker, when both streams share a cl_context and
  // the marker is enqueued. Otherwise the worker waits on the host for the record (after completing its own work).
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_wait_event", [&] {
    std::shared_ptr<Record> record = Unwrap(event_handle)->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete, nothing to wait for
    cl_context context = stream->device()->platform->context.get();
    auto barrier = std::make_shared<bool>(false);  // whether the wait became a barrier on the marker
    Operation op;
    op.what = "wait event";
    op.would_block = [record, context] { return !record->ReadyFor(context); };
    op.submit = [record, context, barrier](Submission& s, std::string* message) {
      cl_event marker = record->MarkerFor(context);  // blocks only on the worker (would_block)
      if (marker == nullptr) {                       // complete: its outcome is known
        const Record::Outcome outcome = *record->Peek();
        if (outcome.status >= 0) return ACCEL_SUCCESS;
        *message = WaitedForFailure(outcome);
        return outcome.status;
      }
      *barrier = true;
      return Enqueued("clEnqueueBarrierWithWaitList",
                      s.runtime->cl.EnqueueBarrierWithWaitList(s.queue, 1, &marker, nullptr), message);
    };
    op.complete = [record, barrier](accel_status_t status, const std::string&, const Submission&,
                                    std::string* message) {
      if (status != ACCEL_SUCCESS || !*barrier) return status;
      // The barrier passed, so the marker completed: its outcome is known without waiting.
      const Record::Outcome outcome = *record->Wait(std::nullopt);
      if (outcome.status >= 0) return ACCEL_SUCCESS;
      *message = WaitedForFailure(outcome);
      return outcome.status;
    };
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
  // The core passes a zeroed struct of its own size.
  const accel_copy_statistics_t statistics = Unwrap(handle)->CopyStatistics();
  WritePrefix(&statistics, out_statistics, out_statistics->struct_size, sizeof(statistics));
  return ACCEL_SUCCESS;
}

// --- Event slots -------------------------------------------------------------------------------------------------

namespace {

// How event_query and event_elapsed_time learn that a record completed: ask OpenCL about its marker (no wait).
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
    // The device's profiling clock when both markers have it; else the host's clock at completion.
    const bool device_clock = outcomes[0]->device_ns != 0 && outcomes[1]->device_ns != 0;
    const uint64_t from = device_clock ? outcomes[0]->device_ns : outcomes[0]->host_ns;
    const uint64_t to = device_clock ? outcomes[1]->device_ns : outcomes[1]->host_ns;
    *out_nanoseconds = to > from ? to - from : 0;
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::opencl
