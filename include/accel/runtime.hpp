// Accel runtime C++ API: a header-only C++17 RAII wrapper over the C API of
// libaccel-runtime (accel/runtime.h, docs/scheduler.md); link Accel::runtime.
//
// It follows accel.hpp and reuses its accel::Error, accel::check, accel::infinite
// and owners: Runtime, PlacementGroup, Queue, Actor, TaskGroup and Future
// release their handle in their destructor and are move-only; ResourceRequest, TaskOptions,
// QueueDesc and ActorOptions are plain values that build the C structs;
// TaskContext is a non-owning value valid only during the task function's
// call. A failing call throws accel::Error with the C status and message;
// destructors never throw. A task's own failure is not a failing call: the
// Future reports it (Future::query, Future::wait) and Future::get throws it.
//
// Task functions are C++ callables, copied to the heap and released by the
// runtime (release_user_data). They return accel_status_t or nothing (success).
// No exception crosses into C: an accel::Error thrown by a task becomes its
// error status with its message, any other exception ACCEL_ERROR_INTERNAL
// with what() as the message (docs/errors.md). The C rules (ownership,
// threading) apply unchanged; `handle()` and `release()` hand a raw handle to
// C code.
#ifndef ACCEL_RUNTIME_HPP_
#define ACCEL_RUNTIME_HPP_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "accel/accel.hpp"
#include "accel/runtime.h"

namespace accel {

class Future;
class PlacementGroup;
class Queue;
class Runtime;

// The version of libaccel-runtime loaded (ACCEL_RUNTIME_VERSION it implements).
inline uint32_t runtime_version() noexcept { return accel_runtime_version(); }

namespace detail {

// Reads a text with the size pattern of accel_future_get_message: the size
// first, then the text, again when it grew in between.
template <class Get>
std::string read_text(Get&& get) {
  std::size_t size = 0;
  check(get(std::size_t{0}, static_cast<char*>(nullptr), &size));
  for (;;) {
    std::string text(size, '\0');
    std::size_t needed = 0;
    const accel_status_t status = get(size, text.data(), &needed);
    if (status == ACCEL_SUCCESS) {
      text.resize(needed > 0 ? needed - 1 : 0);
      return text;
    }
    if (status != ACCEL_ERROR_INVALID_ARGUMENT || needed <= size) check(status);
    size = needed;
  }
}

// Calls a task function, init, finalize or actor method. Exceptions never
// cross into C: an Error keeps its status, anything else is
// ACCEL_ERROR_INTERNAL, each with its text as the task's message.
template <class Fn, class... Args>
accel_status_t run_guarded(Fn& fn, Args&... args) noexcept {
  using Result = std::invoke_result_t<Fn&, Args&...>;
  static_assert(std::is_void_v<Result> || std::is_same_v<Result, accel_status_t>,
                "a task function returns accel_status_t or nothing");
  try {
    if constexpr (std::is_void_v<Result>) {
      std::invoke(fn, args...);
      return ACCEL_SUCCESS;
    } else {
      return std::invoke(fn, args...);
    }
  } catch (const Error& e) {
    return accel_set_last_error(e.status() < 0 ? e.status() : ACCEL_ERROR_INTERNAL, e.what());
  } catch (const std::exception& e) {
    return accel_set_last_error(ACCEL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return accel_set_last_error(ACCEL_ERROR_INTERNAL, "the task threw an exception that is not a std::exception");
  }
}

// release_user_data for a heap copy made with std::make_unique<T>.
template <class T>
void delete_user_data(void* user_data) noexcept {
  delete static_cast<T*>(user_data);
}

}  // namespace detail

//===----------------------------------------------------------------------===//
// Task context
//===----------------------------------------------------------------------===//

// What a running task got: its devices in topology rank order, its memory
// limits, its attempt and whether it was asked to stop. A non-owning value,
// valid only during the task function's call and only on its thread.
//
//   runtime.submit([](accel::TaskContext& ctx) {
//     accel::Buffer scratch(ctx.device(0), ctx.memory_limit(0) / 2);  // counted against the task's share
//     if (ctx.cancelled()) return ACCEL_ERROR_CANCELLED;
//     return ACCEL_SUCCESS;
//   });
class TaskContext {
 public:
  TaskContext() noexcept = default;
  explicit TaskContext(accel_task_context_t handle) noexcept : handle_(handle) {}

  accel_task_context_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  uint32_t device_count() const {
    uint32_t count = 0;
    check(accel_task_context_get_device_count(handle_, &count));
    return count;
  }
  // Device `index` (one access path of its physical device); throws
  // ACCEL_ERROR_INVALID_ARGUMENT past device_count().
  Device device(uint32_t index) const {
    accel_device_t device = nullptr;
    check(accel_task_context_get_device(handle_, index, &device));
    return Device(device);
  }
  PhysicalDevice physical_device(uint32_t index) const {
    accel_physical_device_t physical = nullptr;
    check(accel_task_context_get_physical_device(handle_, index, &physical));
    return PhysicalDevice(physical);
  }
  // Bytes the task may allocate on device `index`.
  uint64_t memory_limit(uint32_t index) const {
    uint64_t bytes = 0;
    check(accel_task_context_get_memory_limit(handle_, index, &bytes));
    return bytes;
  }
  // 0 for the first attempt, 1 for the first retry (or actor restart), ...
  uint32_t attempt() const {
    uint32_t attempt = 0;
    check(accel_task_context_get_attempt(handle_, &attempt));
    return attempt;
  }
  // True once a cancel, the runtime's destruction or a preemption asked the task to stop.
  bool cancelled() const {
    uint32_t cancelled = 0;
    check(accel_task_context_is_cancelled(handle_, &cancelled));
    return cancelled != 0;
  }
  // True once the task was preempted: unless it returns success it is queued again.
  bool preempted() const {
    uint32_t preempted = 0;
    check(accel_task_context_is_preempted(handle_, &preempted));
    return preempted != 0;
  }

 private:
  accel_task_context_t handle_ = nullptr;
};

namespace detail {

// The C side of Runtime::submit: the task function over its heap copy.
template <class Fn>
accel_status_t task_trampoline(accel_task_context_t context, void* user_data) noexcept {
  TaskContext ctx(context);
  return run_guarded(*static_cast<Fn*>(user_data), ctx);
}

}  // namespace detail

//===----------------------------------------------------------------------===//
// Futures
//===----------------------------------------------------------------------===//

// Owns the future of one task or actor call: its result once it ended. The
// task goes on when its Future is destroyed. Calls are thread-safe;
// destroying (or moving) it must not race other calls on it. A future stays
// readable after its Runtime is destroyed.
//
// A task's failure is its result, not a failing call: query() and wait() report
// it without throwing, get() throws it as accel::Error (status and message).
//
//   accel::Future load = runtime.submit(read_weights, accel::TaskOptions().name("load"));
//   accel::Future train = runtime.submit(step, accel::TaskOptions().name("train").after(load));
//   if (!train.wait(std::chrono::seconds(10))) std::puts(train.message().c_str());  // why it waits
//   train.get();  // throws accel::Error when it (or `load`) failed
class Future : public detail::Owner<accel_future_t, accel_future_release> {
 public:
  Future() noexcept = default;
  // Takes ownership of a handle created through the C API.
  static Future adopt(accel_future_t handle) noexcept {
    Future future;
    *future.out() = handle;
    return future;
  }

  // ACCEL_NOT_READY while the task has not ended, else its result
  // (ACCEL_SUCCESS or its error). Never blocks; throws only
  // ACCEL_ERROR_INVALID_HANDLE for an empty Future.
  accel_status_t query() const {
    live("query");
    return accel_future_query(handle());
  }

  // Waits; true once the task ended (whatever its result: see query()),
  // false when `timeout` passed first. Throws only ACCEL_ERROR_INVALID_HANDLE
  // for an empty Future.
  bool wait(std::chrono::nanoseconds timeout = infinite) const {
    live("wait");
    if (accel_future_wait(handle(), detail::to_timeout_ns(timeout)) != ACCEL_ERROR_TIMEOUT) return true;
    return accel_future_query(handle()) != ACCEL_NOT_READY;  // a task may itself end with ACCEL_ERROR_TIMEOUT
  }

  // Waits without a timeout; returns when the task succeeded, throws its
  // error (status and message) when it failed or was cancelled.
  void get() const {
    wait();
    const accel_status_t result = query();
    if (result < 0) {
      std::string text = message();
      throw Error(result, text.empty() ? std::string(accel_status_name(result)) : std::move(text));
    }
  }

  // The task's error message once it failed; why it waits while it waits
  // ("capacity: ...", "waiting for dependency 0 (...)"); "" otherwise.
  std::string message() const {
    return detail::read_text([this](std::size_t size, char* text, std::size_t* out_size) {
      return accel_future_get_message(handle(), size, text, out_size);
    });
  }

  // One not yet started ends now with ACCEL_ERROR_CANCELLED (so do its
  // dependents); a running one sees TaskContext::cancelled().
  void cancel() { check(accel_future_cancel(handle())); }

 private:
  void live(const char* what) const {
    if (handle() == nullptr) {
      throw Error(ACCEL_ERROR_INVALID_HANDLE,
                  std::string("accel::Future::") + what +
                      ": the Future is empty (default-constructed, moved from or released)");
    }
  }
};

//===----------------------------------------------------------------------===//
// Resource requests and task options
//===----------------------------------------------------------------------===//

// Builds an accel_resource_request_t: `devices` devices matching `selector`
// (docs/selectors.md), each with `share` of its compute (default 1.0) and
// `memory` bytes (0: share of its memory), optionally inside a placement
// group's bundle. A plain value; not for concurrent mutation.
//
//   auto quarter = accel::ResourceRequest().devices(1).share(0.25).memory(20ull << 30).selector("kind==gpu");
class ResourceRequest {
 public:
  ResourceRequest& devices(uint32_t count) {
    device_count_ = count;
    return *this;
  }
  ResourceRequest& share(double share) {
    share_ = share;
    return *this;
  }
  ResourceRequest& memory(uint64_t bytes) {
    memory_ = bytes;
    return *this;
  }
  ResourceRequest& selector(std::string selector) {
    selector_ = std::move(selector);
    return *this;
  }
  // Run inside bundle `bundle` of `group` (for tasks and actors, not bundles).
  inline ResourceRequest& placement_group(const PlacementGroup& group, uint32_t bundle = 0);

  // The C request; its selector points into *this, valid while it lives unchanged.
  accel_resource_request_t c_request() const noexcept {
    auto request = detail::sized<accel_resource_request_t>(ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST);
    request.device_count = device_count_;
    request.share = share_;
    request.memory = memory_;
    request.selector = selector_.empty() ? nullptr : selector_.c_str();
    request.placement_group = group_;
    request.bundle_index = bundle_;
    return request;
  }

 private:
  uint32_t device_count_ = 0;
  double share_ = 1.0;
  uint64_t memory_ = 0;
  std::string selector_;
  accel_placement_group_t group_ = nullptr;
  uint32_t bundle_ = 0;
};

// Builds an accel_task_desc_t without its function: name, request,
// dependencies, retries, queue, priority, preemptible. A plain value; not for
// concurrent mutation. The Futures and Queue it names must live until the
// submit call (the runtime keeps what it needs).
//
//   auto options = accel::TaskOptions().name("train").request(gpu).after(load).max_retries(2).queue(prod);
class TaskOptions {
 public:
  TaskOptions& name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  TaskOptions& request(ResourceRequest request) {
    request_ = std::move(request);
    return *this;
  }
  // Run only after `dependency` succeeded (a failed one fails the task, a
  // cancelled one cancels it).
  TaskOptions& after(const Future& dependency) {
    dependencies_.push_back(dependency.handle());
    return *this;
  }
  TaskOptions& after(const std::vector<Future>& dependencies) {
    for (const Future& dependency : dependencies) dependencies_.push_back(dependency.handle());
    return *this;
  }
  // Attempts after a device loss.
  TaskOptions& max_retries(uint32_t retries) {
    max_retries_ = retries;
    return *this;
  }
  inline TaskOptions& queue(const Queue& queue);
  // Higher runs first among the waiting tasks of its queue.
  TaskOptions& priority(int32_t priority) {
    priority_ = priority;
    return *this;
  }
  // May be asked to stop so that a queue under its quota gets its devices.
  TaskOptions& preemptible(bool preemptible = true) {
    preemptible_ = preemptible;
    return *this;
  }
  // 1.2: an object the task reads (accel/object_store.h): devices holding a replica of it are tried first. The
  // handle must stay referenced until the submission returns.
  TaskOptions& near(accel_object_t object) {
    near_.push_back(object);
    return *this;
  }

  // The C descriptor, function and user data left NULL. Its pointers point
  // into *this and to `request`, where the request (if any) is written; both
  // must live unchanged while it is used.
  accel_task_desc_t c_desc(accel_resource_request_t& request) const noexcept {
    auto desc = detail::sized<accel_task_desc_t>(ACCEL_STRUCTURE_TYPE_TASK_DESC);
    desc.name = name_.empty() ? nullptr : name_.c_str();
    if (request_) {
      request = request_->c_request();
      desc.request = &request;
    }
    desc.dependencies = dependencies_.empty() ? nullptr : dependencies_.data();
    desc.dependency_count = static_cast<uint32_t>(dependencies_.size());
    desc.max_retries = max_retries_;
    desc.queue = queue_;
    desc.priority = priority_;
    desc.preemptible = preemptible_ ? 1u : 0u;
    desc.near_objects = near_.empty() ? nullptr : near_.data();
    desc.near_object_count = static_cast<uint32_t>(near_.size());
    return desc;
  }

 private:
  std::string name_;
  std::optional<ResourceRequest> request_;
  std::vector<accel_future_t> dependencies_;
  uint32_t max_retries_ = 0;
  accel_queue_t queue_ = nullptr;
  int32_t priority_ = 0;
  bool preemptible_ = false;
  std::vector<accel_object_t> near_;
};

namespace detail {

// The C descriptor of task `owned` with `options` (see TaskOptions::c_desc for `request`): the runtime calls it
// through task_trampoline and releases it once the submission succeeded.
template <class Fn>
accel_task_desc_t task_desc(const TaskOptions& options, accel_resource_request_t& request, Fn* owned) {
  accel_task_desc_t desc = options.c_desc(request);
  desc.function = &task_trampoline<Fn>;
  desc.user_data = owned;
  desc.release_user_data = &delete_user_data<Fn>;
  return desc;
}

}  // namespace detail

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

// Owns a runtime over the physical devices of an instance, which must outlive
// it. Every call is thread-safe; destroying (or moving) it must not race other
// calls on it, nor run inside one of its tasks. The destructor cancels the
// tasks that have not started and waits for the running ones; its queues,
// groups and actors are stale afterwards, its futures stay readable.
//
//   accel::Instance instance;
//   accel::Runtime runtime(instance);
//   accel::Future done = runtime.submit(
//       [](accel::TaskContext& ctx) { std::printf("on %s\n", ctx.device(0).name().c_str()); },
//       accel::TaskOptions().request(accel::ResourceRequest().devices(1).share(0.5)));
//   done.get();
class Runtime : public detail::Owner<accel_runtime_t, accel_runtime_destroy> {
 public:
  Runtime() noexcept = default;
  // `worker_threads` 0: the CPUs this process may run on (its affinity), at least 2.
  explicit Runtime(const Instance& instance, uint32_t worker_threads = 0)
      : Runtime(instance.handle(), worker_threads) {}
  explicit Runtime(accel_instance_t instance, uint32_t worker_threads = 0) {
    auto desc = detail::sized<accel_runtime_desc_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DESC);
    desc.worker_threads = worker_threads;
    check(accel_runtime_create(instance, &desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static Runtime adopt(accel_runtime_t handle) noexcept {
    Runtime runtime;
    *runtime.out() = handle;
    return runtime;
  }

  // Each resource (physical device) as the runtime sees it now.
  std::vector<accel_runtime_device_t> devices() const {
    uint32_t count = 0;
    check(accel_runtime_get_device_count(handle(), &count));
    std::vector<accel_runtime_device_t> devices;
    devices.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      devices.push_back(detail::sized<accel_runtime_device_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE));
      check(accel_runtime_get_device(handle(), i, &devices.back()));
    }
    return devices;
  }

  // Counts of every decision since creation (docs/scheduler.md, "Counters").
  accel_runtime_counters_t counters() const {
    auto counters = detail::sized<accel_runtime_counters_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS);
    check(accel_runtime_get_counters(handle(), &counters));
    return counters;
  }

  // 1.3: keeps the last `capacity` decisions (0: off), and reads those after sequence `after`, oldest first
  // (docs/scheduler.md, "Events"). `dropped` [optional]: how many after `after` the log no longer holds.
  void set_event_log(uint32_t capacity) { check(accel_runtime_set_event_log(handle(), capacity)); }
  std::vector<accel_runtime_event_t> events(uint64_t after = 0, uint32_t max = 4096,
                                            uint64_t* dropped = nullptr) const {
    std::vector<accel_runtime_event_t> out(max,
                                           detail::sized<accel_runtime_event_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT));
    uint32_t count = 0;
    check(accel_runtime_get_events(handle(), after, max, out.empty() ? nullptr : out.data(), &count, dropped));
    out.resize(count);
    return out;
  }

  // Submits a copy of `task`, called on a worker thread as
  // `accel_status_t(TaskContext&)` or `void(TaskContext&)` (success), once per
  // attempt, and destroyed when the runtime no longer needs it. An exception
  // becomes the task's error (see the top of this file). Throws
  // ACCEL_ERROR_INVALID_ARGUMENT (a bad share or selector),
  // ACCEL_ERROR_NOT_FOUND or ACCEL_ERROR_RESOURCE_EXHAUSTED (no device could
  // ever hold the request); then `task` is destroyed without being called.
  template <class F>
  Future submit(F&& task, const TaskOptions& options = {}) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&, TaskContext&>, "submit: the task takes a TaskContext&");
    auto owned = std::make_unique<Fn>(std::forward<F>(task));
    accel_resource_request_t request{};
    const accel_task_desc_t desc = detail::task_desc(options, request, owned.get());
    accel_future_t future = nullptr;
    check(accel_task_submit(handle(), &desc, &future));
    static_cast<void>(owned.release());  // the runtime's to release now
    return Future::adopt(future);
  }
};

//===----------------------------------------------------------------------===//
// Placement groups
//===----------------------------------------------------------------------===//

// Owns a reservation of every bundle of devices, made all at once by topology
// (docs/planner.md). Calls are thread-safe; destroying (or moving) it must not
// race other calls on it. Destroying it cancels the tasks still waiting for
// its bundles and frees it once the running ones end.
//
//   accel::PlacementGroup gang(runtime, std::vector<accel::ResourceRequest>(8, accel::ResourceRequest().devices(1)),
//                              ACCEL_PLACEMENT_STRATEGY_STRICT_PACK, ACCEL_TOPOLOGY_LEVEL_CLIQUE);
//   for (const accel_bundle_device_t& d : gang.devices()) std::printf("bundle %u rank %u\n", d.bundle, d.rank);
//   runtime.submit(step, accel::TaskOptions().request(accel::ResourceRequest().devices(1).placement_group(gang, 3)));
class PlacementGroup : public detail::Owner<accel_placement_group_t, accel_placement_group_destroy> {
 public:
  PlacementGroup() noexcept = default;
  // Throws ACCEL_ERROR_INVALID_ARGUMENT (no bundles, a bad bundle: the
  // message names "bundles[i].field"), ACCEL_ERROR_RESOURCE_EXHAUSTED when it
  // cannot be placed now or would take `queue` past a limit (nothing is held;
  // the message says why). `queue`: a leaf queue's handle() the reservation
  // counts against, or nullptr.
  PlacementGroup(Runtime& runtime, const std::vector<ResourceRequest>& bundles,
                 accel_placement_strategy_t strategy = ACCEL_PLACEMENT_STRATEGY_PACK,
                 accel_topology_level_t level = ACCEL_TOPOLOGY_LEVEL_CLIQUE, bool required = true,
                 const std::string& name = {}, accel_queue_t queue = nullptr, uint32_t flags = 0) {
    std::vector<accel_resource_request_t> c_bundles;
    c_bundles.reserve(bundles.size());
    for (const ResourceRequest& bundle : bundles) c_bundles.push_back(bundle.c_request());
    auto desc = detail::sized<accel_placement_group_desc_t>(ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC);
    desc.name = name.empty() ? nullptr : name.c_str();
    desc.bundles = c_bundles.empty() ? nullptr : c_bundles.data();
    desc.bundle_count = static_cast<uint32_t>(c_bundles.size());
    desc.strategy = strategy;
    desc.level = level;
    desc.required = required ? 1u : 0u;
    desc.queue = queue;
    desc.flags = flags;  // 1.2: ACCEL_PLACEMENT_GROUP_WAIT makes it pending instead of refused
    check(accel_placement_group_create(runtime.handle(), &desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static PlacementGroup adopt(accel_placement_group_t handle) noexcept {
    PlacementGroup group;
    *group.out() = handle;
    return group;
  }

  // 1.2: waits until it is placed (ACCEL_PLACEMENT_GROUP_WAIT); false when `timeout` passed first. Throws
  // ACCEL_ERROR_CANCELLED when its runtime was destroyed first.
  bool wait(std::chrono::nanoseconds timeout = infinite) const {
    const accel_status_t status = accel_placement_group_wait(handle(), detail::to_timeout_ns(timeout));
    if (status == ACCEL_ERROR_TIMEOUT) return false;
    check(status);
    return true;
  }
  // 1.2: "placed", or why it waits.
  std::string message() const {
    return detail::read_text([&](std::size_t size, char* text, std::size_t* out) {
      return accel_placement_group_get_message(handle(), size, text, out);
    });
  }

  // Every bundle's devices, in topology rank order (none while pending).
  std::vector<accel_bundle_device_t> devices() const {
    uint32_t count = 0;
    if (accel_placement_group_get_devices(handle(), &count, nullptr) == ACCEL_NOT_READY) return {};
    std::vector<accel_bundle_device_t> devices(
        count, detail::sized<accel_bundle_device_t>(ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE));
    if (count > 0) check(accel_placement_group_get_devices(handle(), &count, devices.data()));
    devices.resize(count);
    return devices;
  }
};

inline ResourceRequest& ResourceRequest::placement_group(const PlacementGroup& group, uint32_t bundle) {
  group_ = group.handle();
  bundle_ = bundle;
  return *this;
}

//===----------------------------------------------------------------------===//
// Queues (docs/scheduler.md, "Queues")
//===----------------------------------------------------------------------===//

// Builds an accel_queue_desc_t: a name, a parent, a guaranteed quota, an
// upper limit (0: none) and an over-quota weight. Amounts are device
// equivalents (a whole device is 1.0) and bytes. A plain value; not for
// concurrent mutation.
//
//   accel::Queue prod(runtime, accel::QueueDesc("prod").quota(4.0).weight(3.0));
//   accel::Queue team(runtime, accel::QueueDesc("team").parent(prod).limit(2.0, 64ull << 30));
class QueueDesc {
 public:
  explicit QueueDesc(std::string name) : name_(std::move(name)) {}

  inline QueueDesc& parent(const Queue& parent);
  QueueDesc& quota(double devices, uint64_t memory = 0) {
    quota_devices_ = devices;
    quota_memory_ = memory;
    return *this;
  }
  QueueDesc& limit(double devices, uint64_t memory = 0) {
    limit_devices_ = devices;
    limit_memory_ = memory;
    return *this;
  }
  QueueDesc& weight(double weight) {
    weight_ = weight;
    return *this;
  }

  // The C descriptor; its name points into *this, valid while it lives unchanged.
  accel_queue_desc_t c_desc() const noexcept {
    auto desc = detail::sized<accel_queue_desc_t>(ACCEL_STRUCTURE_TYPE_QUEUE_DESC);
    desc.name = name_.c_str();
    desc.parent = parent_;
    desc.quota_devices = quota_devices_;
    desc.limit_devices = limit_devices_;
    desc.quota_memory = quota_memory_;
    desc.limit_memory = limit_memory_;
    desc.weight = weight_;
    return desc;
  }

 private:
  std::string name_;
  accel_queue_t parent_ = nullptr;
  double quota_devices_ = 0.0;
  double limit_devices_ = 0.0;
  uint64_t quota_memory_ = 0;
  uint64_t limit_memory_ = 0;
  double weight_ = 1.0;
};

// Owns a node of the queue hierarchy: its tasks and actors share its quota,
// limit and weight. Calls are thread-safe; destroying (or moving) it must not
// race other calls on it. Destroy it after its children and after its work
// ended: otherwise the C call refuses (ignored here) and it lives until its
// Runtime is destroyed.
//
//   accel::Queue batch(runtime, accel::QueueDesc("batch"));
//   runtime.submit(job, accel::TaskOptions().queue(batch).priority(10).preemptible());
//   accel_queue_usage_t usage = batch.usage();
class Queue : public detail::Owner<accel_queue_t, accel_queue_destroy> {
 public:
  Queue() noexcept = default;
  // Throws ACCEL_ERROR_INVALID_ARGUMENT (an empty or duplicate name, a bad
  // amount, a limit below its quota: the message names the field).
  Queue(Runtime& runtime, const QueueDesc& desc) {
    const accel_queue_desc_t c_desc = desc.c_desc();
    check(accel_queue_create(runtime.handle(), &c_desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static Queue adopt(accel_queue_t handle) noexcept {
    Queue queue;
    *queue.out() = handle;
    return queue;
  }

  // What it holds now, its descendants included.
  accel_queue_usage_t usage() const {
    auto usage = detail::sized<accel_queue_usage_t>(ACCEL_STRUCTURE_TYPE_QUEUE_USAGE);
    check(accel_queue_get_usage(handle(), &usage));
    return usage;
  }
};

inline QueueDesc& QueueDesc::parent(const Queue& parent) {
  parent_ = parent.handle();
  return *this;
}

inline TaskOptions& TaskOptions::queue(const Queue& queue) {
  queue_ = queue.handle();
  return *this;
}

//===----------------------------------------------------------------------===//
// Task groups (1.4; docs/scheduler.md, "Task groups")
//===----------------------------------------------------------------------===//

// Owns a task group: tasks submitted without a Future each and waited for
// together, tbb::task_group's counterpart. Calls are thread-safe; destroying
// (or moving) it must not race other calls on it. Destroying it lets its
// tasks end as usual (nothing waits for them).
//
//   accel::TaskGroup group(runtime);
//   for (int i = 0; i < n; ++i) group.run([i](accel::TaskContext&) { work(i); });
//   group.wait();  // throws the first failure (accel::Error), if any
class TaskGroup : public detail::Owner<accel_task_group_t, accel_task_group_destroy> {
 public:
  TaskGroup() noexcept = default;
  explicit TaskGroup(const Runtime& runtime, const std::string& name = "") {
    auto desc = detail::sized<accel_task_group_desc_t>(ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC);
    desc.name = name.empty() ? nullptr : name.c_str();
    check(accel_task_group_create(runtime.handle(), &desc, out()));
  }

  // Submits a copy of `task` into the group, as Runtime::submit does (same
  // calls, same errors), without a Future.
  template <class F>
  void run(F&& task, const TaskOptions& options = {}) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&, TaskContext&>, "run: the task takes a TaskContext&");
    auto owned = std::make_unique<Fn>(std::forward<F>(task));
    accel_resource_request_t request{};
    const accel_task_desc_t desc = detail::task_desc(options, request, owned.get());
    check(accel_task_group_submit(handle(), &desc));
    static_cast<void>(owned.release());  // the runtime's to release now
  }

  // Waits until every task ended (running the caller's own queued tasks
  // meanwhile); throws the first failure, or ACCEL_ERROR_CANCELLED after
  // cancel(); either way the group is clear again.
  void wait() { check(accel_task_group_wait(handle(), ACCEL_TIMEOUT_INFINITE)); }
  // The same with a timeout: false when it passed first (the tasks go on).
  bool wait_for(std::chrono::nanoseconds timeout) {
    const accel_status_t status = accel_task_group_wait(handle(), detail::to_timeout_ns(timeout));
    // A task may itself fail with ACCEL_ERROR_TIMEOUT: the query tells.
    if (status == ACCEL_ERROR_TIMEOUT && accel_task_group_query(handle()) == ACCEL_NOT_READY) return false;
    check(status);
    return true;
  }

  // Tasks not started end cancelled; running ones see TaskContext::cancelled().
  void cancel() { check(accel_task_group_cancel(handle())); }
};

//===----------------------------------------------------------------------===//
// Actors (docs/scheduler.md, "Actors")
//===----------------------------------------------------------------------===//

namespace detail {

// An actor's user data: its state and its hooks.
template <class State>
struct ActorBox {
  State state;
  std::function<accel_status_t(TaskContext&, State&)> init;
  std::function<accel_status_t(TaskContext&, State&)> finalize;
};

// A hook or method as `accel_status_t(TaskContext&, State&)`; a callable that
// returns nothing succeeds.
template <class State, class F>
std::function<accel_status_t(TaskContext&, State&)> status_method(F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&, TaskContext&, State&>, "an actor hook takes (TaskContext&, State&)");
  if constexpr (std::is_void_v<std::invoke_result_t<Fn&, TaskContext&, State&>>) {
    return [hook = Fn(std::forward<F>(fn))](TaskContext& ctx, State& state) mutable {
      std::invoke(hook, ctx, state);
      return ACCEL_SUCCESS;
    };
  } else {
    return Fn(std::forward<F>(fn));
  }
}

template <class State>
accel_status_t actor_init_trampoline(accel_task_context_t context, void* user_data) noexcept {
  auto* box = static_cast<ActorBox<State>*>(user_data);
  TaskContext ctx(context);
  return run_guarded(box->init, ctx, box->state);
}

template <class State>
accel_status_t actor_finalize_trampoline(accel_task_context_t context, void* user_data) noexcept {
  auto* box = static_cast<ActorBox<State>*>(user_data);
  TaskContext ctx(context);
  return run_guarded(box->finalize, ctx, box->state);
}

// The C side of Actor::call: the method over its heap copy, with the actor's state.
template <class State, class Fn>
accel_status_t actor_call_trampoline(accel_task_context_t context, void* user_data) noexcept {
  void* actor_data = nullptr;
  const accel_status_t status = accel_task_context_get_actor_data(context, &actor_data);
  if (status != ACCEL_SUCCESS) return status;
  TaskContext ctx(context);
  return run_guarded(*static_cast<Fn*>(user_data), ctx, static_cast<ActorBox<State>*>(actor_data)->state);
}

}  // namespace detail

// Builds an accel_actor_desc_t for Actor<State>: name, request, queue,
// priority, restarts, and the init and finalize hooks, each
// `accel_status_t(TaskContext&, State&)` or `void(TaskContext&, State&)`
// (copyable: they are kept in a std::function). A plain value; not for
// concurrent mutation.
//
//   auto options = accel::ActorOptions<Cache>()
//                      .name("cache")
//                      .request(accel::ResourceRequest().devices(1).share(0.5))
//                      .init([](accel::TaskContext& ctx, Cache& c) { c.open(ctx.device(0)); });
template <class State>
class ActorOptions {
 public:
  using Method = std::function<accel_status_t(TaskContext&, State&)>;

  ActorOptions& name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  ActorOptions& request(ResourceRequest request) {
    request_ = std::move(request);
    return *this;
  }
  ActorOptions& queue(const Queue& queue) {
    queue_ = queue.handle();
    return *this;
  }
  ActorOptions& priority(int32_t priority) {
    priority_ = priority;
    return *this;
  }
  // Restarts after a device loss.
  ActorOptions& max_restarts(uint32_t restarts) {
    max_restarts_ = restarts;
    return *this;
  }
  // Runs first on the reservation and again after each restart; an error
  // other than ACCEL_ERROR_DEVICE_LOST kills the actor.
  template <class F>
  ActorOptions& init(F&& hook) {
    init_ = detail::status_method<State>(std::forward<F>(hook));
    return *this;
  }
  // Runs once after the last call, when the actor is destroyed or dies.
  template <class F>
  ActorOptions& finalize(F&& hook) {
    finalize_ = detail::status_method<State>(std::forward<F>(hook));
    return *this;
  }

  const Method& init_hook() const noexcept { return init_; }
  const Method& finalize_hook() const noexcept { return finalize_; }

  // The C descriptor, hooks and user data left NULL. Its pointers point into
  // *this and to `request`, where the request (if any) is written.
  accel_actor_desc_t c_desc(accel_resource_request_t& request) const noexcept {
    auto desc = detail::sized<accel_actor_desc_t>(ACCEL_STRUCTURE_TYPE_ACTOR_DESC);
    desc.name = name_.empty() ? nullptr : name_.c_str();
    if (request_) {
      request = request_->c_request();
      desc.request = &request;
    }
    desc.max_restarts = max_restarts_;
    desc.priority = priority_;
    desc.queue = queue_;
    return desc;
  }

 private:
  std::string name_;
  std::optional<ResourceRequest> request_;
  accel_queue_t queue_ = nullptr;
  int32_t priority_ = 0;
  uint32_t max_restarts_ = 0;
  Method init_;
  Method finalize_;
};

// Owns an actor: a `State` pinned to one reservation for its life, whose
// calls run one at a time in the order they were made, on its devices.
// Calls are thread-safe; destroying (or moving) it must not race other calls
// on it. The destructor returns at once: calls not started are cancelled, the
// running one ends, finalize runs, then the state is destroyed (on a worker).
// The state is only touched by init, the calls and finalize, one at a time.
//
//   struct Counter { int next = 0; };
//   accel::Actor<Counter> counter(runtime, Counter{}, accel::ActorOptions<Counter>().name("counter"));
//   accel::Future f = counter.call([](accel::TaskContext&, Counter& c) { ++c.next; });
//   f.get();
template <class State>
class Actor : public detail::Owner<accel_actor_t, accel_actor_destroy> {
 public:
  Actor() noexcept = default;
  // Returns at once (PENDING until placed). Throws as Runtime::submit for a
  // request no device could ever hold.
  Actor(Runtime& runtime, State state, const ActorOptions<State>& options = {}) {
    auto box = std::make_unique<detail::ActorBox<State>>(
        detail::ActorBox<State>{std::move(state), options.init_hook(), options.finalize_hook()});
    accel_resource_request_t request{};
    accel_actor_desc_t desc = options.c_desc(request);
    desc.init = box->init ? &detail::actor_init_trampoline<State> : nullptr;
    desc.finalize = box->finalize ? &detail::actor_finalize_trampoline<State> : nullptr;
    desc.user_data = box.get();
    desc.release_user_data = &detail::delete_user_data<detail::ActorBox<State>>;
    check(accel_actor_create(runtime.handle(), &desc, out()));
    static_cast<void>(box.release());  // the runtime's to release now
  }

  // Queues a copy of `method`, called as `accel_status_t(TaskContext&, State&)`
  // or `void(TaskContext&, State&)` after the calls made before it (and its
  // dependencies). `options` may name, depend and retry; a request, queue,
  // priority or preemptible is refused (ACCEL_ERROR_INVALID_ARGUMENT).
  // Throws ACCEL_ERROR_FAILED_PRECONDITION when the actor is dead (the message
  // says why).
  template <class F>
  Future call(F&& method, const TaskOptions& options = {}) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&, TaskContext&, State&>, "call: the method takes (TaskContext&, State&)");
    auto owned = std::make_unique<Fn>(std::forward<F>(method));
    accel_resource_request_t request{};
    accel_task_desc_t desc = options.c_desc(request);
    desc.function = &detail::actor_call_trampoline<State, Fn>;
    desc.user_data = owned.get();
    desc.release_user_data = &detail::delete_user_data<Fn>;
    accel_future_t future = nullptr;
    check(accel_actor_call(handle(), &desc, &future));
    static_cast<void>(owned.release());
    return Future::adopt(future);
  }

  // State (PENDING, ALIVE, RESTARTING, DEAD), restarts, calls pending and done.
  accel_actor_info_t info() const {
    auto info = detail::sized<accel_actor_info_t>(ACCEL_STRUCTURE_TYPE_ACTOR_INFO);
    check(accel_actor_get_info(handle(), &info));
    return info;
  }

  // Why it is DEAD or PENDING; "" otherwise.
  std::string message() const {
    return detail::read_text([this](std::size_t size, char* text, std::size_t* out_size) {
      return accel_actor_get_message(handle(), size, text, out_size);
    });
  }
};

}  // namespace accel

#endif  // ACCEL_RUNTIME_HPP_
