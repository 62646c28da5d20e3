// Streams: an in-order FIFO of operations per stream, run by the stream's own
// worker thread, with the stream's asynchronous error and the enqueue slots.
// A kernel launch is one operation; its work-groups run on the context's pool.
#include <pthread.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "common/recorded_events.h"
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
  std::unique_ptr<const Launch> launch;  // holds the buffers' storage and the module image until the op is gone
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

// Fills [dst, dst + size) with a 1, 2 or 4 byte pattern: one copy, then doubling copies of what is written.
void Fill(std::byte* dst, uint64_t size, const std::byte* pattern, uint32_t pattern_size) {
  if (size == 0) return;
  if (pattern_size == 1) {
    std::memset(dst, static_cast<int>(pattern[0]), size);
    return;
  }
  uint64_t written = pattern_size < size ? pattern_size : size;
  std::memcpy(dst, pattern, written);
  while (written < size) {
    const uint64_t chunk = written < size - written ? written : size - written;
    std::memcpy(dst + written, dst, chunk);
    written += chunk;
  }
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

}  // namespace

// An in-order queue of operations with its own worker thread; enqueueing returns at once. After an operation fails,
// the stream holds its status and message and skips later operations: records still complete, with that error, and
// host callbacks still run once, told the error.
// Thread-safe: the queue and state are guarded by the stream's mutex, which is never held while an operation runs.
class Stream {
 public:
  explicit Stream(Device* device) : device_(device) {}
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

 private:
  void Run();
  Failure Execute(Operation& op, accel_status_t prior) noexcept;
  bool IdleLocked() const { return queue_.empty() && !running_; }
  uint64_t PendingLocked() const { return queue_.size() + (running_ ? 1 : 0); }

  Device* const device_;
  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable idle_;
  std::deque<Operation> queue_;
  bool running_ = false;   // the worker is executing an operation it popped
  bool stopping_ = false;  // the destructor asked the worker to exit once the queue is empty
  uint64_t enqueued_ = 0;
  // The asynchronous error. Written only by the worker between operations and by ClearError while idle, so the
  // worker may read it without the lock while it executes an operation.
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};  // completed copies, under the mutex
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
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Operation{enqueued_ + 1, std::move(body)});
    ++enqueued_;
  }
  work_available_.notify_one();
  return ACCEL_SUCCESS;
}

void Stream::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_available_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;  // stopping, and drained
    Failure failure;
    accel_copy_statistics_t done{};
    {
      Operation op = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      const accel_status_t prior = error_;
      lock.unlock();
      failure = Execute(op, prior);
      if (prior == ACCEL_SUCCESS && failure.status == ACCEL_SUCCESS) Count(op.body, &done);
    }  // `op` dies here: the storage and records it held are released before the stream can report idle.
    lock.lock();
    backend::AddCopyStatistics(done, &copies_);
    if (failure.status != ACCEL_SUCCESS && error_ == ACCEL_SUCCESS) {
      error_ = failure.status;
      error_message_ = std::move(failure.message);
    }
    running_ = false;
    if (queue_.empty()) idle_.notify_all();
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
        Overloaded{[](CopyHostToBufferOp& copy) -> Failure {
                     std::memcpy(copy.dst->data() + copy.dst_offset, copy.src, copy.size);
                     return {};
                   },
                   [](CopyBufferToHostOp& copy) -> Failure {
                     std::memcpy(copy.dst, copy.src->data() + copy.src_offset, copy.size);
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
                     Fill(fill.dst->data() + fill.offset, fill.size, fill.pattern.data(), fill.pattern_size);
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
  if (!deadline.Wait(idle_, lock, [this] { return IdleLocked(); })) {
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
    std::unique_ptr<Launch> copied;
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
