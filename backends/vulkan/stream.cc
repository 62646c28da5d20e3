// Streams and events (docs/streams.md). Each stream is an in-order queue of
// operations run by the stream's own worker thread; enqueueing returns at
// once. The worker records each operation that needs the device into the
// next command buffer of the stream's ring and submits it to the device's
// queue (serialised by the queue's mutex; lavapipe has one queue) signalling
// the next value of the stream's timeline semaphore, without waiting; the
// host waits only where it needs the device's results (synchronize, host
// callbacks, host copies; README.md, "Hot path"). Where
// timeline semaphores are absent each submission waits on a fence. Each
// stream_record_event makes a new Record that completes once the work before
// it has run, with a GPU timestamp (vkCmdWriteTimestamp) for a timing event;
// one whose work is still running is deferred to the timeline value covering
// it (Record::Defer), the worker going on. An event points at its latest
// Record, and a wait holds the Record that was current when the wait was
// enqueued.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "common/fill.h"
#include "common/recorded_events.h"
#include "symbols.h"

namespace accel::vulkan {
namespace {

using backend::Clock;
using backend::DeadlineAfter;

// Host copies larger than this go through the staging buffer in pieces of this size.
constexpr uint64_t kStagingChunk = uint64_t{8} << 20;

// The largest copy between host-visible memories that may run on the enqueuing thread when the stream is idle
// (Stream::TryInline): small enough that an enqueue returns within tens of microseconds.
constexpr uint64_t kInlineLimit = uint64_t{1} << 20;
// The largest of those that runs under the stream's lock (Stream::TryInline): a few microseconds of memcpy.
constexpr uint64_t kLockedInlineLimit = uint64_t{64} << 10;

// Waits on `cv` with `lock` held until `done()` or the deadline; returns done().
bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
               const std::optional<Clock::time_point>& deadline, const std::function<bool()>& done) {
  if (!deadline) {
    cv.wait(lock, done);
    return true;
  }
  return cv.wait_until(lock, *deadline, done);
}

// A timestamp query's result, `ticks`, with only the bits `device`'s queue writes.
uint64_t ValidTicks(const Device& device, uint64_t ticks) {
  return MaskTicks(ticks, device.facts.timestamp_valid_bits);
}

// A stream's timeline semaphore and timestamp queries, shared with the records that complete when it reaches their
// value (Record::Defer), so that an event query or wait that read them before the stream was destroyed may still use
// them. Destroyed with its last holder; the stream settles its deferred records first, so that after the stream only
// calls in progress hold it (an event query or wait, another stream's wait operation), and the backend's devices
// live until context_destroy, which the core calls after every stream and event is gone. Thread-safe (any thread may
// wait on or read a semaphore, and read a query's result; only the stream's worker resets and writes queries, each
// once its earlier record completed).
class Timeline {
 public:
  // `queries` may be VK_NULL_HANDLE (a device without timestamps).
  Timeline(const Device* device, VkSemaphore semaphore, VkQueryPool queries)
      : device_(device), semaphore_(semaphore), queries_(queries) {}
  ~Timeline() {
    if (queries_ != VK_NULL_HANDLE) device_->vk.vkDestroyQueryPool(device_->device, queries_, nullptr);
    device_->vk.vkDestroySemaphore(device_->device, semaphore_, nullptr);
  }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // vkWaitSemaphores for `value`: VK_SUCCESS, VK_TIMEOUT or the failure.
  VkResult Wait(uint64_t value, uint64_t timeout_ns) const {
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &semaphore_;
    wait.pValues = &value;
    return device_->vk.vkWaitSemaphores(device_->device, &wait, timeout_ns);
  }
  // vkGetSemaphoreCounterValue.
  VkResult Value(uint64_t* out) const {
    return device_->vk.vkGetSemaphoreCounterValue(device_->device, semaphore_, out);
  }
  // The timestamp of query `index`, in ticks (its valid bits only): VK_SUCCESS, VK_NOT_READY (not written yet; only
  // without `wait`) or the failure.
  VkResult Timestamp(uint32_t index, bool wait, uint64_t* out_ticks) const {
    uint64_t ticks = 0;
    const VkQueryResultFlags flags = VK_QUERY_RESULT_64_BIT | (wait ? VK_QUERY_RESULT_WAIT_BIT : 0);
    const VkResult r = device_->vk.vkGetQueryPoolResults(device_->device, queries_, index, 1, sizeof(ticks), &ticks,
                                                         sizeof(ticks), flags);
    if (r != VK_SUCCESS) return r;
    *out_ticks = ValidTicks(*device_, ticks);
    return VK_SUCCESS;
  }

 private:
  const Device* const device_;
  const VkSemaphore semaphore_;
  const VkQueryPool queries_;
};

// One recording of an event: pending until the recording stream's worker reaches it, then complete with the
// stream's status at that point and, for a timing event, the device timestamp (in ticks of that device). A record
// whose earlier work is submitted but still running is *deferred* instead (Defer): it completes, without error,
// once the stream's timeline reaches the value that covers that work (for a timing record, its timestamp's
// submission, whose query it then reads), learnt by whoever asks first (Peek, Wait) or by the stream (its
// synchronize, its destruction), so that the worker goes on with the work behind it rather than waiting for the
// device (README.md, "Hot path"); a failure of that wait or read (device lost) is its error.
// Thread-safe: guarded by its own mutex, never held while the device is waited for (only while a timing record reads
// a timestamp already written); Complete wakes every waiter.
class Record {
 public:
  struct Outcome {
    accel_status_t status = ACCEL_SUCCESS;
    std::string message;         // the stream's error message when `status` is an error
    bool has_timestamp = false;  // a timing record that completed without error
    uint64_t ticks = 0;
    const Device* device = nullptr;  // whose clock `ticks` counts
  };

  explicit Record(bool timing) : timing_(timing) {}
  bool timing() const { return timing_; }

  void Complete(Outcome outcome) {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;  // a deferred record completes once, whoever learnt it first
      CompleteLocked(std::move(outcome));
    }
    completed_.notify_all();
  }

  // Completes once `timeline` reaches `value` (the stream's earlier work, submitted without error on `device`),
  // with the timestamp of `timeline`'s query `query` when it is not kNoQuery.
  static constexpr uint32_t kNoQuery = UINT32_MAX;
  void Defer(std::shared_ptr<const Timeline> timeline, uint64_t value, const Device* device,
             uint32_t query = kNoQuery) {
    {
      std::lock_guard lock(mutex_);
      timeline_ = std::move(timeline);
      value_ = value;
      device_ = device;
      query_ = query;
    }
    completed_.notify_all();  // waiters go on to wait on the timeline
  }

  // A failed outcome on `device`: `s`, its message after `prefix`.
  static Outcome Failed(const Device* device, const char* prefix, const Status& s) {
    Outcome outcome;
    outcome.status = s.code;
    outcome.message = prefix + s.message;
    outcome.device = device;
    return outcome;
  }

  bool done() {
    std::lock_guard lock(mutex_);
    return done_;
  }

  // Whether the record is complete, after completing it when it is deferred until a timeline value at most
  // `reached` (which the stream knows was reached without error; a timing record's read of its timestamp may still
  // fail it). For the stream's synchronize and destruction.
  bool SettleIfReached(uint64_t reached) {
    {
      std::lock_guard lock(mutex_);
      if (done_) return true;
      if (timeline_ == nullptr || value_ > reached) return false;
      CompleteReachedLocked(true);
    }
    completed_.notify_all();
    return true;
  }

  // The outcome once complete; nullopt while pending. A deferred record reads the timeline once (no wait).
  std::optional<Outcome> Peek() {
    std::unique_lock lock(mutex_);
    if (done_) return outcome_;
    if (timeline_ == nullptr) return std::nullopt;
    const std::shared_ptr<const Timeline> timeline = timeline_;
    const uint64_t value = value_;
    const Device* const device = device_;
    lock.unlock();
    uint64_t reached = 0;
    const VkResult r = timeline->Value(&reached);
    if (r != VK_SUCCESS)
      return Finish(Failed(device, "waiting for earlier device work: ", VkFailure("vkGetSemaphoreCounterValue", r)));
    if (reached < value) return std::nullopt;
    lock.lock();
    std::optional<Outcome> outcome = CompleteReachedLocked(false);  // nullopt: the timestamp not readable yet
    lock.unlock();
    completed_.notify_all();
    return outcome;
  }

  // Waits until complete or the deadline; returns the outcome, or nullopt on timeout.
  std::optional<Outcome> Wait(const std::optional<Clock::time_point>& deadline) {
    std::unique_lock lock(mutex_);
    if (!WaitUntil(completed_, lock, deadline, [this] { return done_ || timeline_ != nullptr; })) return std::nullopt;
    if (done_) return outcome_;
    const std::shared_ptr<const Timeline> timeline = timeline_;
    const uint64_t value = value_;
    const Device* const device = device_;
    lock.unlock();
    uint64_t wait_ns = UINT64_MAX;
    if (deadline) {
      const auto left = *deadline - Clock::now();
      wait_ns = left.count() > 0 ? static_cast<uint64_t>(std::chrono::nanoseconds(left).count()) : 0;
    }
    const VkResult r = timeline->Wait(value, wait_ns);
    if (r == VK_TIMEOUT) return std::nullopt;
    if (r != VK_SUCCESS)
      return Finish(Failed(device, "waiting for earlier device work: ", VkFailure("vkWaitSemaphores", r)));
    lock.lock();
    std::optional<Outcome> outcome = CompleteReachedLocked(true);
    lock.unlock();
    completed_.notify_all();
    return outcome;
  }

 private:
  // The outcome of a record whose value `timeline` reached: success, with the timestamp of `query` for a timing
  // record (nullopt while that is not readable, only without `wait`), or the failure to read it.
  static std::optional<Outcome> Reached(const Timeline& timeline, const Device* device, uint32_t query, bool wait) {
    Outcome outcome;
    outcome.device = device;
    if (query == kNoQuery) return outcome;
    const VkResult r = timeline.Timestamp(query, wait, &outcome.ticks);
    if (r == VK_NOT_READY && !wait) return std::nullopt;
    if (r != VK_SUCCESS)
      return Failed(device, "reading the event's timestamp: ", VkFailure("vkGetQueryPoolResults", r));
    outcome.has_timestamp = true;
    return outcome;
  }

  // Completes a deferred record whose value its timeline reached, unless someone completed it meanwhile, and returns
  // the outcome; nullopt (only without `wait`) while a timing record's timestamp is not readable yet. The query is
  // read under the lock, so that the stream cannot rewrite it meanwhile (it does so only once the record is done);
  // the value being reached, the read returns at once.
  std::optional<Outcome> CompleteReachedLocked(bool wait) {
    if (done_) return outcome_;
    std::optional<Outcome> outcome = Reached(*timeline_, device_, query_, wait);
    if (!outcome) return std::nullopt;
    CompleteLocked(std::move(*outcome));
    return outcome_;
  }

  void CompleteLocked(Outcome outcome) {
    outcome_ = std::move(outcome);
    done_ = true;
    timeline_.reset();
  }

  // Completes a deferred record with `outcome` (learnt from its timeline), unless someone completed it meanwhile;
  // returns the outcome it has.
  Outcome Finish(Outcome outcome) {
    Outcome result;
    {
      std::lock_guard lock(mutex_);
      if (!done_) CompleteLocked(std::move(outcome));
      result = outcome_;
    }
    completed_.notify_all();
    return result;
  }

  const bool timing_;
  std::mutex mutex_;
  std::condition_variable completed_;
  bool done_ = false;
  Outcome outcome_;
  std::shared_ptr<const Timeline> timeline_;  // while deferred
  uint64_t value_ = 0;
  const Device* device_ = nullptr;
  uint32_t query_ = kNoQuery;
};

// A buffer copy or fill on the stream's device that records commands only (no staging buffer, no wait), so that it
// may share a command buffer with the launches and commands around it.
struct DeviceCommand {
  enum class Kind { kNone, kCopy, kFill };
  Kind kind = Kind::kNone;
  std::shared_ptr<Allocation> from;  // kCopy's source
  std::shared_ptr<Allocation> to;
  uint64_t src_offset = 0;  // kCopy
  uint64_t dst_offset = 0;
  uint64_t size = 0;  // kFill: a multiple of 4, as dst_offset
  uint32_t word = 0;  // kFill's 4-byte pattern
};

// One queued operation. `run` does the work when the stream holds no error and returns its status, setting
// `*message` when it fails; otherwise `skip`, when set, runs instead, told the stream's error. A kernel launch is
// `launch` instead of `run`, a buffer copy or fill that records commands only is `command` (Stream::EnqueueDevice,
// or the worker's RunRecorded, records and submits them, several into one command buffer; no std::function for
// them). `copies` is added to the stream's copy statistics when the operation succeeds. What the lambdas capture
// (allocations, records), the launch and the command's buffers live as long as the operation.
struct Operation {
  const char* what = "";
  std::function<accel_status_t(std::string* message)> run;
  std::function<void(accel_status_t error, const std::string& message)> skip;
  accel_copy_statistics_t copies{};
  uint64_t number = 0;  // set when enqueued: 1 for the stream's first operation
  std::unique_ptr<PreparedLaunch> launch;
  DeviceCommand command;

  // Whether the operation is recorded into a command buffer by the stream (a launch or a device command).
  bool Recorded() const { return launch != nullptr || command.kind != DeviceCommand::Kind::kNone; }
  // Releases what the operation holds (its lambdas and their captures, its launch, its command's buffers); a few
  // tests when it holds nothing, so that a ring's slot is released and reused in place.
  void Clear() noexcept {
    if (run) run = nullptr;
    if (skip) skip = nullptr;
    launch.reset();
    if (command.kind != DeviceCommand::Kind::kNone) command = DeviceCommand{};
  }
};

constexpr const char* kLaunchWhat = "kernel launch";

// Runs `body` (an operation's status, `*message` set when it fails), an exception turned into a failure. Never
// throws: without the memory for the message, the status alone.
template <typename Body>
accel_status_t Caught(Body&& body, std::string* message) noexcept {
  const auto say = [message](const char* text, const char* detail) noexcept {
    try {
      *message = std::string(text) + detail;
    } catch (...) {
      message->clear();
    }
  };
  try {
    return body();
  } catch (const std::bad_alloc&) {
    say("out of host memory", "");
    return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  } catch (const std::exception& e) {
    say("threw an exception: ", e.what());
  } catch (...) {
    say("threw an exception", "");
  }
  return ACCEL_ERROR_INTERNAL;
}

// Writes a Status into an operation's result.
accel_status_t Report(const Status& s, std::string* message) {
  if (!s.ok()) *message = s.message;
  return s.code;
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

// An in-order queue of operations, the worker thread that runs them, and the Vulkan objects the worker records and
// submits with. After an operation fails the stream keeps its status and message (the asynchronous error) and skips
// later operations: records still complete, carrying the error, and host callbacks still run once, told the error.
//
// Device work is asynchronous: each operation that needs the device records one command buffer of the ring below
// (one barrier at its end: its writes visible to every later command and to the host; launches queued together share
// one, a barrier between each two) and submits it signalling the next value of the stream's timeline semaphore,
// without waiting. `submitted_` is the last value signalled,
// `completed_` the largest value known reached. A command buffer (and its descriptor pool) is reused only once the
// timeline passed the value of its last submission; an operation stays alive (what it captured: allocations,
// pipelines) in `retired_` until the timeline passes the value covering it. Waits happen where the host needs the
// device's results: synchronize (one wait for `submitted_`), host callbacks, host copies, a busy staging buffer; an
// event record behind running work is deferred instead (CompleteOrDefer, RecordTimestamp). Without timeline
// semaphores each submission waits on a fence at once (the old behaviour).
// Thread-safe: the queue, the error, `retired_` and `deferred_` are guarded by the stream's mutex, never held while an
// operation runs or the device is waited for; `submitted_` and `completed_` are atomic; the other Vulkan objects belong
// to whoever runs an operation: the worker, or an enqueuing thread while `inline_running_` (TryInline, EnqueueLaunch:
// only when the worker is idle, which then takes nothing until it is cleared); and to the constructor and destructor,
// when no worker runs.
class Stream {
 public:
  explicit Stream(Device* device) : device_(device) {}
  // Runs what is queued, joins the worker, waits for the device, then destroys the Vulkan objects. Never called on
  // the worker itself.
  ~Stream() {
    if (worker_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      work_.notify_one();
      worker_.join();
    }
    const DeviceFunctions& vk = device_->vk;
    const VkDevice d = device_->device;
    Status drained;
    if (semaphore_ != VK_NULL_HANDLE) drained = WaitValue(submitted_.load(), UINT64_MAX);
    // The deferred records: complete (all of them, or those the timeline is known to have reached before the device
    // failed), or failed as the device did; none holds the timeline after this.
    const uint64_t reached = drained.ok() ? UINT64_MAX : completed_.load();
    for (const Deferred& deferred : deferred_) {
      if (deferred.record->SettleIfReached(reached)) continue;
      deferred.record->Complete(Record::Failed(device_, "waiting for earlier device work: ", drained));
    }
    deferred_.clear();
    retired_.clear();
    staging_.reset();
    uniform_.reset();
    for (Slot& slot : slots_) {
      if (slot.descriptors != VK_NULL_HANDLE) vk.vkDestroyDescriptorPool(d, slot.descriptors, nullptr);
    }
    for (Deferred& owner : query_owners_) owner = Deferred{};
    if (timeline_ == nullptr && queries_ != VK_NULL_HANDLE) vk.vkDestroyQueryPool(d, queries_, nullptr);
    if (timeline_ == nullptr && semaphore_ != VK_NULL_HANDLE) vk.vkDestroySemaphore(d, semaphore_, nullptr);
    timeline_.reset();  // destroys both, unless an event query or wait in progress still reads them
    if (fence_ != VK_NULL_HANDLE) vk.vkDestroyFence(d, fence_, nullptr);
    if (pool_ != VK_NULL_HANDLE) vk.vkDestroyCommandPool(d, pool_, nullptr);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Creates the Vulkan objects and starts the worker.
  Status Start() {
    const DeviceFunctions& vk = device_->vk;
    const VkDevice d = device_->device;
    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;  // vkBeginCommandBuffer resets implicitly
    pool.queueFamilyIndex = device_->facts.queue_family;
    VkResult r = vk.vkCreateCommandPool(d, &pool, nullptr, &pool_);
    if (r != VK_SUCCESS) {
      pool_ = VK_NULL_HANDLE;
      return VkFailure("vkCreateCommandPool", r);
    }
    // Without timeline semaphores every submission is waited for at once: one command buffer is enough.
    slot_count_ = device_->timeline ? kSlots : 1;
    VkCommandBuffer buffers[kSlots] = {};
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = slot_count_;
    r = vk.vkAllocateCommandBuffers(d, &allocate, buffers);
    if (r != VK_SUCCESS) return VkFailure("vkAllocateCommandBuffers", r);
    for (uint32_t i = 0; i < slot_count_; ++i) {
      slots_[i].commands = buffers[i];
      // Each slot's descriptor pool is made now, so that the hot path creates nothing.
      Status s = MakeDescriptorPool(&slots_[i], kMinStorageBuffers);
      if (!s.ok()) return s;
    }
    if (device_->timeline) {
      VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
      type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
      type.initialValue = 0;
      VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
      info.pNext = &type;
      r = vk.vkCreateSemaphore(d, &info, nullptr, &semaphore_);
      if (r != VK_SUCCESS) {
        semaphore_ = VK_NULL_HANDLE;
        return VkFailure("vkCreateSemaphore (timeline)", r);
      }
    } else {
      VkFenceCreateInfo info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      r = vk.vkCreateFence(d, &info, nullptr, &fence_);
      if (r != VK_SUCCESS) {
        fence_ = VK_NULL_HANDLE;
        return VkFailure("vkCreateFence", r);
      }
    }
    if ((device_->capabilities.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING) != 0) {
      VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      info.queryType = VK_QUERY_TYPE_TIMESTAMP;
      info.queryCount = semaphore_ != VK_NULL_HANDLE ? kQueries : 1;  // a ring for deferred timing records
      r = vk.vkCreateQueryPool(d, &info, nullptr, &queries_);
      if (r != VK_SUCCESS) {
        queries_ = VK_NULL_HANDLE;
        return VkFailure("vkCreateQueryPool", r);
      }
    }
    if (semaphore_ != VK_NULL_HANDLE) timeline_ = std::make_shared<const Timeline>(device_, semaphore_, queries_);
    batch_.reserve(kBatch);
    spare_launches_.reserve(kSpareLaunches);  // ReleaseLocked never allocates
    try {
      worker_ = std::thread([this] { Run(); });
    } catch (const std::system_error& e) {
      return {ACCEL_ERROR_RESOURCE_EXHAUSTED, std::string("cannot start the stream's worker thread: ") + e.what()};
    }
    return Status::Ok();
  }

  Device* device() const { return device_; }
  const Host& host() const { return *device_->host; }
  bool OnWorker() const { return std::this_thread::get_id() == worker_.get_id(); }

  accel_status_t Enqueue(Operation&& op) {
    {
      std::lock_guard lock(mutex_);
      settled_.store(false, std::memory_order_relaxed);
      Operation& slot = queue_.append();  // may grow, and throw, before the operation is numbered
      op.number = ++enqueued_;
      slot = std::move(op);  // one move into the slot
    }
    work_.notify_one();
    return ACCEL_SUCCESS;
  }

  // Enqueues a kernel launch. When the stream is idle (nothing queued or running, no error) and so is its device
  // (every submission known complete, without a call; timeline semaphores), the calling thread records and submits
  // it itself, as a native caller would: no hand-off to the worker and back. Otherwise the device is busy anyway, and
  // the worker takes it, together with the launches queued behind it (Run: one command buffer and one submission for
  // them).
  accel_status_t EnqueueLaunch(std::unique_ptr<PreparedLaunch> launch) {
    Operation op;
    op.what = kLaunchWhat;
    op.launch = std::move(launch);
    return EnqueueDevice(std::move(op));
  }

  // Enqueues a launch or a device command (`op.Recorded()`), as EnqueueLaunch says; or a staged host copy (`op.run`
  // records and submits its own command buffer, and a read waits for it), which on an idle stream and device the
  // calling thread runs in the same way.
  accel_status_t EnqueueDevice(Operation&& op) {
    std::unique_lock lock(mutex_);
    settled_.store(false, std::memory_order_relaxed);
    // Without a timeline semaphore a submission waits for the device at once: that wait stays on the worker.
    if (semaphore_ == VK_NULL_HANDLE || !InlineAllowedLocked()) {
      Operation& slot = queue_.append();  // may grow, and throw, before the operation is numbered
      op.number = ++enqueued_;
      slot = std::move(op);  // one move into the slot
      lock.unlock();
      work_.notify_one();
      return ACCEL_SUCCESS;
    }
    op.number = ++enqueued_;
    inline_running_ = true;
    lock.unlock();
    RunClaimed(lock, op.number, op.what, op.copies, &op,
               [&](std::string* message) { return op.Recorded() ? RunOne(op, message) : op.run(message); });
    return ACCEL_SUCCESS;
  }

  // Runs `run` (as an operation's `run`) on the calling thread, as the worker would run the operation, when that
  // keeps stream order and needs no Vulkan object of the worker: nothing queued or running, no error, and every
  // submission known complete (no call is made to learn it). Returns false without calling it otherwise. `run` must
  // copy between host-visible (mapped) memories or host memory: it makes no command buffer and waits for nothing
  // once the timeline is known complete. An error it returns becomes the stream's, as on the worker; `copies` count
  // when it succeeds. Nothing is allocated for an operation that runs here.
  //
  // A copy of up to kLockedInlineLimit bytes runs under the stream's lock: one lock round trip, where claiming the
  // stream costs two (a thread that enqueues meanwhile waits for the memcpy, a few microseconds at most, as it waits
  // for the lock). A larger one claims the stream and runs unlocked (work enqueued meanwhile queues behind it).
  template <typename Run>
  bool TryInline(const char* what, uint64_t size, const accel_copy_statistics_t& copies, Run&& run) {
    std::unique_lock lock(mutex_);
    if (!InlineAllowedLocked()) return false;
    const uint64_t number = ++enqueued_;
    if (size <= kLockedInlineLimit) {
      std::string message;
      const accel_status_t status = Caught([&] { return run(&message); }, &message);
      if (current_ != nullptr) Abandon();
      CountInlineLocked(status, number, what, copies, message);
      return true;  // the stream was idle and stays so: nobody waits for it, and the worker has nothing to take
    }
    settled_.store(false, std::memory_order_relaxed);
    inline_running_ = true;
    lock.unlock();
    RunClaimed(lock, number, what, copies, nullptr, run);
    return true;
  }

  // A plain event record, run by the worker once every operation before it ran (so all their device work is
  // submitted, without error): completes `record` when that work is complete (known, or learnt by one read of the
  // timeline), else defers it to the timeline value that covers the work (Record::Defer), and goes on without waiting
  // for the device. A failed read (device lost) fails the record and the stream, as a failed wait would.
  accel_status_t CompleteOrDefer(const std::shared_ptr<Record>& record, std::string* message) {
    const uint64_t target = submitted_.load();
    if (timeline_ != nullptr && completed_.load() < target) {
      const Status s = Poll();
      if (!s.ok()) return FailRecord(*record, "waiting for earlier device work: ", s, message);
    }
    if (timeline_ == nullptr || completed_.load() >= target) {
      Record::Outcome outcome;
      outcome.device = device_;
      record->Complete(std::move(outcome));
      return ACCEL_SUCCESS;
    }
    Defer(record, target, Record::kNoQuery);
    return ACCEL_SUCCESS;
  }

  // Completes `record` with the failure `s` (its message after `prefix`), which the operation returns too.
  accel_status_t FailRecord(Record& record, const char* prefix, const Status& s, std::string* message) {
    Record::Outcome outcome = Record::Failed(device_, prefix, s);
    *message = outcome.message;
    record.Complete(std::move(outcome));
    return s.code;
  }

  // Defers `record` to the timeline value `target` (with the timestamp of `query`), kept in `deferred_` (worker).
  void Defer(const std::shared_ptr<Record>& record, uint64_t target, uint32_t query) {
    std::lock_guard lock(mutex_);
    SettleDeferredLocked();
    deferred_.push_back(Deferred{target, record});  // first: a push that fails defers nothing
    record->Defer(timeline_, target, device_, query);
  }

  bool HasTimeline() const { return timeline_ != nullptr; }

  // A timing event record, run by the worker as CompleteOrDefer (timeline semaphores only): writes a device
  // timestamp after all earlier work into the next query of the stream's ring and submits it, then defers `record`
  // to that submission's value; it reads the timestamp when it completes. The query's previous record completes
  // first (waited for, when its submission is still running: only with kQueries timing records in flight), so that
  // its timestamp is read before the query is reset. A failure fails the record and the stream.
  accel_status_t RecordTimestamp(const std::shared_ptr<Record>& record, std::string* message) {
    const auto fail = [&](const Status& s) {
      return FailRecord(*record, "reading the event's timestamp: ", s, message);
    };
    const uint32_t query = next_query_;
    Deferred& owner = query_owners_[query];
    static_assert(kQueries > kSlots, "fewer submissions than queries in flight: a query's record is due before reuse");
    if (owner.record != nullptr && !owner.record->done()) {
      const Status s = WaitValue(owner.value, UINT64_MAX);
      if (!s.ok()) return fail(s);
      if (!owner.record->SettleIfReached(owner.value)) {  // reads its timestamp
        return fail({ACCEL_ERROR_INTERNAL, "the timestamp query's earlier record did not complete"});
      }
    }
    owner = Deferred{};
    const DeviceFunctions& vk = device_->vk;
    Status s = Begin();
    if (!s.ok()) return fail(s);
    vk.vkCmdResetQueryPool(commands(), queries_, query, 1);
    vk.vkCmdWriteTimestamp(commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, query);
    s = Submit();
    if (!s.ok()) return fail(s);
    next_query_ = (query + 1) % kQueries;
    const uint64_t target = submitted_.load();
    owner = Deferred{target, record};
    Defer(record, target, query);
    return ACCEL_SUCCESS;
  }

  accel_status_t Query() {
    std::unique_lock lock(mutex_);
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    if (!QueueIdleLocked()) return ACCEL_NOT_READY;
    const Status s = Poll();
    if (!s.ok()) {
      SetDeviceErrorLocked(s);
      return host().Fail(error_, error_message_);
    }
    ReleaseRetiredLocked();
    SettleDeferredLocked();
    return completed_.load() >= submitted_.load() ? ACCEL_SUCCESS : ACCEL_NOT_READY;
  }

  accel_status_t Synchronize(uint64_t timeout_ns) {
    if (OnWorker()) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "called from a host callback of the same stream, which would wait for itself");
    }
    // Settled since the last synchronize that found it so (below): nothing to wait for, release or report. The
    // acquire pairs with the release there, after which every operation enqueued before had completed.
    if (settled_.load(std::memory_order_acquire)) return ACCEL_SUCCESS;
    const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout_ns);
    std::unique_lock lock(mutex_);
    if (!QueueIdleLocked() && !WaitUntil(idle_, lock, deadline, [this] { return QueueIdleLocked(); })) {
      const uint64_t pending = queue_.size() + batch_.size() + (inline_running_ ? 1 : 0);
      return host().Fail(ACCEL_ERROR_TIMEOUT, "the stream still had " + std::to_string(pending) +
                                                  " operations pending after " + std::to_string(timeout_ns) + " ns");
    }
    // Every operation is submitted: one wait for the last value (none when the timeline is known to be there).
    const uint64_t target = submitted_.load();
    if (completed_.load() < target) {
      lock.unlock();
      uint64_t wait_ns = UINT64_MAX;
      if (deadline) {
        const auto left = *deadline - Clock::now();
        wait_ns = left.count() > 0 ? static_cast<uint64_t>(std::chrono::nanoseconds(left).count()) : 0;
      }
      const Status s = WaitValue(target, wait_ns);
      lock.lock();
      if (s.code == ACCEL_ERROR_TIMEOUT) {
        return host().Fail(ACCEL_ERROR_TIMEOUT,
                           "the stream's device work was still running after " + std::to_string(timeout_ns) + " ns");
      }
      if (!s.ok()) SetDeviceErrorLocked(s);
    }
    ReleaseRetiredLocked();
    SettleDeferredLocked();
    if (error_ != ACCEL_SUCCESS) return host().Fail(error_, error_message_);
    if (QueueIdleLocked() && retired_.empty() && completed_.load() >= submitted_.load()) {
      settled_.store(true, std::memory_order_release);
    }
    return ACCEL_SUCCESS;
  }

  accel_status_t ClearError() {
    std::lock_guard lock(mutex_);
    bool idle = QueueIdleLocked();
    if (idle && completed_.load() < submitted_.load()) {
      idle = Poll().ok() && completed_.load() >= submitted_.load();
    }
    if (!idle) {
      return host().Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                         "cannot clear the stream's error while work is pending; synchronize first");
    }
    ReleaseRetiredLocked();
    SettleDeferredLocked();
    error_ = ACCEL_SUCCESS;
    error_message_.clear();
    return ACCEL_SUCCESS;
  }

  accel_copy_statistics_t CopyStatistics() {
    std::lock_guard lock(mutex_);
    return copies_;
  }

  std::unique_ptr<PreparedLaunch> TakeSpareLaunch() {
    {
      std::lock_guard lock(mutex_);
      if (!spare_launches_.empty()) {
        std::unique_ptr<PreparedLaunch> launch = std::move(spare_launches_.back());
        spare_launches_.pop_back();
        return launch;
      }
    }
    return std::make_unique<PreparedLaunch>();
  }

  // --- The worker's Vulkan helpers: called from operations only, on the worker thread ---------------------------

  // Starts recording the next command buffer of the ring, once the device has finished its previous submission
  // (known from the timeline values; else polled, else waited for).
  Status Begin() {
    const DeviceFunctions& vk = device_->vk;
    Slot& slot = slots_[next_slot_];
    if (slot.value > completed_.load()) {
      Status s = Poll();
      if (s.ok() && slot.value > completed_.load()) s = WaitValue(slot.value, UINT64_MAX);
      if (!s.ok()) return s;
    }
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    const VkResult r = vk.vkBeginCommandBuffer(slot.commands, &begin);  // resets it (the pool's flag)
    if (r != VK_SUCCESS) return VkFailure("vkBeginCommandBuffer", r);
    next_slot_ = (next_slot_ + 1) % slot_count_;
    slot.sets = 0;
    slot.storage = 0;
    current_ = &slot;
    return Status::Ok();
  }
  VkCommandBuffer commands() const { return current_->commands; }

  // Ends a command buffer begun but not to be submitted (an operation failed while recording).
  void Abandon() {
    if (current_ == nullptr) return;
    device_->vk.vkResetCommandBuffer(current_->commands, 0);
    current_ = nullptr;
  }

  // Ends the command buffer, after one barrier that makes its writes visible to all later commands and to the host,
  // and submits it signalling the next timeline value, without waiting (a fence is waited for at once).
  Status Submit() {
    const DeviceFunctions& vk = device_->vk;
    Slot& slot = *current_;
    current_ = nullptr;
    Barrier(slot.commands);
    VkResult r = vk.vkEndCommandBuffer(slot.commands);
    if (r != VK_SUCCESS) return VkFailure("vkEndCommandBuffer", r);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &slot.commands;
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    const uint64_t value = submitted_.load() + 1;
    if (semaphore_ != VK_NULL_HANDLE) {
      timeline.signalSemaphoreValueCount = 1;
      timeline.pSignalSemaphoreValues = &value;
      submit.pNext = &timeline;
      submit.signalSemaphoreCount = 1;
      submit.pSignalSemaphores = &semaphore_;
    }
    {
      std::lock_guard lock(device_->queue_mutex);
      r = vk.vkQueueSubmit(device_->queue, 1, &submit, fence_);
    }
    if (r != VK_SUCCESS) return VkFailure("vkQueueSubmit", r);
    slot.value = value;
    submitted_.store(value);
    if (semaphore_ == VK_NULL_HANDLE) {
      r = vk.vkWaitForFences(device_->device, 1, &fence_, VK_TRUE, UINT64_MAX);
      vk.vkResetFences(device_->device, 1, &fence_);
      if (r != VK_SUCCESS) return VkFailure("vkWaitForFences", r);
      Advance(value);
    }
    return Status::Ok();
  }

  // Records one barrier: every earlier write of the queue visible to every later command and to the host, and every
  // later command after every earlier one (the write-after-read order of a reused uniform buffer).
  void Barrier(VkCommandBuffer commands) const {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    barrier.dstAccessMask =
        VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
    device_->vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                                     nullptr, 0, nullptr);
  }

  // Waits until the device has run everything submitted so far; nothing when the timeline is known to be there.
  Status Drain() { return WaitValue(submitted_.load(), UINT64_MAX); }

  // The stream's host-visible staging buffer, at least min(size, kStagingChunk) bytes, once the device no longer
  // uses it (the host may write it). It grows in 64 KiB steps and is kept for the stream's life; call StagingUsed
  // after submitting work that reads or writes it.
  Status Staging(uint64_t size, Allocation** out) {
    const uint64_t want = std::min(size, kStagingChunk);
    if (staging_ == nullptr || staging_->size() < want) {
      Retire(std::move(staging_));
      constexpr uint64_t kStep = uint64_t{64} << 10;  // kStagingChunk is a multiple of it
      const uint64_t rounded = std::max((want + kStep - 1) / kStep * kStep, kStep);
      Status s = Allocate(device_, rounded, MemoryUse::kStaging, &staging_);
      if (!s.ok()) return s;
      staging_value_ = 0;
    }
    Status s = WaitValue(staging_value_, UINT64_MAX);
    if (!s.ok()) return s;
    *out = staging_.get();
    return Status::Ok();
  }
  void StagingUsed() { staging_value_ = submitted_.load(); }

  // The stream's uniform buffer for kernels whose scalars live in one, at least `size` bytes. Launches write it
  // inside their command buffers (ordered by the barriers), so it is never waited for.
  Status Uniform(uint64_t size, Allocation** out) {
    if (uniform_ == nullptr || uniform_->size() < size) {
      Retire(std::move(uniform_));
      Status s = Allocate(device_, std::max<uint64_t>(size, 256), MemoryUse::kDevice, &uniform_);
      if (!s.ok()) return s;
    }
    *out = uniform_.get();
    return Status::Ok();
  }

  // A descriptor set of `layout`, with `storage_buffers` storage buffers and a uniform buffer, from the pool of the
  // command buffer being recorded. The first set of a recording resets the pool (that command buffer's previous
  // submission has completed) and grows it when one set needs more storage buffers than it holds; later sets of the
  // same recording must fit (FitsBatch).
  Status DescriptorSet(VkDescriptorSetLayout layout, uint32_t storage_buffers, VkDescriptorSet* out) {
    const DeviceFunctions& vk = device_->vk;
    const VkDevice d = device_->device;
    Slot& slot = *current_;
    if (slot.sets == 0) {
      if (slot.descriptors == VK_NULL_HANDLE || storage_buffers > slot.capacity) {  // none after a failed growth
        Status s = MakeDescriptorPool(&slot, storage_buffers);
        if (!s.ok()) return s;
      }
      const VkResult r = vk.vkResetDescriptorPool(d, slot.descriptors, 0);
      if (r != VK_SUCCESS) return VkFailure("vkResetDescriptorPool", r);
    }
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = slot.descriptors;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &layout;
    const VkResult r = vk.vkAllocateDescriptorSets(d, &allocate, out);
    if (r != VK_SUCCESS) return VkFailure("vkAllocateDescriptorSets", r);
    ++slot.sets;
    slot.storage += storage_buffers;
    return Status::Ok();
  }

  // Writes a device timestamp after all earlier work, waits for it and reads it back, in ticks.
  Status Timestamp(uint64_t* out_ticks) {
    const DeviceFunctions& vk = device_->vk;
    Status s = Begin();
    if (!s.ok()) return s;
    vk.vkCmdResetQueryPool(commands(), queries_, 0, 1);
    vk.vkCmdWriteTimestamp(commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
    s = Submit();
    if (s.ok()) s = Drain();
    if (!s.ok()) return s;
    uint64_t ticks = 0;
    const VkResult r = vk.vkGetQueryPoolResults(device_->device, queries_, 0, 1, sizeof(ticks), &ticks, sizeof(ticks),
                                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS) return VkFailure("vkGetQueryPoolResults", r);
    *out_ticks = ValidTicks(*device_, ticks);
    return Status::Ok();
  }

 private:
  static constexpr uint32_t kSlots = 16;    // command buffers in flight per stream
  static constexpr uint32_t kQueries = 64;  // timestamp queries per stream (deferred timing records in flight)
  static constexpr uint32_t kBatch = 32;    // operations one command buffer records at most (and sets its pool holds)
  static constexpr uint32_t kMinStorageBuffers = 128;  // each slot's descriptor pool holds at least these

  // One command buffer of the ring, its descriptor pool, and the timeline value its last submission signals.
  struct Slot {
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    uint32_t capacity = 0;  // storage buffers the pool holds
    uint32_t sets = 0;      // descriptor sets allocated since the recording began
    uint32_t storage = 0;   // storage buffers of those sets
    uint64_t value = 0;     // 0: never submitted
  };

  // What must stay alive until the timeline reaches `value`.
  struct Retired {
    uint64_t value = 0;
    Operation op;
    std::shared_ptr<Allocation> allocation;
  };

  // Idle as far as the worker goes: everything popped (or run inline) has run (and been submitted).
  bool QueueIdleLocked() const { return queue_.empty() && !running_ && !inline_running_; }

  Status MakeDescriptorPool(Slot* slot, uint32_t storage_buffers) {
    const DeviceFunctions& vk = device_->vk;
    const VkDevice d = device_->device;
    if (slot->descriptors != VK_NULL_HANDLE) vk.vkDestroyDescriptorPool(d, slot->descriptors, nullptr);
    slot->descriptors = VK_NULL_HANDLE;
    slot->capacity = 0;
    // Room for a few sets of a kernel with more buffers than the minimum, so that its launches still batch.
    const uint32_t capacity =
        std::max<uint32_t>(storage_buffers > kMinStorageBuffers ? storage_buffers * 4 : 0, kMinStorageBuffers);
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, capacity},
                                     {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kBatch}};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = kBatch;
    info.poolSizeCount = 2;
    info.pPoolSizes = sizes;
    const VkResult r = vk.vkCreateDescriptorPool(d, &info, nullptr, &slot->descriptors);
    if (r != VK_SUCCESS) {
      slot->descriptors = VK_NULL_HANDLE;
      return VkFailure("vkCreateDescriptorPool", r);
    }
    slot->capacity = capacity;
    return Status::Ok();
  }

  // Raises `completed_` to `value` (never lowers it).
  void Advance(uint64_t value) {
    uint64_t known = completed_.load();
    while (known < value && !completed_.compare_exchange_weak(known, value)) {
    }
  }

  // Waits until the timeline reaches `value`: no call when it is known to; ACCEL_ERROR_TIMEOUT after `timeout_ns`.
  // Thread-safe (any thread may wait on the semaphore).
  Status WaitValue(uint64_t value, uint64_t timeout_ns) {
    if (completed_.load() >= value || semaphore_ == VK_NULL_HANDLE) return Status::Ok();
    VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait.semaphoreCount = 1;
    wait.pSemaphores = &semaphore_;
    wait.pValues = &value;
    const VkResult r = device_->vk.vkWaitSemaphores(device_->device, &wait, timeout_ns);
    if (r == VK_TIMEOUT) return {ACCEL_ERROR_TIMEOUT, "vkWaitSemaphores timed out"};
    if (r != VK_SUCCESS) return VkFailure("vkWaitSemaphores", r);
    Advance(value);
    return Status::Ok();
  }

  // Reads the timeline's current value (one query), when work is outstanding.
  Status Poll() {
    if (semaphore_ == VK_NULL_HANDLE || completed_.load() >= submitted_.load()) return Status::Ok();
    uint64_t value = 0;
    const VkResult r = device_->vk.vkGetSemaphoreCounterValue(device_->device, semaphore_, &value);
    if (r != VK_SUCCESS) return VkFailure("vkGetSemaphoreCounterValue", r);
    Advance(value);
    return Status::Ok();
  }

  // A failure found waiting for (or polling) submitted work becomes the stream's error, unless it holds one.
  void SetDeviceErrorLocked(const Status& s) {
    if (error_ != ACCEL_SUCCESS) return;
    settled_.store(false, std::memory_order_relaxed);
    error_ = s.code;
    error_message_ = "the stream's submitted device work failed: " + s.message;
  }

  // Keeps `allocation` alive until the device has run what is submitted now (worker only).
  void Retire(std::shared_ptr<Allocation> allocation) {
    if (allocation == nullptr) return;
    std::unique_lock lock(mutex_);
    if (completed_.load() >= submitted_.load()) return;  // released here, after the lock
    try {
      Retired& retired = retired_.append();
      retired.value = submitted_.load();
      retired.op.Clear();  // a moved-from operation is empty in practice; this makes sure
      retired.allocation = std::move(allocation);
    } catch (const std::bad_alloc&) {
      // No room to keep it: wait until the device no longer uses it rather than free it under submitted work.
      lock.unlock();
      (void)Drain();
      throw;
    }
  }

  // Releases what `op` holds; its launch, released, goes to the spares.
  void ReleaseLocked(Operation& op) {
    if (op.launch && spare_launches_.size() < kSpareLaunches) {
      op.launch->Release();
      spare_launches_.push_back(std::move(op.launch));
    }
    op.Clear();
  }

  // Makes operation #`number`'s failure the stream's error. Never throws: without the memory for the message, the
  // status alone.
  void SetErrorLocked(accel_status_t status, uint64_t number, const char* what, const std::string& message) noexcept {
    settled_.store(false, std::memory_order_relaxed);
    error_ = status;
    try {
      error_message_ = "operation #" + std::to_string(number) + " (" + what + ") failed: " + message;
    } catch (...) {
      error_message_.clear();
    }
  }

  // Keeps what `op` holds alive until the device has run what is submitted now, or releases it at once when the
  // device has run everything. Never throws: without the memory to keep it, it waits for the device first.
  void RetireOrReleaseLocked(Operation& op) noexcept {
    const uint64_t submitted = submitted_.load();
    if (completed_.load() < submitted) {
      try {
        retired_.Reserve(retired_.size() + 1);  // append cannot throw now
        Retired& retired = retired_.append();
        retired.value = submitted;
        retired.op = std::move(op);
      } catch (...) {
        (void)WaitValue(submitted, UINT64_MAX);  // a failure here is the next synchronize's to report
      }
    }
    ReleaseLocked(op);
    ReleaseRetiredLocked();
  }

  // Whether an operation may run on the enqueuing thread now (TryInline, EnqueueLaunch): nothing queued or running,
  // no error, and every submission known complete (no call is made to learn it).
  bool InlineAllowedLocked() const {
    return QueueIdleLocked() && error_ == ACCEL_SUCCESS && completed_.load() >= submitted_.load();
  }

  // Runs operation #`number` on the calling thread, which claimed the stream (set `inline_running_`, so that the
  // worker takes nothing meanwhile, and released `lock`), as the worker would run it: `run` returns its status; a
  // command buffer it left open is abandoned. Then, under the lock: a failure becomes the stream's error, a success
  // counts `copies`; what `holds` holds (when given) lives until the device has run what was submitted; the worker
  // may go on. Returns with `lock` released.
  template <typename Run>
  void RunClaimed(std::unique_lock<std::mutex>& lock, uint64_t number, const char* what,
                  const accel_copy_statistics_t& copies, Operation* holds, Run&& run) {
    std::string message;
    const accel_status_t status = Caught([&] { return run(&message); }, &message);
    if (current_ != nullptr) Abandon();
    lock.lock();
    CountInlineLocked(status, number, what, copies, message);
    if (holds != nullptr) RetireOrReleaseLocked(*holds);
    inline_running_ = false;
    const bool wake = !queue_.empty();
    if (QueueIdleLocked()) idle_.notify_all();
    lock.unlock();
    if (wake) work_.notify_one();
  }

  // The outcome of operation #`number`, run on the enqueuing thread (TryInline, RunClaimed): a failure becomes the
  // stream's error, as on the worker; a success counts `copies`.
  void CountInlineLocked(accel_status_t status, uint64_t number, const char* what,
                         const accel_copy_statistics_t& copies, const std::string& message) {
    if (status < 0) {
      SetErrorLocked(status, number, what, message);
    } else {
      backend::AddCopyStatistics(copies, &copies_);
    }
  }

  // Whether `launch` may follow the launches already recorded into the current command buffer: its scalars fit the
  // uniform buffer they use (which must not be replaced under them) and its descriptor set fits what the slot's pool
  // has left (worker only).
  bool FitsBatch(const PreparedLaunch& launch) const {
    const uint32_t uniform_bytes = LaunchUniformBytes(launch);
    if (uniform_bytes != 0 && (uniform_ == nullptr || uniform_->size() < uniform_bytes)) return false;
    if (LaunchSetLayout(launch) == VK_NULL_HANDLE) return true;
    const Slot& slot = *current_;
    return slot.sets < kBatch && slot.storage + LaunchStorageBuffers(launch) <= slot.capacity;
  }

  // Completes the deferred records whose value the timeline is known to have reached (oldest first: their values
  // never decrease), and forgets them (some an event query or wait completed first).
  void SettleDeferredLocked() {
    const uint64_t reached = completed_.load();
    while (!deferred_.empty() && deferred_.front().value <= reached) {
      deferred_.front().record->SettleIfReached(reached);
      deferred_.pop_front();
    }
  }

  // Releases what the device no longer uses, oldest first.
  void ReleaseRetiredLocked() {
    const uint64_t done = completed_.load();
    while (!retired_.empty() && retired_.front().value <= done) {
      Retired& retired = retired_.front();  // released in place: the slot is reused as it is
      ReleaseLocked(retired.op);
      retired.allocation.reset();
      retired_.drop_front();
    }
  }

  // The worker: pops each operation in order and runs it (or skips it) without holding the lock.
  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [this] { return (stopping_ && !inline_running_) || (!queue_.empty() && !inline_running_); });
      if (queue_.empty()) return;  // stopping, and drained
      batch_.push_back(queue_.pop_front());
      running_ = true;
      const accel_status_t prior = error_;
      std::string prior_message;
      try {
        if (prior != ACCEL_SUCCESS) prior_message = error_message_;
      } catch (const std::bad_alloc&) {  // on the worker nothing may throw: the operations still skip, with the code
      }
      lock.unlock();
      std::string message;
      size_t failed = 0;  // the operation of batch_ a failure is charged to
      const accel_status_t status = prior == ACCEL_SUCCESS && batch_[0].Recorded()
                                        ? RunRecorded(lock, &failed, &message)
                                        : Execute(batch_[0], prior, prior_message, &message);
      if (current_ != nullptr) Abandon();  // an operation that failed while recording
      lock.lock();
      for (size_t i = 0; i < batch_.size(); ++i) {
        Operation& op = batch_[i];
        if (prior == ACCEL_SUCCESS && status < 0 && i == failed) {
          SetErrorLocked(status, op.number, op.what, message);
        } else if (prior == ACCEL_SUCCESS && (status >= 0 || i < failed)) {
          backend::AddCopyStatistics(op.copies, &copies_);
        }
        // What the operation holds lives until the device has run it; release what it no longer uses.
        RetireOrReleaseLocked(op);
      }
      batch_.clear();
      running_ = false;
      if (QueueIdleLocked()) idle_.notify_all();
    }
  }

  // Records a kernel launch into the command buffer being recorded, after a barrier when it follows another
  // operation of that command buffer (stream order within it). Whoever owns the Vulkan objects calls it (the worker, or
  // an enqueuing thread while the stream is idle); the caller abandons the command buffer when it fails.
  Status RecordOne(PreparedLaunch& launch, bool follows) noexcept {
    Status s;
    s.code = Caught([&] { return Report(RecordOneOrThrow(launch, follows), &s.message); }, &s.message);
    return s;
  }
  Status RecordOneOrThrow(PreparedLaunch& launch, bool follows) {
    Allocation* uniform = nullptr;
    const uint32_t uniform_bytes = LaunchUniformBytes(launch);
    if (uniform_bytes != 0) {
      Status s = Uniform(uniform_bytes, &uniform);
      if (!s.ok()) return s;
    }
    if (follows) Barrier(commands());
    VkDescriptorSet set = VK_NULL_HANDLE;
    const VkDescriptorSetLayout layout = LaunchSetLayout(launch);
    if (layout != VK_NULL_HANDLE) {
      Status s = DescriptorSet(layout, LaunchStorageBuffers(launch), &set);
      if (!s.ok()) return s;
    }
    RecordLaunch(launch, commands(), set, uniform);
    return Status::Ok();
  }

  // Records a buffer copy or fill into the command buffer being recorded, after a barrier when it follows another
  // operation of that command buffer (as RecordOne).
  void RecordCommand(const DeviceCommand& c, bool follows) const {
    VkCommandBuffer commands = current_->commands;
    if (follows) Barrier(commands);
    if (c.kind == DeviceCommand::Kind::kCopy) {
      const VkBufferCopy region{c.src_offset, c.dst_offset, c.size};
      device_->vk.vkCmdCopyBuffer(commands, c.from->buffer(), c.to->buffer(), 1, &region);
    } else {
      device_->vk.vkCmdFillBuffer(commands, c.to->buffer(), c.dst_offset, c.size, c.word);
    }
  }

  // Records a launch or a device command (`op.Recorded()`), as RecordOne.
  Status RecordOperation(Operation& op, bool follows) noexcept {
    if (op.launch) return RecordOne(*op.launch, follows);
    RecordCommand(op.command, follows);
    return Status::Ok();
  }

  // Whether the queued `op` may follow the operations already recorded into the current command buffer (worker only).
  bool FitsBatch(const Operation& op) const {
    if (op.launch) return FitsBatch(*op.launch);
    return op.command.kind != DeviceCommand::Kind::kNone;
  }

  // Records and submits one launch or device command in a command buffer of its own.
  accel_status_t RunOne(Operation& op, std::string* message) {
    Status s = Begin();
    if (s.ok()) s = RecordOperation(op, false);
    if (s.ok()) s = Submit();
    return Report(s, message);
  }

  // Records the launch or device command batch_[0], then the ones queued right behind it while they fit the same
  // command buffer (FitsBatch, at most kBatch), each after a barrier, and submits them with one vkQueueSubmit (worker
  // only; `lock` is the stream's, unlocked on entry and on return). An operation that fails to record is charged the
  // failure (`*failed`, its index in batch_) and ends the batch; those before it are submitted (a failed submission
  // is charged to the first).
  accel_status_t RunRecorded(std::unique_lock<std::mutex>& lock, size_t* failed, std::string* message) {
    *failed = 0;
    return Caught(
        [&] {
          Status s = Begin();
          for (size_t i = 0; s.ok(); ++i) {
            s = RecordOperation(batch_[i], i > 0);
            if (!s.ok()) {
              *failed = i;
              if (i == 0) break;
              Status submitted = Submit();  // the launches before it
              if (!submitted.ok()) {
                *failed = 0;
                s = std::move(submitted);
              }
              break;
            }
            lock.lock();
            const bool more = batch_.size() < kBatch && error_ == ACCEL_SUCCESS && !queue_.empty() &&
                              queue_.front().Recorded() && FitsBatch(queue_.front());
            if (more) batch_.push_back(queue_.pop_front());
            lock.unlock();
            if (!more) {
              s = Submit();
              break;
            }
          }
          return Report(s, message);
        },
        message);
  }

  accel_status_t Execute(Operation& op, accel_status_t prior, const std::string& prior_message, std::string* message) {
    return Caught(
        [&]() -> accel_status_t {
          if (prior != ACCEL_SUCCESS) {
            if (op.skip) op.skip(prior, prior_message);
            return ACCEL_SUCCESS;
          }
          return op.run(message);
        },
        message);
  }

  Device* const device_;
  std::mutex mutex_;
  std::condition_variable work_;  // the queue grew, or the stream is stopping
  std::condition_variable idle_;  // the queue drained
  backend::Ring<Operation> queue_;
  std::vector<Operation> batch_;  // what the worker popped and runs (changed by the worker, under the mutex)
  bool running_ = false;          // the worker is running an operation it popped
  bool inline_running_ = false;   // an enqueuing thread is running an operation (TryInline, EnqueueLaunch)
  // Nothing queued, running or submitted and not known complete, nothing retired, no error: set (release) by a
  // synchronize that found the stream so, cleared under the mutex by every enqueue that changes that (an inline copy
  // under the lock does not), read without the mutex by Synchronize. A stale `false` only costs the slow path.
  std::atomic<bool> settled_{true};
  bool stopping_ = false;
  uint64_t enqueued_ = 0;
  accel_status_t error_ = ACCEL_SUCCESS;
  std::string error_message_;
  accel_copy_statistics_t copies_{};
  backend::Ring<Retired> retired_;                               // by value, ascending
  static constexpr size_t kSpareLaunches = 64;                   // released launches kept for reuse; more are freed
  std::vector<std::unique_ptr<PreparedLaunch>> spare_launches_;  // under the mutex

  // The timeline: the last value submitted and the largest known reached.
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};

  // The worker's Vulkan objects.
  VkCommandPool pool_ = VK_NULL_HANDLE;
  Slot slots_[kSlots];
  uint32_t slot_count_ = 1;
  uint32_t next_slot_ = 0;
  Slot* current_ = nullptr;                 // the slot being recorded
  VkSemaphore semaphore_ = VK_NULL_HANDLE;  // timeline (owned by timeline_ once made); or
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;  // timestamps (owned by timeline_ once made: kQueries; else 1)
  std::shared_ptr<Allocation> staging_;
  uint64_t staging_value_ = 0;  // the timeline value after which the device no longer uses staging_
  std::shared_ptr<Allocation> uniform_;
  std::shared_ptr<const Timeline> timeline_;  // semaphore_ and queries_, shared with deferred records
  // A record deferred to the timeline value `value` (CompleteOrDefer, RecordTimestamp).
  struct Deferred {
    uint64_t value = 0;
    std::shared_ptr<Record> record;
  };
  std::deque<Deferred> deferred_;    // deferred records not yet settled by the stream, by value (under mutex_)
  Deferred query_owners_[kQueries];  // the timing record each query was last written for (worker only)
  uint32_t next_query_ = 0;          // (worker only)

  std::thread worker_;  // started by Start() once everything above is constructed
};

namespace {

// --- Host <-> buffer transfers, on the worker ----------------------------------------------------------------------

// `allocation` and the stream share a device: host-visible memory is a memcpy, other memory goes through the
// stream's staging buffer in chunks.
Status WriteFromHost(Stream* stream, const Allocation& to, uint64_t offset, const std::byte* from, uint64_t size) {
  if (to.mapped() != nullptr) {
    // The host writes memory that earlier device work of the stream may still read or write.
    Status s = stream->Drain();
    if (!s.ok()) return s;
    std::memcpy(to.mapped() + offset, from, size);
    return to.Flush();
  }
  // Each piece waits only until the device no longer reads the staging buffer (the previous piece's copy); the
  // last copy is not waited for (the caller's memory is already in the staging buffer).
  Allocation* staging = nullptr;
  Status s = Status::Ok();
  for (uint64_t done = 0; s.ok() && done < size;) {
    s = stream->Staging(size, &staging);
    if (!s.ok()) break;
    const uint64_t n = std::min(size - done, staging->size());
    std::memcpy(staging->mapped(), from + done, n);
    s = staging->Flush();
    if (s.ok()) s = stream->Begin();
    if (!s.ok()) break;
    VkBufferCopy region{0, offset + done, n};
    stream->device()->vk.vkCmdCopyBuffer(stream->commands(), staging->buffer(), to.buffer(), 1, &region);
    s = stream->Submit();
    if (s.ok()) stream->StagingUsed();
    done += n;
  }
  return s;
}

Status ReadToHost(Stream* stream, const Allocation& from, uint64_t offset, std::byte* to, uint64_t size) {
  if (from.mapped() != nullptr) {
    // The host reads what earlier device work of the stream wrote.
    Status s = stream->Drain();
    if (s.ok()) s = from.Invalidate();
    if (s.ok()) std::memcpy(to, from.mapped() + offset, size);
    return s;
  }
  Allocation* staging = nullptr;
  Status s = stream->Staging(size, &staging);
  for (uint64_t done = 0; s.ok() && done < size;) {
    const uint64_t n = std::min(size - done, staging->size());
    s = stream->Begin();
    if (!s.ok()) break;
    VkBufferCopy region{offset + done, 0, n};
    stream->device()->vk.vkCmdCopyBuffer(stream->commands(), from.buffer(), staging->buffer(), 1, &region);
    s = stream->Submit();
    if (s.ok()) s = stream->Drain();  // the piece must be in the staging buffer before the host reads it
    if (s.ok()) s = staging->Invalidate();
    if (s.ok()) std::memcpy(to + done, staging->mapped(), n);
    done += n;
  }
  return s;
}

// A buffer of another device of this backend: host-visible memory directly, else that device's utility submission
// through a temporary staging buffer.
Status ReadOther(Device* device, const Allocation& from, uint64_t offset, std::byte* to, uint64_t size) {
  if (from.mapped() != nullptr) {
    Status s = from.Invalidate();
    if (s.ok()) std::memcpy(to, from.mapped() + offset, size);
    return s;
  }
  std::shared_ptr<Allocation> staging;
  Status s = Allocate(device, size, MemoryUse::kStaging, &staging);
  if (!s.ok()) return s;
  VkBufferCopy region{offset, 0, size};
  s = RunOnDevice(
      device, [&](VkCommandBuffer c) { device->vk.vkCmdCopyBuffer(c, from.buffer(), staging->buffer(), 1, &region); });
  if (s.ok()) s = staging->Invalidate();
  if (s.ok()) std::memcpy(to, staging->mapped(), size);
  return s;
}

Status WriteOther(Device* device, const Allocation& to, uint64_t offset, const std::byte* from, uint64_t size) {
  if (to.mapped() != nullptr) {
    std::memcpy(to.mapped() + offset, from, size);
    return to.Flush();
  }
  std::shared_ptr<Allocation> staging;
  Status s = Allocate(device, size, MemoryUse::kStaging, &staging);
  if (!s.ok()) return s;
  std::memcpy(staging->mapped(), from, size);
  s = staging->Flush();
  if (!s.ok()) return s;
  VkBufferCopy region{0, offset, size};
  return RunOnDevice(
      device, [&](VkCommandBuffer c) { device->vk.vkCmdCopyBuffer(c, staging->buffer(), to.buffer(), 1, &region); });
}

}  // namespace

// --- Stream slots ------------------------------------------------------------------------------------------------

accel_status_t StreamCreate(accel_bk_device_t device_handle, const accel_stream_desc_t* /*desc*/,
                            accel_bk_stream_t* out_stream) noexcept {
  // The description's priority is ignored (allowed by accel.h).
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "stream_create", [&] {
    auto stream = std::make_unique<Stream>(device);
    const Status s = stream->Start();
    if (!s.ok()) return device->host->Fail(s.code, "creating the stream's Vulkan objects: " + s.message);
    *out_stream = Wrap(stream.release());
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
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_host_to_buffer", [&] {
    // The core checked that `dst` is on the stream's device.
    const std::shared_ptr<Allocation>& to = Unwrap(dst)->allocation;
    accel_copy_statistics_t copies{};
    copies.host_to_device_copies = 1;
    copies.host_to_device_bytes = size;
    // Host-visible memory on an idle stream: the memcpy runs here (README.md, "Hot path"), the buffer held by the
    // caller's reference for the call (no count taken).
    if (to->mapped() != nullptr && size <= kInlineLimit &&
        stream->TryInline("copy host to buffer", size, copies, [&](std::string* message) {
          // WriteFromHost's mapped case without its Drain: an idle stream has nothing in flight.
          std::memcpy(to->mapped() + dst_offset, src, size);
          return Report(to->Flush(), message);
        })) {
      return ACCEL_SUCCESS;
    }
    Operation op{"copy host to buffer", [stream, src, to, dst_offset, size](std::string* message) {
                   return Report(WriteFromHost(stream, *to, dst_offset, static_cast<const std::byte*>(src), size),
                                 message);
                 }};
    op.copies = copies;
    // Memory the host cannot map, on an idle stream and device: the staging copy and its submission run here, as a
    // native caller's would (README.md, "Hot path"); the operation holds the buffer until the device ran it.
    if (to->mapped() == nullptr && size <= kInlineLimit) return stream->EnqueueDevice(std::move(op));
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBufferToHost(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer_to_host", [&] {
    const std::shared_ptr<Allocation>& from = Unwrap(src)->allocation;
    accel_copy_statistics_t copies{};
    copies.device_to_host_copies = 1;
    copies.device_to_host_bytes = size;
    if (from->mapped() != nullptr && size <= kInlineLimit &&
        stream->TryInline("copy buffer to host", size, copies, [&](std::string* message) {
          // ReadToHost's mapped case without its Drain, as above.
          const Status s = from->Invalidate();
          if (s.ok()) std::memcpy(dst, from->mapped() + src_offset, size);
          return Report(s, message);
        })) {
      return ACCEL_SUCCESS;
    }
    Operation op{"copy buffer to host", [stream, from, src_offset, dst, size](std::string* message) {
                   return Report(ReadToHost(stream, *from, src_offset, static_cast<std::byte*>(dst), size), message);
                 }};
    op.copies = copies;
    // Memory the host cannot map, on an idle stream and device: copied into the staging buffer, waited for and read
    // here (the call returns with the bytes in `dst`, as CUDA's copy to pageable memory does).
    if (from->mapped() == nullptr && size <= kInlineLimit) return stream->EnqueueDevice(std::move(op));
    return stream->Enqueue(std::move(op));
  });
}

accel_status_t StreamCopyBuffer(accel_bk_stream_t handle, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept {
  // The core rejected overlapping ranges of one buffer. Both buffers on the stream's device: vkCmdCopyBuffer. A
  // buffer of another Vulkan device (another VkDevice: no peer path) goes through host memory.
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_copy_buffer", [&] {
    Buffer* from = Unwrap(src);
    Buffer* to = Unwrap(dst);
    Device* here = stream->device();
    if (from->device == here && to->device == here && from->allocation->mapped() != nullptr &&
        to->allocation->mapped() != nullptr && size <= kInlineLimit) {
      // Both host-visible: on an idle stream a memcpy here (as a host copy), else vkCmdCopyBuffer on the worker.
      const Allocation& source = *from->allocation;
      const Allocation& target = *to->allocation;
      accel_copy_statistics_t copies{};
      copies.local_copies = 1;
      copies.local_bytes = size;
      const auto run = [&](std::string* message) {
        Status s = source.Invalidate();
        if (s.ok()) {
          std::memcpy(target.mapped() + dst_offset, source.mapped() + src_offset, size);
          s = target.Flush();
        }
        return Report(s, message);
      };
      if (stream->TryInline("copy buffer", size, copies, run)) return ACCEL_SUCCESS;
    }
    if (from->device == here && to->device == here) {
      // vkCmdCopyBuffer, recorded with the launches and commands around it (Stream::EnqueueDevice).
      Operation op;
      op.what = "copy buffer";
      op.command.kind = DeviceCommand::Kind::kCopy;
      op.command.from = from->allocation;
      op.command.to = to->allocation;
      op.command.src_offset = src_offset;
      op.command.dst_offset = dst_offset;
      op.command.size = size;
      op.copies.local_copies = 1;
      op.copies.local_bytes = size;
      return stream->EnqueueDevice(std::move(op));
    }
    Operation op{"copy buffer between devices",
                 [stream, from_device = from->device, from = from->allocation, src_offset, to_device = to->device,
                  to = to->allocation, dst_offset, size](std::string* message) {
                   std::vector<std::byte> bounce(static_cast<size_t>(std::min(size, kStagingChunk)));
                   Status s = Status::Ok();
                   for (uint64_t done = 0; s.ok() && done < size;) {
                     const uint64_t n = std::min<uint64_t>(size - done, bounce.size());
                     s = from_device == stream->device()
                             ? ReadToHost(stream, *from, src_offset + done, bounce.data(), n)
                             : ReadOther(from_device, *from, src_offset + done, bounce.data(), n);
                     if (!s.ok()) break;
                     s = to_device == stream->device()
                             ? WriteFromHost(stream, *to, dst_offset + done, bounce.data(), n)
                             : WriteOther(to_device, *to, dst_offset + done, bounce.data(), n);
                     done += n;
                   }
                   return Report(s, message);
                 }};
    op.copies.staged_copies = 1;
    op.copies.staged_bytes = size;
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
    // The pattern repeated over 8 bytes (copied now: the caller's is valid for the call only). Since the offset is a
    // multiple of the pattern's size, the range starts at the pattern's first byte wherever it starts, and so does
    // every 4-byte-aligned word in it for a 1- or 2-byte pattern.
    std::array<std::byte, 8> bytes{};
    for (size_t i = 0; i < bytes.size(); i += pattern_size) std::memcpy(bytes.data() + i, pattern, pattern_size);
    const std::shared_ptr<Allocation>& to = Unwrap(buffer)->allocation;
    // Host-visible memory on an idle stream: the pattern is written here, as a host copy (README.md, "Hot path").
    if (to->mapped() != nullptr && size <= kInlineLimit &&
        stream->TryInline("fill buffer", size, accel_copy_statistics_t{}, [&](std::string* message) {
          backend::FillPattern(to->mapped() + offset, size, bytes.data(), pattern_size);
          return Report(to->Flush(), message);
        })) {
      return ACCEL_SUCCESS;
    }
    if (offset % 4 == 0 && size % 4 == 0) {
      // The whole range is 4-byte words: vkCmdFillBuffer alone, recorded with the launches and commands around it.
      Operation op;
      op.what = "fill buffer";
      op.command.kind = DeviceCommand::Kind::kFill;
      op.command.to = to;
      op.command.dst_offset = offset;
      op.command.size = size;
      std::memcpy(&op.command.word, bytes.data(), sizeof(op.command.word));
      return stream->EnqueueDevice(std::move(op));
    }
    return stream->Enqueue(
        {"fill buffer", [stream, to = Unwrap(buffer)->allocation, offset, size, bytes](std::string* message) {
           // vkCmdFillBuffer writes 4-byte words at 4-byte offsets; the unaligned head and tail
           // (under 4 bytes each) are copied from the pattern, staged in the stream's staging
           // buffer.
           const uint64_t head = std::min<uint64_t>(size, (4 - offset % 4) % 4);
           const uint64_t body = (size - head) & ~uint64_t{3};
           const uint64_t tail = size - head - body;
           Allocation* staging = nullptr;
           Status s = Status::Ok();
           if (head != 0 || tail != 0) {
             s = stream->Staging(bytes.size(), &staging);
             if (s.ok()) {
               std::memcpy(staging->mapped(), bytes.data(), bytes.size());
               s = staging->Flush();
             }
           }
           if (s.ok()) s = stream->Begin();
           if (!s.ok()) return Report(s, message);
           const DeviceFunctions& vk = stream->device()->vk;
           if (head != 0) {
             VkBufferCopy region{0, offset, head};
             vk.vkCmdCopyBuffer(stream->commands(), staging->buffer(), to->buffer(), 1, &region);
           }
           if (body != 0) {
             uint32_t word = 0;
             std::memcpy(&word, bytes.data(), sizeof(word));
             vk.vkCmdFillBuffer(stream->commands(), to->buffer(), offset + head, body, word);
           }
           if (tail != 0) {
             VkBufferCopy region{0, offset + head + body, tail};
             vk.vkCmdCopyBuffer(stream->commands(), staging->buffer(), to->buffer(), 1, &region);
           }
           s = stream->Submit();
           if (s.ok() && staging != nullptr) stream->StagingUsed();
           return Report(s, message);
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
         [stream, callback, user_data](std::string* message) {
           // The callback runs after the device has run all earlier work of the stream. When that failed, the
           // callback is told the error (and it becomes the stream's).
           const Status drained = stream->Drain();
           if (!drained.ok()) {
             (void)callback(user_data, drained.code);
             *message = "waiting for earlier device work: " + drained.message;
             return drained.code;
           }
           return backend::HostCallbackResult(callback(user_data, ACCEL_SUCCESS), message);
         },
         [callback, user_data](accel_status_t error, const std::string&) { (void)callback(user_data, error); }});
  });
}

accel_status_t StreamFreeBuffer(accel_bk_stream_t handle, accel_bk_buffer_t buffer_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_free_buffer", [&] {
    Buffer* buffer = Unwrap(buffer_handle);
    // The operation holds the allocation; it is released when the worker reaches (or skips) it.
    const accel_status_t status =
        stream->Enqueue({"free buffer", [allocation = buffer->allocation](std::string*) { return ACCEL_SUCCESS; }});
    if (status == ACCEL_SUCCESS) BufferDestroy(buffer_handle);  // on failure the buffer stays as it was
    return status;
  });
}

namespace {

// An event record's operation, on the worker once every operation before it ran. A record completes once the device
// has run all earlier work of the stream, learnt later if it is still running (Stream::CompleteOrDefer; a timing
// record with a device timestamp taken after that work, Stream::RecordTimestamp): the worker goes on meanwhile.
// Without timeline semaphores a timing record waits for its timestamp here. A failure fails the stream, and the record
// carries it.
accel_status_t RunRecord(Stream* stream, const std::shared_ptr<Record>& record, std::string* message) {
  if (!record->timing() || stream->HasTimeline()) {
    try {
      return record->timing() ? stream->RecordTimestamp(record, message) : stream->CompleteOrDefer(record, message);
    } catch (...) {  // out of memory: the record completes, failed as its operation does
      Record::Outcome failed;
      failed.status = ACCEL_ERROR_RESOURCE_EXHAUSTED;
      record->Complete(std::move(failed));
      throw;
    }
  }
  Record::Outcome outcome;
  outcome.device = stream->device();
  const Status s = stream->Timestamp(&outcome.ticks);
  if (!s.ok()) return stream->FailRecord(*record, "reading the event's timestamp: ", s, message);
  outcome.has_timestamp = true;
  record->Complete(std::move(outcome));
  return ACCEL_SUCCESS;
}

}  // namespace

accel_status_t StreamRecordEvent(accel_bk_stream_t handle, accel_bk_event_t event_handle) noexcept {
  Stream* stream = Unwrap(handle);
  return Guard(stream->host(), "stream_record_event", [&] {
    Event* event = Unwrap(event_handle);
    const bool timing =
        event->timing() && (stream->device()->capabilities.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING) != 0;
    auto record = std::make_shared<Record>(timing);
    // A plain record on an idle stream whose device is idle too (no error): every earlier operation ran and the
    // device ran all the stream's work, so it completes here, on the enqueuing thread (no hand-off to the worker).
    if (!timing && stream->TryInline("record event", 0, accel_copy_statistics_t{}, [&](std::string*) {
          Record::Outcome outcome;
          outcome.device = stream->device();
          record->Complete(std::move(outcome));
          return ACCEL_SUCCESS;
        })) {
      event->set_current(std::move(record));
      return ACCEL_SUCCESS;
    }
    const accel_status_t status = stream->Enqueue(
        {"record event", [stream, record](std::string* message) { return RunRecord(stream, record, message); },
         [record](accel_status_t error, const std::string& message) {
           Record::Outcome outcome;
           outcome.status = error;
           outcome.message = message;
           record->Complete(std::move(outcome));
         }});
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
    // Completed without error: the recording stream's device work before it has run; nothing to wait for.
    if (const std::optional<Record::Outcome> done = record->Peek(); done && done->status >= 0) return ACCEL_SUCCESS;
    // The waiting stream's worker blocks until the record completes: the recording stream's device has run all
    // its earlier work by then (the record waits for it), and made its writes visible to later commands.
    return stream->Enqueue({"wait event", [record](std::string* message) {
                              const std::optional<Record::Outcome> done = record->Wait(std::nullopt);
                              if (!done) {
                                *message = "waiting for the event's record returned without it (a timeout)";
                                return ACCEL_ERROR_INTERNAL;
                              }
                              const Record::Outcome& outcome = *done;
                              if (outcome.status >= 0) return ACCEL_SUCCESS;
                              *message = "waited for an event that completed with an error: " + outcome.message;
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

std::unique_ptr<PreparedLaunch> TakeSpareLaunch(Stream* stream) { return stream->TakeSpareLaunch(); }

accel_status_t EnqueueLaunch(Stream* stream, std::unique_ptr<PreparedLaunch> launch) {
  return stream->EnqueueLaunch(std::move(launch));
}

// --- Event slots -------------------------------------------------------------------------------------------------

namespace {

// How event_query and event_elapsed_time learn that a record completed: the stream's worker completes it, or, for a
// deferred record, a read of the stream's timeline (Record::Peek).
std::optional<Record::Outcome> PeekRecord(Record& record) { return record.Peek(); }

}  // namespace

accel_status_t EventCreate(accel_bk_device_t device_handle, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept {
  Device* device = Unwrap(device_handle);
  return Guard(*device->host, "event_create", [&] {
    // The core refused timing on a device without event timing.
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
  return Guard(event->host(), "event_query", [&] { return backend::QueryRecordedEvent(*event, PeekRecord); });
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
    const char* roles[2] = {"start", "end"};
    std::optional<Record::Outcome> outcomes[2];
    const accel_status_t checked = backend::RecordedEventOutcomes(host, events, PeekRecord, outcomes);
    if (checked != ACCEL_SUCCESS) return checked;
    for (int i = 0; i < 2; ++i) {
      if (outcomes[i]->has_timestamp) continue;
      if (outcomes[i]->status < 0) {
        return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION, std::string("'") + roles[i] +
                                                              "' has no timestamp: it completed with an error (" +
                                                              outcomes[i]->message + ")");
      }
      return host.Fail(ACCEL_ERROR_FAILED_PRECONDITION,
                       std::string("'") + roles[i] +
                           "' has no timestamp: it was recorded on a stream of a device without event timing");
    }
    const Device* device = outcomes[0]->device;
    if (device != outcomes[1]->device) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "'start' and 'end' were recorded on streams of different devices, whose clocks differ");
    }
    // Ticks of timestampPeriod nanoseconds; a counter of fewer than 64 valid bits wraps (ElapsedNanoseconds).
    *out_nanoseconds = ElapsedNanoseconds(outcomes[0]->ticks, outcomes[1]->ticks, device->facts.timestamp_valid_bits,
                                          device->facts.properties.limits.timestampPeriod);
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::vulkan
