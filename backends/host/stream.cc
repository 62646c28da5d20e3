// Streams: an in-order FIFO of operations per stream, run by the stream's own
// worker thread, with the stream's asynchronous error and the enqueue slots.
// A kernel launch is one operation; its work-groups run on the context's pool.
// Small copies and fills, records and frees on an idle stream run inline, on
// the enqueuing thread (Stream, MayRunInline).
#include <pthread.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/fill.h"
#include "common/recorded_events.h"
#include "common/ring.h"
#include "device.h"
#include "event.h"
#include "memory.h"
#include "module.h"
#include "thread_pool.h"

namespace accel::host {
namespace {

// --- Operations: what a stream's queue holds. Each owns references to what it uses. ------------------------------

struct CopyHostToBufferOp {
  const void* src;
  std::shared_ptr<Storage> dst;
  uint64_t dst_offset;
  uint64_t size;
};
struct CopyBufferToHostOp {
  std::shared_ptr<Storage> src;
  uint64_t src_offset;
  void* dst;
  uint64_t size;
};
struct CopyBufferOp {
  std::shared_ptr<Storage> src;
  uint64_t src_offset;
  std::shared_ptr<Storage> dst;
  uint64_t dst_offset;
  uint64_t size;
  CopyPath path;  // chosen at enqueue from the two buffers' devices
};
struct FillOp {
  std::shared_ptr<Storage> dst;
  uint64_t offset;
  uint64_t size;
  std::array<std::byte, 4> pattern;  // copied at enqueue
  uint32_t pattern_size;
};
struct HostCallbackOp {
  accel_host_callback_t callback;
  void* user_data;
};
struct FreeBufferOp {
  std::shared_ptr<Storage> storage;  // the last reference of a freed buffer, dropped when the worker reaches it
};
struct RecordEventOp {
  std::shared_ptr<Record> record;
};
struct WaitEventOp {
  std::shared_ptr<Record> record;  // the record that was current when the wait was enqueued
};
struct LaunchKernelOp {
  std::unique_ptr<Launch> launch;  // holds the buffers' storage and the module image until the op is gone
};
struct FailOp {
  accel_status_t status;  // an error, reported as the device's when the worker reaches it
  std::string message;
};

using OpBody = std::variant<CopyHostToBufferOp, CopyBufferToHostOp, CopyBufferOp, FillOp, HostCallbackOp, FreeBufferOp,
                            RecordEventOp, WaitEventOp, LaunchKernelOp, FailOp>;

struct Operation {
  uint64_t number;  // 1 for the stream's first operation
  OpBody body;
};

template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

std::string OpName(const OpBody& body) {
  if (const auto* launch = std::get_if<LaunchKernelOp>(&body)) {
    return "launch kernel '" + launch->launch->kernel_name() + "'";
  }
  return std::visit(
      Overloaded{[](const CopyHostToBufferOp&) { return "copy host to buffer"; },
                 [](const CopyBufferToHostOp&) { return "copy buffer to host"; },
                 [](const CopyBufferOp&) { return "copy buffer"; }, [](const FillOp&) { return "fill buffer"; },
                 [](const HostCallbackOp&) { return "host callback"; },
                 [](const FreeBufferOp&) { return "free buffer"; }, [](const RecordEventOp&) { return "record event"; },
                 [](const WaitEventOp&) { return "wait event"; }, [](const LaunchKernelOp&) { return "launch kernel"; },
                 [](const FailOp&) { return "device work"; }},
      body);
}

// Copies [src, src + size) to dst through a host bounce buffer of at most 4 MiB, as a device without a peer path
// does: device to host, then host to device.
void StagedCopy(std::byte* dst, const std::byte* src, uint64_t size) {
  constexpr uint64_t kBounce = uint64_t{4} << 20;
  std::unique_ptr<std::byte[]> bounce(new std::byte[size < kBounce ? size : kBounce]);
  for (uint64_t done = 0; done < size;) {
    const uint64_t chunk = size - done < kBounce ? size - done : kBounce;
    std::memcpy(bounce.get(), src + done, chunk);
    std::memcpy(dst + done, bounce.get(), chunk);
    done += chunk;
  }
}

// Adds one completed copy to the counters.
void Count(const OpBody& body, accel_copy_statistics_t* stats) {
  if (const auto* up = std::get_if<CopyHostToBufferOp>(&body)) {
    ++stats->host_to_device_copies;
    stats->host_to_device_bytes += up->size;
  } else if (const auto* down = std::get_if<CopyBufferToHostOp>(&body)) {
    ++stats->device_to_host_copies;
    stats->device_to_host_bytes += down->size;
  } else if (const auto* c = std::get_if<CopyBufferOp>(&body)) {
    switch (c->path) {
      case CopyPath::kLocal:
        ++stats->local_copies;
        stats->local_bytes += c->size;
        break;
      case CopyPath::kPeer:
        ++stats->peer_copies;
        stats->peer_bytes += c->size;
        break;
      case CopyPath::kStaged:
        ++stats->staged_copies;
        stats->staged_bytes += c->size;
        break;
    }
  }
}

// How an operation ended: ACCEL_SUCCESS, or the error that becomes the stream's.
struct Failure {
  accel_status_t status = ACCEL_SUCCESS;
  std::string message;
};

std::string Describe(const Operation& op) {
  return "operation #" + std::to_string(op.number) + " (" + OpName(op.body) + ")";
}

// The failure of an operation that ended in an exception (out of memory for a message, or thrown through a host
// callback). A record still completes, so that nobody waits for it forever.
Failure Abandon(Operation& op, accel_status_t status, const char* why) noexcept {
  if (auto* record = std::get_if<RecordEventOp>(&op.body)) record->record->Complete(status, std::string());
  Failure failure{status, std::string()};
  try {
    failure.message = Describe(op) + why;
  } catch (...) {
  }
  return failure;
}

// The largest copy or fill that may run on the caller's thread when the stream is idle (Stream::Enqueue): small
// enough that an enqueue returns within tens of microseconds, so that a caller that overlaps its own work with a
// large copy still gets the overlap.
constexpr uint64_t kInlineLimit = uint64_t{1} << 20;

// Whether `body` may run on the enqueuing thread when its stream is idle and has no error: copies and fills of at
// most kInlineLimit bytes, event records, stream-ordered frees, and waits for records that already completed.
// Launches and host callbacks always run on the worker (a kernel may run long; a callback runs on the worker by
// contract, docs/streams.md).
bool MayRunInline(const OpBody& body) {
  return std::visit(Overloaded{[](const CopyHostToBufferOp& c) { return c.size <= kInlineLimit; },
                               [](const CopyBufferToHostOp& c) { return c.size <= kInlineLimit; },
                               [](const CopyBufferOp& c) { return c.size <= kInlineLimit; },
                               [](const FillOp& f) { return f.size <= kInlineLimit; },
                               [](const FreeBufferOp&) { return true; }, [](const RecordEventOp&) { return true; },
                               [](const WaitEventOp& w) { return w.record->Peek(nullptr); },
                               [](const HostCallbackOp&) { return false; }, [](const LaunchKernelOp&) { return false; },
                               [](const FailOp&) { return false; }},
                    body);
}

}  // namespace

// An in-order queue of operations with its own worker thread; enqueueing returns at once. After an operation fails,
// the stream holds its status and message and skips later operations: records still complete, with that error, and
// host callbacks still run once, told the error.
// Hand-off: operations are numbered in enqueue order and complete in that order, so "done" is one counter. A
// condition variable is signalled only when a thread sleeps on it (the worker on an empty queue, synchronize on
// pending work), so a busy worker and an enqueue into it cost no system call. An operation that may run inline
// (MayRunInline) runs on the enqueuing thread when nothing is queued or running and the stream has no error: stream
// order holds because nothing is ahead of it, and anything enqueued meanwhile queues behind it (the worker does not
// start it until the inline operation completed).
// Thread-safe: the queue and state are guarded by the stream's mutex, which is never held while an operation runs.
class Stream {
 public:
  explicit Stream(Device* device) : device_(device) { spare_launches_.reserve(kSpareLaunches); }
  // Drains the queue and joins the worker; never called on the worker itself.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Starts the worker; throws std::system_error when the thread cannot be created.
  void Start();

  const HostServices& host() const { return *device_->host; }
  Device* device() const { return device_; }
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

  accel_status_t Enqueue(OpBody body);
  accel_status_t Query();
  accel_status_t Synchronize(uint64_t timeout_ns);
  accel_status_t ClearError();
  accel_copy_statistics_t CopyStatistics();
  // A released launch to fill with Launch::Create (the stream recycles them); null when none is spare.
  std::unique_ptr<Launch> TakeSpareLaunch();

 private:
  static constexpr size_t kSpareLaunches = 64;  // kept for reuse; more are freed

  void Run();
  // Runs `op` on this thread and completes it: counts, error, completion counter, wake-ups. `op` is destroyed before
  // the operation counts as complete, so that what it held is released before the stream can report idle.
  void RunAndComplete(Operation op, accel_status_t prior, std::unique_lock<std::mutex>& lock);
  Failure Execute(Operation& op, accel_status_t prior) noexcept;
  uint64_t PendingLocked() const { return enqueued_ - completed_; }
  bool IdleLocked() const { return PendingLocked() == 0; }
  // Whether the worker may take the queue's next operation: there is one, and no inline operation runs.
  bool WorkReadyLocked() const { return !queue_.empty() && !inline_running_; }

  Device* const device_;
  std::mutex mutex_;
  std::condition_variable work_available_;  // signalled only while worker_sleeping_
  std::condition_variable completed_cv_;    // signalled only while sync_waiters_ > 0
  backend::Ring<Operation> queue_;
  bool running_ = false;          // the worker is executing an operation it popped
  bool inline_running_ = false;   // an enqueuing thread is executing an operation inline
  bool stopping_ = false;         // the destructor asked the worker to exit once the queue is empty
  bool worker_sleeping_ = false;  // the worker waits on work_available_
  uint32_t sync_waiters_ = 0;     // threads asleep on completed_cv_
  // The number of the last operation enqueued, and of the last one completed (operations complete in order).
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  // The asynchronous error. Written only while an operation completes and by ClearError while idle, so the thread
  // running an operation may read it without the lock.
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};                     // completed copies, under the mutex
  std::vector<std::unique_ptr<Launch>> spare_launches_;  // released launches for reuse, under the mutex
  // Scratch memory for the work-groups this stream's worker runs itself during a launch; used only by the worker.
  Scratch scratch_;
  std::thread worker_;
};

Stream::~Stream() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_one();
  worker_.join();
}

void Stream::Start() {
  worker_ = std::thread([this] { Run(); });
  pthread_setname_np(worker_.native_handle(), "accel-host-strm");
}

accel_status_t Stream::Enqueue(OpBody body) {
  std::unique_lock lock(mutex_);
  // Counted once it runs or is queued: a queue that cannot grow (std::bad_alloc, the enqueue's failure) leaves the
  // stream as it was, with nothing pending that will never complete.
  const uint64_t number = enqueued_ + 1;
  if (completed_ == enqueued_ && error_ == ACCEL_SUCCESS && MayRunInline(body)) {
    // Nothing ahead of it and nothing running: run it here. Operations enqueued meanwhile queue behind it.
    enqueued_ = number;
    inline_running_ = true;
    lock.unlock();
    RunAndComplete(Operation{number, std::move(body)}, ACCEL_SUCCESS, lock);
    inline_running_ = false;
    const bool wake = worker_sleeping_ && !queue_.empty();
    lock.unlock();
    if (wake) work_available_.notify_one();
    return ACCEL_SUCCESS;
  }
  queue_.push_back(Operation{number, std::move(body)});
  enqueued_ = number;
  const bool wake = worker_sleeping_;
  lock.unlock();
  if (wake) work_available_.notify_one();
  return ACCEL_SUCCESS;
}

void Stream::RunAndComplete(Operation op, accel_status_t prior, std::unique_lock<std::mutex>& lock) {
  Failure failure;
  accel_copy_statistics_t done{};
  const uint64_t number = op.number;
  std::unique_ptr<Launch> spare;
  {
    Operation owned = std::move(op);
    failure = Execute(owned, prior);
    if (prior == ACCEL_SUCCESS && failure.status == ACCEL_SUCCESS) Count(owned.body, &done);
    if (auto* launch = std::get_if<LaunchKernelOp>(&owned.body)) {
      spare = std::move(launch->launch);
      spare->Release();
    }
  }  // `owned` dies here: the storage and records it held are released before the stream can report idle.
  lock.lock();
  // Reserved: never allocates. A launch past the reserve is freed when `spare` goes (its references already went).
  if (spare != nullptr && spare_launches_.size() < kSpareLaunches) spare_launches_.push_back(std::move(spare));
  backend::AddCopyStatistics(done, &copies_);
  if (failure.status != ACCEL_SUCCESS && error_ == ACCEL_SUCCESS) {
    error_ = failure.status;
    error_message_ = std::move(failure.message);
  }
  completed_ = number;
  if (sync_waiters_ > 0) completed_cv_.notify_all();
}

void Stream::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!WorkReadyLocked()) {
      if (stopping_ && queue_.empty()) return;  // stopping, and drained
      // Nothing to take: sleep until an enqueue (or an inline operation's completion) signals. No spinning
      // first: on an oversubscribed machine a spinning thread keeps the one it waits for off its core
      // (docs/overhead.md, "Spinning").
      worker_sleeping_ = true;
      work_available_.wait(lock, [this] { return WorkReadyLocked() || (stopping_ && queue_.empty()); });
      worker_sleeping_ = false;
      continue;
    }
    Operation op = queue_.pop_front();
    running_ = true;
    const accel_status_t prior = error_;
    lock.unlock();
    RunAndComplete(std::move(op), prior, lock);
    running_ = false;
  }
}

Failure Stream::Execute(Operation& op, accel_status_t prior) noexcept {
  try {
    if (prior != ACCEL_SUCCESS) {
      // Skipped after an asynchronous error; a record still completes, carrying that error.
      if (auto* record = std::get_if<RecordEventOp>(&op.body)) record->record->Complete(prior, error_message_);
      // A skipped host callback still runs once, told the error, so that it can release its user data.
      if (auto* call = std::get_if<HostCallbackOp>(&op.body)) (void)call->callback(call->user_data, prior);
      return {};
    }
    return std::visit(
        // memmove: on this device a buffer's host address (buffer_get_host_address) may be the other side.
        Overloaded{[](CopyHostToBufferOp& copy) -> Failure {
                     std::memmove(copy.dst->data() + copy.dst_offset, copy.src, copy.size);
                     return {};
                   },
                   [](CopyBufferToHostOp& copy) -> Failure {
                     std::memmove(copy.dst, copy.src->data() + copy.src_offset, copy.size);
                     return {};
                   },
                   [](CopyBufferOp& copy) -> Failure {
                     if (copy.path == CopyPath::kStaged) {
                       StagedCopy(copy.dst->data() + copy.dst_offset, copy.src->data() + copy.src_offset, copy.size);
                     } else {
                       std::memmove(copy.dst->data() + copy.dst_offset, copy.src->data() + copy.src_offset, copy.size);
                     }
                     return {};
                   },
                   [](FailOp& fail) -> Failure {
                     return {fail.status, fail.message};
                   },
                   [](FillOp& fill) -> Failure {
                     backend::FillPattern(fill.dst->data() + fill.offset, fill.size, fill.pattern.data(),
                                          fill.pattern_size);
                     return {};
                   },
                   [&op](HostCallbackOp& call) -> Failure {
                     std::string why;
                     const accel_status_t status =
                         backend::HostCallbackResult(call.callback(call.user_data, ACCEL_SUCCESS), &why);
                     if (status == ACCEL_SUCCESS) return {};
                     return {status, Describe(op) + " " + why};
                   },
                   [](FreeBufferOp& release) -> Failure {
                     release.storage.reset();
                     return {};
                   },
                   [](RecordEventOp& record) -> Failure {
                     record.record->Complete(ACCEL_SUCCESS, std::string());
                     return {};
                   },
                   [&op](WaitEventOp& wait) -> Failure {
                     wait.record->Wait(Deadline(ACCEL_TIMEOUT_INFINITE));
                     Record::Outcome outcome;
                     wait.record->Peek(&outcome);
                     if (outcome.status >= 0) return {};
                     return {outcome.status, Describe(op) + " waited for an event that completed with " +
                                                 StatusName(outcome.status) + ": " + outcome.message};
                   },
                   [this, &op](LaunchKernelOp& launch) -> Failure {
                     LaunchResult result = launch.launch->Run(*device_->pool, scratch_);
                     if (result.status >= 0) return {};
                     return {result.status, Describe(op) + ": " + result.message};
                   }},
        op.body);
  } catch (const std::bad_alloc&) {
    return Abandon(op, ACCEL_ERROR_RESOURCE_EXHAUSTED, " ran out of host memory");
  } catch (...) {
    return Abandon(op, ACCEL_ERROR_INTERNAL, " threw an exception");
  }
}

accel_status_t Stream::Query() {
  std::unique_lock lock(mutex_);
  if (error_ != ACCEL_SUCCESS) {
    const accel_status_t status = error_;
    const std::string message = error_message_;
    lock.unlock();
    return host().Fail(status, message);
  }
  return IdleLocked() ? ACCEL_SUCCESS : ACCEL_NOT_READY;
}

accel_status_t Stream::Synchronize(uint64_t timeout_ns) {
  if (OnWorker()) {
    return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                       "stream_synchronize was called from a host callback of the same stream, which would wait "
                       "for itself");
  }
  const Deadline deadline(timeout_ns);
  std::unique_lock lock(mutex_);
  // What this call waits for: every operation enqueued before it (operations complete in order).
  const uint64_t target = enqueued_;
  const auto reached = [this, target] { return completed_ >= target; };
  ++sync_waiters_;
  const bool done = deadline.Wait(completed_cv_, lock, reached);
  --sync_waiters_;
  if (!done) {
    const uint64_t pending = PendingLocked();
    lock.unlock();
    return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had " + std::to_string(pending) +
                                                " operations pending after " + std::to_string(timeout_ns) + " ns");
  }
  if (error_ != ACCEL_SUCCESS) {
    const accel_status_t status = error_;
    const std::string message = error_message_;
    lock.unlock();
    return host().Fail(status, message);
  }
  return ACCEL_SUCCESS;
}

std::unique_ptr<Launch> Stream::TakeSpareLaunch() {
  std::lock_guard lock(mutex_);
  if (spare_launches_.empty()) return nullptr;
  std::unique_ptr<Launch> launch = std::move(spare_launches_.back());
  spare_launches_.pop_back();
  return launch;
}

accel_status_t Stream::ClearError() {
  std::unique_lock lock(mutex_);
  if (!IdleLocked()) {
    const uint64_t pending = PendingLocked();
    lock.unlock();
    return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION, "cannot clear the stream's error while " +
                                                            std::to_string(pending) +
                                                            " operations are pending; synchronize first");
  }
  error_ = ACCEL_SUCCESS;
  error_message_.clear();
  return ACCEL_SUCCESS;
}

accel_copy_statistics_t Stream::CopyStatistics() {
  std::lock_guard lock(mutex_);
  return copies_;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* /*desc*/,
                            accel_bk_stream_t* out_stream) noexcept {
  // The description's priority is ignored: every stream has one worker thread of normal priority.
  Device* device = Unwrap(device_handle);
  const HostServices& host = *device->host;
  return Guard(host, "stream_create", [&]() -> accel_status_t {
    auto stream = std::make_unique<Stream>(device);
    try {
      stream->Start();
    } catch (const std::system_error& e) {
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                       std::string("cannot start the stream's worker thread: ") + e.what());
    }
    *out_stream = Wrap(stream.release());
    return ACCEL_SUCCESS;
  });
}

void StreamDestroy(accel_bk_stream_t handle) noexcept {
  Stream* stream = Unwrap(handle);
  const HostServices& host = stream->host();
  if (stream->OnWorker()) {
    // Destroying waits for the stream's work, which includes the calling callback: refuse rather than deadlock.
    host.Log(ACCEL_LOG_LEVEL_ERROR,
             "stream_destroy was called from a host callback of the same stream; the stream is leaked");
    return;
  }
  GuardVoid(host, "stream_destroy", [&] { std::unique_ptr<Stream> owned(stream); });
}

accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t handle, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    return stream->Enqueue(CopyHostToBufferOp{src, Unwrap(dst)->storage, dst_offset, size});
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    return stream->Enqueue(CopyBufferToHostOp{Unwrap(src)->storage, src_offset, dst, size});
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    const Buffer* from = Unwrap(src);
    const Buffer* to = Unwrap(dst);
    CopyPath path = CopyPath::kLocal;
    if (from->device != to->device) {
      const DeviceHooks* hooks = stream->device()->hooks;
      path = hooks != nullptr ? hooks->PathBetween(*from->device, *to->device) : CopyPath::kPeer;
    }
    return stream->Enqueue(CopyBufferOp{from->storage, src_offset, to->storage, dst_offset, size, path});
  });
}

accel_status_t StreamFillBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_fill_buffer", [&]() -> accel_status_t {
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4) {
      return stream->host().Fail(ACCEL_ERROR_INVALID_ARGUMENT, "fill pattern of " + std::to_string(pattern_size) +
                                                                   " bytes; the " + stream->host().backend_name() +
                                                                   " backend fills with 1, 2 or 4");
    }
    FillOp fill{Unwrap(buffer)->storage, offset, size, {}, pattern_size};
    std::memcpy(fill.pattern.data(), pattern, pattern_size);
    return stream->Enqueue(std::move(fill));
  });
}

accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t handle, accel_host_callback_t callback,
                                         void* user_data) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_enqueue_host_callback", [&] {
    return stream->Enqueue(HostCallbackOp{callback, user_data});
  });
}

accel_status_t StreamFreeBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_free_buffer", [&]() -> accel_status_t {
    Buffer* buffer = Unwrap(buffer_handle);
    const accel_status_t status = stream->Enqueue(FreeBufferOp{buffer->storage});
    // The handle goes now; the queued operation holds the storage until the worker reaches it. On failure the
    // buffer stays as it was.
    if (status == ACCEL_SUCCESS) std::unique_ptr<Buffer> released(buffer);
    return status;
  });
}

accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_record_event", [&]() -> accel_status_t {
    Event* event = Unwrap(event_handle);
    auto record = std::make_shared<Record>(event->timing());
    const accel_status_t status = stream->Enqueue(RecordEventOp{record});
    // The new record replaces the earlier one only once it is queued; the worker may already have completed it.
    if (status == ACCEL_SUCCESS) event->set_current(std::move(record));
    return status;
  });
}

accel_status_t StreamWaitEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_wait_event", [&]() -> accel_status_t {
    std::shared_ptr<Record> record = Unwrap(event_handle)->current();
    if (record == nullptr) return ACCEL_SUCCESS;  // never recorded: complete, nothing to wait for
    return stream->Enqueue(WaitEventOp{std::move(record)});
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

accel_status_t StreamLaunchKernel(accel_bk_stream_t handle, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_launch_kernel", [&]() -> accel_status_t {
    std::unique_ptr<Launch> copied = stream->TakeSpareLaunch();
    const accel_status_t status = Launch::Create(stream->host(), *Unwrap(kernel), *launch, &copied);
    if (status != ACCEL_SUCCESS) return status;
    return stream->Enqueue(LaunchKernelOp{std::move(copied)});
  });
}

accel_status_t StreamGetCopyStatistics(accel_bk_stream_t handle, accel_copy_statistics_t* out_statistics) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_get_copy_statistics", [&]() -> accel_status_t {
    accel_copy_statistics_t stats = stream->CopyStatistics();
    WritePrefix(stats, out_statistics);
    return ACCEL_SUCCESS;
  });
}

accel_status_t StreamEnqueueFailure(accel_bk_stream_t handle, accel_status_t status, const std::string& message) {
  return Unwrap(handle)->Enqueue(FailOp{status, message});
}

}  // namespace accel::host
