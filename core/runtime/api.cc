// C entry points of libaccel-runtime (include/accel/runtime.h). Each one
// validates its arguments, calls the scheduler, and on failure sets the
// thread's last error through accel_set_last_error ("<function>: <message>").
#include <accel/object_store.h>
#include <accel/runtime.h>
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "api_common.h"
#include "handles.h"
#include "runtime.h"

using accel::runtime::Actor;
using accel::runtime::HandleTable;
using accel::runtime::HandleType;
using accel::runtime::NewTask;
using accel::runtime::Pins;
using accel::runtime::PlacementGroup;
using accel::runtime::Queue;
using accel::runtime::Runtime;
using accel::runtime::SpinPause;
using accel::runtime::Task;
using accel::runtime::TaskGroup;
using namespace accel::runtime::api;  // NOLINT(google-build-using-namespace): the entry points' helpers

namespace {

// Blocks until `done()` or `timeout_ns` passed (false then), counted in `waiters` first: the side that makes
// `done()` true checks `waiters` after its seq_cst store, and wakes the waiters under `mutex` when it is not 0.
template <typename Done>
bool BlockUntil(std::atomic<uint32_t>& waiters, std::mutex& mutex, std::condition_variable& cv, uint64_t timeout_ns,
                Done done) {
  waiters.fetch_add(1, std::memory_order_seq_cst);
  bool ended = true;
  {
    std::unique_lock lock(mutex);
    if (timeout_ns == ACCEL_TIMEOUT_INFINITE) {
      cv.wait(lock, done);
    } else {
      ended = cv.wait_for(lock, std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX / 2)), done);
    }
  }
  waiters.fetch_sub(1, std::memory_order_relaxed);
  return ended;
}

// Waits until `task` is done or `timeout_ns` passed (false then). With no
// timeout, a direct task nobody runs yet runs here (docs/scheduler.md, "The
// direct path"); a short spin covers the common end of an empty task on
// another thread before the thread blocks.
bool WaitDone(const std::shared_ptr<Task>& task, uint64_t timeout_ns) {
  if (task->done.load(std::memory_order_acquire)) return true;
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE && task->direct && !task->claimed.load(std::memory_order_relaxed)) {
    if (auto rt = RuntimeRef::Of(task->runtime_handle); rt && rt->RunIfUnclaimed(task)) return true;
  }
  constexpr int kSpins = 256;
  for (int i = 0; i < kSpins && timeout_ns == ACCEL_TIMEOUT_INFINITE; ++i) {
    if (task->done.load(std::memory_order_acquire)) return true;
    SpinPause();
  }
  accel::runtime::DoneWait& wait = accel::runtime::DoneWait::For(task.get());
  return BlockUntil(task->waiters, wait.mutex, wait.cv, timeout_ns,
                    [&] { return task->done.load(std::memory_order_seq_cst); });
}

// How long a group's waiter looks for its last tasks to end before it blocks.
constexpr std::chrono::microseconds kGroupSpin{50};

// Waits until every task of `group` has ended or `timeout_ns` passed (false then). With no timeout, the calling
// thread's own queued direct tasks run here meanwhile (accel_task_group_wait).
bool WaitGroupEnded(TaskGroup& group, uint64_t timeout_ns) {
  // The thread's client slot goes when it stops running its tasks: at once for a finite wait, else once its own
  // queued tasks ran or none is open (docs/scheduler.md, "Client slots").
  if (timeout_ns == ACCEL_TIMEOUT_INFINITE) {
    bool open = true;
    for (;;) {
      // Pinned only while it runs tasks, never while it blocks: a runtime's destroy ends the tasks it waits for.
      auto rt = RuntimeRef::Of(group.runtime_handle);
      open = group.Open() > 0;
      if (!rt) break;
      if (!open || rt->RunOwnLight(group) + rt->RunOwnQueued(SIZE_MAX) == 0) {
        rt->ClientWaits();
        break;
      }
    }
    if (!open) return true;
    // What is left runs on other threads (workers that took some): a block and its wakeup cost tens of
    // microseconds, more than the last tasks of a batch usually take, so the wait looks for a while first.
    const auto until = std::chrono::steady_clock::now() + kGroupSpin;
    for (int i = 1;; ++i) {
      if (group.Open() == 0) return true;
      SpinPause();
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
    }
  } else if (auto rt = RuntimeRef::Of(group.runtime_handle)) {
    rt->ClientWaits();
  }
  return BlockUntil(group.waiters, group.mutex, group.ended_cv, timeout_ns, [&] { return group.Open() == 0; });
}

template <typename T, typename F>
accel_status_t ContextEntry(const char* function, accel_task_context_t context, uint32_t index, T* out, F&& value) {
  if (out != nullptr) *out = T{};
  return Guarded(function, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    Task* task = Context(function, context, &status);
    if (task == nullptr) return status;
    if (out == nullptr) return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, "the output is NULL");
    if (index >= task->ranks.size()) {
      return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'index' {} is past the task's {} device(s)", index, task->ranks.size()));
    }
    *out = value(*task, index);
    return ACCEL_SUCCESS;
  });
}

// A value of the calling task's context (not per device) into `*out`.
template <typename T, typename F>
accel_status_t ContextValue(const char* function, accel_task_context_t context, T* out, const char* out_name,
                            F&& value) {
  return Guarded(function, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    Task* task = Context(function, context, &status);
    if (task == nullptr) return status;
    if (out == nullptr) return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' is NULL", out_name));
    *out = value(*task);
    return ACCEL_SUCCESS;
  });
}

const Runtime& OwnerOf(const Task& task) { return *task.owner; }

// The caller's reference becomes the table's (no count taken and dropped on the way).
accel_future_t NewFuture(std::shared_ptr<Task> task, uint64_t runtime_handle) {
  task->runtime_handle = runtime_handle;
  return reinterpret_cast<accel_future_t>(HandleTable::Get().Insert(HandleType::kFuture, std::move(task)));
}

// The fields of a task desc that a task and an actor call share: function,
// user data, name, retries, dependencies (futures of `rt`).
accel_status_t ReadTask(const char* function, const Runtime& rt, const accel_task_desc_t& d, Task* task) {
  if (d.function == nullptr) return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->function' is NULL");
  if (d.dependency_count > 0 && d.dependencies == nullptr) {
    return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT,
                fmt::format("'desc->dependencies' is NULL with 'desc->dependency_count' {}", d.dependency_count));
  }
  task->owner = &rt;
  if (d.name != nullptr && d.name[0] != '\0') task->name = d.name;  // a new task's is empty
  task->function = d.function;
  task->user_data = d.user_data;
  task->max_retries = d.max_retries;
  for (uint32_t i = 0; i < d.dependency_count; ++i) {
    const std::string argument = fmt::format("desc->dependencies[{}]", i);
    accel_status_t status = ACCEL_SUCCESS;
    auto future = Find<Task>(function, d.dependencies[i], HandleType::kFuture, argument.c_str(), &status);
    if (!future) return status;
    if (future->owner != &rt) {
      return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' is a task of another runtime", argument));
    }
    task->dependencies.push_back(future);
  }
  return ACCEL_SUCCESS;
}

// The text pattern of accel_future_get_message and accel_actor_get_message.
accel_status_t CopyText(const char* function, const std::string& text, size_t size, char* out_text, size_t* out_size) {
  if (out_size != nullptr) *out_size = text.size() + 1;
  if (out_text == nullptr) return ACCEL_SUCCESS;
  if (size < text.size() + 1) {
    return Fail(function, ACCEL_ERROR_INVALID_ARGUMENT,
                fmt::format("'size' {} is too small: the text needs {} bytes with its NUL", size, text.size() + 1));
  }
  std::memcpy(out_text, text.c_str(), text.size() + 1);
  return ACCEL_SUCCESS;
}

// accel_task_submit's and accel_task_group_submit's work once the runtime is found and the desc read: the task
// is made, checked and submitted; into `group` (no future: `out_future` null), or with a future in `*out_future`.
accel_status_t SubmitTask(const char* fn, Runtime& rt, uint64_t runtime_handle, const accel_task_desc_t& d,
                          const std::shared_ptr<TaskGroup>& group, accel_future_t* out_future) {
  accel_status_t status = ACCEL_SUCCESS;
  auto task = NewTask();
  status = ReadTask(fn, rt, d, task.get());
  if (status != ACCEL_SUCCESS) return status;
  std::string why;
  status = rt.ReadRequest(d.request, "desc->request", false, &task->request, &why);
  if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
  if (d.queue != nullptr) {
    auto q = Find<Queue>(fn, d.queue, HandleType::kQueue, "desc->queue", &status);
    if (!q) return status;
    if (q->owner != &rt) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->queue' is a queue of another runtime");
    }
    task->queue = q;
  }
  if (d.near_object_count > 0 && d.near_objects == nullptr) {
    return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                fmt::format("'desc->near_objects' is NULL with 'desc->near_object_count' {}", d.near_object_count));
  }
  if (d.reserved2 != 0) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->reserved2' must be 0");
  // A reference to each object for the task's life: the caller may release its own at once.
  struct Held {
    Task& task;
    Runtime& rt;
    bool keep = false;
    ~Held() {
      if (keep) return;
      for (const auto& held : task.near) accel::runtime::ReleaseObject(held, &rt.store());
      task.near.clear();
    }
  } held{*task, rt};
  for (uint32_t i = 0; i < d.near_object_count; ++i) {
    const std::string argument = fmt::format("desc->near_objects[{}]", i);
    auto ref = Find<accel::runtime::ObjectRef>(fn, d.near_objects[i], HandleType::kObject, argument.c_str(), &status);
    if (!ref) return status;
    if (ref->runtime.lock().get() != &rt) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' is an object of another runtime", argument));
    }
    if (!accel::runtime::RetainObject(*ref->object)) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE,
                  fmt::format("'{}' is being released (its last reference went)", argument));
    }
    task->near.push_back({ref->object, reinterpret_cast<uint64_t>(d.near_objects[i])});
  }
  task->priority = d.priority;
  if (d.preemptible > 1) {
    return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'desc->preemptible' is {}: 0 or 1", d.preemptible));
  }
  task->preemptible = d.preemptible == 1;
  // Set before the task can end; a refused task is dropped without calling it.
  task->release_user_data = d.release_user_data;
  task->runtime_handle = runtime_handle;
  if (group) {
    // Counted before it can end; a refused one is counted out again (and wakes a waiter it held back).
    group->Add();
    task->task_group = group;
  }
  status = rt.Submit(task, &why);
  if (status != ACCEL_SUCCESS) {
    if (group) {
      task->task_group.reset();
      group->End(ACCEL_SUCCESS, "");
    }
    // A destroy that began is no fault of the request.
    return Fail(fn, status, rt.stopping() ? why : fmt::format("'desc->request': {}", why));
  }
  held.keep = true;  // the task's now: its end drops them
  if (group) {
    // Submitted after a cancel and before the next wait returned: it ends cancelled too.
    if (group->cancelled.load(std::memory_order_seq_cst)) rt.Cancel(task);
    return ACCEL_SUCCESS;
  }
  *out_future = NewFuture(std::move(task), runtime_handle);
  return ACCEL_SUCCESS;
}

}  // namespace

extern "C" {

ACCEL_API uint32_t accel_runtime_version(void) { return ACCEL_RUNTIME_VERSION; }

ACCEL_API accel_status_t accel_runtime_create(accel_instance_t instance, const accel_runtime_desc_t* desc,
                                              accel_runtime_t* out_runtime) {
  if (out_runtime != nullptr) *out_runtime = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    uint32_t n = 0;
    if (accel_instance_enumerate_physical_devices(instance, &n, nullptr) != ACCEL_SUCCESS) {
      return Fail(fn, accel_last_error_status(), accel_last_error());
    }
    if (out_runtime == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_runtime' is NULL");
    accel_runtime_desc_t d{};
    if (desc != nullptr) {
      accel_status_t status = ACCEL_SUCCESS;
      if (!CheckHeader(fn, desc, ACCEL_STRUCTURE_TYPE_RUNTIME_DESC, "desc", &status)) return status;
      std::memcpy(&d, desc, std::min<size_t>(desc->struct_size, sizeof(d)));
    }
    if (d.reserved0 != 0) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->reserved0' must be 0");
    if (d.worker_threads > 1024) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'desc->worker_threads' {} is more than 1024", d.worker_threads));
    }
    // 1.2: an accel_object_store_desc_t chained to `next` configures the object store.
    accel::runtime::ObjectStore::Options store_options;
    for (const auto* link = static_cast<const accel_struct_header_t*>(d.next); link != nullptr;
         link = static_cast<const accel_struct_header_t*>(link->next)) {
      if (link->stype != ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC) continue;
      accel_object_store_desc_t sd{};
      accel_status_t status = ACCEL_SUCCESS;
      const auto* in = reinterpret_cast<const accel_object_store_desc_t*>(link);
      if (!CheckHeader(fn, in, ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC, "desc->next (accel_object_store_desc_t)",
                       &status)) {
        return status;
      }
      std::memcpy(&sd, in, std::min<size_t>(in->struct_size, sizeof(sd)));
      store_options.host_capacity = sd.host_capacity;
      store_options.device_capacity = sd.device_capacity;
      if (sd.spill_directory != nullptr) store_options.spill_directory = sd.spill_directory;
    }
    // How long a task-group client may leave its queued tasks before the workers take them (docs/scheduler.md,
    // "Client slots").
    std::chrono::microseconds client_lease = Runtime::kDefaultClientLease;
    if (const char* env = std::getenv("ACCEL_RUNTIME_CLIENT_LEASE_US"); env != nullptr && *env != '\0') {
      constexpr uint64_t kMostLeaseUs = 60'000'000;
      char* end = nullptr;
      errno = 0;
      const unsigned long long us = std::strtoull(env, &end, 10);  // NOLINT(google-runtime-int): strtoull's type
      if (errno != 0 || end == env || *end != '\0' || *env == '-' || us > kMostLeaseUs) {
        return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                    fmt::format("ACCEL_RUNTIME_CLIENT_LEASE_US='{}': expected a whole number of microseconds from 0 "
                                "to {}",
                                env, kMostLeaseUs));
      }
      client_lease = std::chrono::microseconds(us);
    }
    auto runtime = Runtime::Create(instance, d.worker_threads, std::move(store_options), client_lease);
    if (!runtime) return Fail(fn, ACCEL_ERROR_INTERNAL, runtime.error().message);
    const uint64_t handle = HandleTable::Get().Insert(HandleType::kRuntime, runtime.value());
    runtime.value()->set_handle(handle);
    *out_runtime = reinterpret_cast<accel_runtime_t>(handle);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_destroy(accel_runtime_t runtime) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (rt->OnWorker()) {
      return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION,
                  "'runtime' is destroyed from one of its own tasks: it would wait for itself");
    }
    if (Pins::PinnedByMe(rt.get())) {
      return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION,
                  "'runtime' is destroyed from inside another call on it (a callback it runs): it would wait for "
                  "itself");
    }
    if (!HandleTable::Get().Remove(reinterpret_cast<uint64_t>(runtime))) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'runtime' is a stale runtime handle (already destroyed)");
    }
    // Its groups' submissions that pin the group and not the runtime see this, or are waited for below.
    const std::vector<std::shared_ptr<TaskGroup>> groups = rt->MarkGroupsGone();
    rt->Shutdown();
    // Calls that pinned it (or one of its groups) before its value went out end before its memory may go
    // (docs/threading.md).
    Pins::WaitUnpinnedByOthers(rt.get());
    for (const auto& g : groups) Pins::WaitUnpinnedByOthers(g.get());
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_get_device_count(accel_runtime_t runtime, uint32_t* out_count) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (out_count == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_count' is NULL");
    *out_count = static_cast<uint32_t>(rt->device_count());
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_get_device(accel_runtime_t runtime, uint32_t index,
                                                  accel_runtime_device_t* out_device) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (!CheckHeader(fn, out_device, ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE, "out_device", &status)) return status;
    if (index >= rt->device_count()) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'index' {} is past the runtime's {} device(s)", index, rt->device_count()));
    }
    FillOut(out_device, rt->Device(index));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_get_counters(accel_runtime_t runtime, accel_runtime_counters_t* out_counters) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (!CheckHeader(fn, out_counters, ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS, "out_counters", &status)) {
      return status;
    }
    FillOut(out_counters, rt->Counters());
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_set_event_log(accel_runtime_t runtime, uint32_t capacity) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (capacity > ACCEL_RUNTIME_EVENT_LOG_MAX) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'capacity' {} is past the maximum, ACCEL_RUNTIME_EVENT_LOG_MAX ({})", capacity,
                              ACCEL_RUNTIME_EVENT_LOG_MAX));
    }
    rt->events().SetCapacity(capacity);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_runtime_get_events(accel_runtime_t runtime, uint64_t after, uint32_t capacity,
                                                  accel_runtime_event_t* out_events, uint32_t* out_count,
                                                  uint64_t* out_dropped) {
  if (out_count != nullptr) *out_count = 0;
  if (out_dropped != nullptr) *out_dropped = 0;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (out_count == nullptr) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_count' is NULL");
    }
    uint32_t stride = sizeof(accel_runtime_event_t);
    if (capacity > 0) {
      if (!CheckHeader(fn, out_events, ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT, "out_events", &status)) return status;
      if (out_events->struct_size < sizeof(accel_runtime_event_t)) {
        return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                    fmt::format("'out_events' has struct_size {}, smaller than the 1.3 accel_runtime_event_t ({})",
                                out_events->struct_size, sizeof(accel_runtime_event_t)));
      }
      stride = out_events->struct_size;
    }
    rt->events().Read(after, capacity, out_events, stride, out_count, out_dropped);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_placement_group_create(accel_runtime_t runtime, const accel_placement_group_desc_t* desc,
                                                      accel_placement_group_t* out_group) {
  if (out_group != nullptr) *out_group = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    accel_placement_group_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC, out_group, "out_group", &d, &status))
      return status;
    std::shared_ptr<Queue> queue;
    if (d.struct_size >= offsetof(accel_placement_group_desc_t, queue) + sizeof(d.queue) && d.queue != nullptr) {
      queue = Find<Queue>(fn, d.queue, HandleType::kQueue, "desc->queue", &status);
      if (!queue) return status;
      if (queue->owner != rt.get()) {
        return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->queue' is a queue of another runtime");
      }
    }
    std::shared_ptr<PlacementGroup> group;
    std::string why;
    status = rt->CreateGroup(d, std::move(queue), &group, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    try {
      *out_group =
          reinterpret_cast<accel_placement_group_t>(HandleTable::Get().Insert(HandleType::kPlacementGroup, group));
    } catch (...) {  // no handle (out of host memory, or every slot taken): the group, placed already, goes
      rt->DestroyGroup(group);
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_placement_group_destroy(accel_placement_group_t group) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<PlacementGroup>(fn, group, HandleType::kPlacementGroup, "group", &status);
    if (!g) return status;
    if (!HandleTable::Get().Remove(reinterpret_cast<uint64_t>(group))) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'group' is a stale placement group handle");
    }
    if (auto rt = g->runtime.lock()) rt->DestroyGroup(g);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_placement_group_get_devices(accel_placement_group_t group, uint32_t* inout_count,
                                                           accel_bundle_device_t* out_devices) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<PlacementGroup>(fn, group, HandleType::kPlacementGroup, "group", &status);
    if (!g) return status;
    if (inout_count == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'inout_count' is NULL");
    auto rt = g->runtime.lock();
    if (!rt) return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION, "the group's runtime was destroyed");
    std::vector<PlacementGroup::Slot> slots;  // set once placed; then fixed but for the free fields
    if (!rt->GroupSlots(*g, &slots)) {
      *inout_count = 0;
      return ACCEL_NOT_READY;  // pending (ACCEL_PLACEMENT_GROUP_WAIT): no devices yet
    }
    if (out_devices == nullptr) {
      *inout_count = static_cast<uint32_t>(slots.size());
      return ACCEL_SUCCESS;
    }
    if (*inout_count < slots.size()) {
      return Fail(
          fn, ACCEL_ERROR_INVALID_ARGUMENT,
          fmt::format("'inout_count' is {}, smaller than the {} entries to return", *inout_count, slots.size()));
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      accel_bundle_device_t& o = out_devices[i];
      if (o.stype != ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE || o.struct_size < 16) {
        return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                    fmt::format("'out_devices[{}]' has stype {} / struct_size {}: each entry's header must be set "
                                "(ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE)",
                                i, o.stype, o.struct_size));
      }
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      accel_bundle_device_t v{};
      v.bundle = slots[i].bundle;
      v.rank = slots[i].rank;
      v.physical_device = rt->resources().devices[slots[i].rank].physical;
      v.share = static_cast<double>(slots[i].share) / static_cast<double>(accel::planner::kShareUnits);
      v.memory = slots[i].memory;
      FillOut(&out_devices[i], v);
    }
    *inout_count = static_cast<uint32_t>(slots.size());
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_placement_group_wait(accel_placement_group_t group, uint64_t timeout_ns) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<PlacementGroup>(fn, group, HandleType::kPlacementGroup, "group", &status);
    if (!g) return status;
    auto rt = g->runtime.lock();
    if (!rt) return Fail(fn, ACCEL_ERROR_CANCELLED, "the group's runtime was destroyed");
    std::string why;
    status = rt->WaitGroup(g, timeout_ns, &why);
    return status == ACCEL_SUCCESS ? status : Fail(fn, status, why);
  });
}

ACCEL_API accel_status_t accel_placement_group_get_message(accel_placement_group_t group, size_t size, char* out_text,
                                                           size_t* out_size) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<PlacementGroup>(fn, group, HandleType::kPlacementGroup, "group", &status);
    if (!g) return status;
    auto rt = g->runtime.lock();
    const std::string text = rt ? rt->GroupMessage(*g) : std::string("its runtime was destroyed");
    return CopyText(fn, text, size, out_text, out_size);
  });
}

ACCEL_API accel_status_t accel_task_submit(accel_runtime_t runtime, const accel_task_desc_t* desc,
                                           accel_future_t* out_future) {
  if (out_future != nullptr) *out_future = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = FindRuntime(fn, runtime, "runtime", &status);
    if (!rt) return status;
    accel_task_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_TASK_DESC, out_future, "out_future", &d, &status)) return status;
    return SubmitTask(fn, *rt, reinterpret_cast<uint64_t>(runtime), d, nullptr, out_future);
  });
}

ACCEL_API accel_status_t accel_future_query(accel_future_t future) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto f = Find<Task>(fn, future, HandleType::kFuture, "future", &status);
    if (!f) return status;
    if (!f->done.load(std::memory_order_acquire)) return ACCEL_NOT_READY;
    if (f->final_result < 0) return accel_set_last_error(f->final_result, f->final_message.c_str());
    return f->final_result;
  });
}

ACCEL_API accel_status_t accel_future_wait(accel_future_t future, uint64_t timeout_ns) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto f = Find<Task>(fn, future, HandleType::kFuture, "future", &status);
    if (!f) return status;
    Task& task = *f;
    if (!WaitDone(f, timeout_ns)) {
      return Fail(fn, ACCEL_ERROR_TIMEOUT,
                  fmt::format("{} did not end within {} ns (it goes on)", task.Name(), timeout_ns));
    }
    if (task.final_result < 0) return accel_set_last_error(task.final_result, task.final_message.c_str());
    return task.final_result;
  });
}

ACCEL_API accel_status_t accel_future_cancel(accel_future_t future) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto f = Find<Task>(fn, future, HandleType::kFuture, "future", &status);
    if (!f) return status;
    if (auto rt = RuntimeRef::Of(f->runtime_handle)) {
      rt->Cancel(f);
    } else {
      f->cancel_requested = true;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_future_get_message(accel_future_t future, size_t size, char* out_text,
                                                  size_t* out_size) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto f = Find<Task>(fn, future, HandleType::kFuture, "future", &status);
    if (!f) return status;
    if (out_text == nullptr && out_size == nullptr) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_text' and 'out_size' are both NULL");
    }
    std::string text;
    if (f->done.load(std::memory_order_acquire)) text = f->final_result < 0 ? f->final_message : "";
    if (text.empty()) {
      if (auto rt = RuntimeRef::Of(f->runtime_handle)) text = rt->Explain(*f);
    }
    return CopyText(fn, text, size, out_text, out_size);
  });
}

ACCEL_API accel_status_t accel_future_release(accel_future_t future) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto task = std::static_pointer_cast<Task>(
        HandleTable::Get().Take(reinterpret_cast<uint64_t>(future), HandleType::kFuture));
    if (!task) {
      Find<Task>(fn, future, HandleType::kFuture, "future", &status);  // not a live future: why
      return status;
    }
    // Its result object's reference, when the task's end went first (Runtime::ReleaseObjects).
    if (task->result_holders.fetch_sub(1, std::memory_order_acq_rel) == 1 && task->result_object.object) {
      // Without the store once the runtime's destroy began: its shutdown frees every object.
      auto rt = RuntimeRef::Of(task->runtime_handle);
      accel::runtime::ReleaseObject(std::exchange(task->result_object, {}), rt ? &rt->store() : nullptr);
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_task_group_create(accel_runtime_t runtime, const accel_task_group_desc_t* desc,
                                                 accel_task_group_t* out_group) {
  if (out_group != nullptr) *out_group = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = FindRuntime(fn, runtime, "runtime", &status);
    if (!rt) return status;
    if (out_group == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_group' is NULL");
    accel_task_group_desc_t d{};
    if (desc != nullptr) {
      if (!CheckHeader(fn, desc, ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC, "desc", &status)) return status;
      std::memcpy(&d, desc, std::min<size_t>(desc->struct_size, sizeof(d)));
    }
    if (rt->stopping()) return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION, "the runtime is being destroyed");
    auto group = std::make_shared<TaskGroup>();
    group->runtime_handle = reinterpret_cast<uint64_t>(runtime);
    group->runtime = rt.get();
    group->label = d.name != nullptr && d.name[0] != '\0' ? fmt::format("task group '{}'", d.name) : "task group";
    if (!rt->AddGroup(group)) return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION, "the runtime is being destroyed");
    *out_group = reinterpret_cast<accel_task_group_t>(HandleTable::Get().Insert(HandleType::kTaskGroup, group));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_task_group_submit(accel_task_group_t group, const accel_task_desc_t* desc) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    // Read in place when of this version or later (the common case); an older one is copied, its later fields zero.
    accel_task_desc_t older;  // NOLINT(cppcoreguidelines-pro-type-member-init): filled only when used
    const accel_task_desc_t* d = nullptr;
    auto read_desc = [&] {
      if (!CheckHeader(fn, desc, ACCEL_STRUCTURE_TYPE_TASK_DESC, "desc", &status)) return false;
      d = desc;
      if (desc->struct_size < sizeof(older)) {
        older = accel_task_desc_t{};
        std::memcpy(&older, desc, desc->struct_size);
        d = &older;
      }
      return true;
    };
    std::shared_ptr<TaskGroup> g;
    {
      // The group pinned, not counted (docs/threading.md, "Pinned task groups"): the common case writes no line
      // that other threads write.
      const GroupPin pinned(reinterpret_cast<uint64_t>(group));
      if (pinned) {
        if (!read_desc()) return status;
        // A task that asks nothing of the scheduler is a light one (docs/scheduler.md, "Light group tasks"): every
        // field but the function and its user data at its default, so that nothing it could have asked for is lost.
        const bool light = d->function != nullptr && d->next == nullptr && (d->name == nullptr || d->name[0] == '\0') &&
                           d->request == nullptr && d->dependency_count == 0 && d->max_retries == 0 &&
                           d->queue == nullptr && d->near_object_count == 0 && d->reserved2 == 0 && d->preemptible <= 1;
        if (light && pinned.runtime().SubmitLight(pinned.group(), accel::runtime::LightTask{d->function, d->user_data,
                                                                                            d->release_user_data, 0})) {
          return ACCEL_SUCCESS;
        }
        // Counted from here, the pin dropped: the path below may run user callbacks (other tasks' releases), and a
        // group's destroy waits for its pins.
        g = pinned.group().shared_from_this();
      }
    }
    if (!g) {
      g = Find<TaskGroup>(fn, group, HandleType::kTaskGroup, "group", &status);
      if (!g) return status;
      if (!read_desc()) return status;
    }
    auto rt = RuntimeRef::Of(g->runtime_handle);
    if (!rt) return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'group' belongs to a runtime that was destroyed");
    return SubmitTask(fn, *rt, g->runtime_handle, *d, g, nullptr);
  });
}

ACCEL_API accel_status_t accel_task_group_wait(accel_task_group_t group, uint64_t timeout_ns) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<TaskGroup>(fn, group, HandleType::kTaskGroup, "group", &status);
    if (!g) return status;
    TaskGroup& tg = *g;
    if (const Task* current = accel::runtime::CurrentTask(); current != nullptr && current->group() == g.get()) {
      return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION,
                  fmt::format("{} waits for its own {}: the wait would count the caller", current->Name(), tg.label));
    }
    if (!WaitGroupEnded(tg, timeout_ns)) {
      return Fail(fn, ACCEL_ERROR_TIMEOUT,
                  fmt::format("{} still had {} task(s) running or waiting after {} ns (they go on)", tg.label,
                              tg.Open(), timeout_ns));
    }
    const std::lock_guard lock(tg.mutex);
    const bool cancelled = tg.cancelled.exchange(false, std::memory_order_seq_cst);
    const uint64_t failures = std::exchange(tg.failures, 0);
    const accel_status_t first = std::exchange(tg.first_error, ACCEL_SUCCESS);
    const std::string message = std::exchange(tg.first_message, {});
    if (cancelled) {
      return Fail(fn, ACCEL_ERROR_CANCELLED,
                  failures == 0 ? fmt::format("{} was cancelled (after all its tasks had run)", tg.label)
                                : fmt::format("{} was cancelled: {} of its tasks did not succeed; the first: {}",
                                              tg.label, failures, message));
    }
    if (failures == 0) return ACCEL_SUCCESS;
    return Fail(fn, first, fmt::format("{} of the tasks of {} failed; the first: {}", failures, tg.label, message));
  });
}

ACCEL_API accel_status_t accel_task_group_query(accel_task_group_t group) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<TaskGroup>(fn, group, HandleType::kTaskGroup, "group", &status);
    if (!g) return status;
    return g->Open() == 0 ? ACCEL_SUCCESS : ACCEL_NOT_READY;
  });
}

ACCEL_API accel_status_t accel_task_group_cancel(accel_task_group_t group) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto g = Find<TaskGroup>(fn, group, HandleType::kTaskGroup, "group", &status);
    if (!g) return status;
    auto rt = RuntimeRef::Of(g->runtime_handle);
    if (!rt) return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'group' belongs to a runtime that was destroyed");
    // Before the scan: a task the scan misses (submitted meanwhile) sees the flag when it would start.
    g->cancelled.store(true, std::memory_order_seq_cst);
    rt->CancelGroupTasks(*g);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_task_group_destroy(accel_task_group_t group) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    const std::shared_ptr<void> taken =
        HandleTable::Get().Take(reinterpret_cast<uint64_t>(group), HandleType::kTaskGroup);
    if (!taken) {
      Find<TaskGroup>(fn, group, HandleType::kTaskGroup, "group", &status);  // not a live group: why
      return status;
    }
    // Calls that pinned it before its value went out end before the table's reference goes (docs/threading.md).
    Pins::WaitUnpinnedByOthers(taken.get());
    return ACCEL_SUCCESS;  // its tasks hold it until they end
  });
}

ACCEL_API accel_status_t accel_task_context_get_device_count(accel_task_context_t context, uint32_t* out_count) {
  return ContextValue(__func__, context, out_count, "out_count",
                      [](const Task& t) { return static_cast<uint32_t>(t.ranks.size()); });
}

ACCEL_API accel_status_t accel_task_context_get_device(accel_task_context_t context, uint32_t index,
                                                       accel_device_t* out_device) {
  return ContextEntry(__func__, context, index, out_device,
                      [](const Task& t, uint32_t i) { return OwnerOf(t).resources().devices[t.ranks[i]].path; });
}

ACCEL_API accel_status_t accel_task_context_get_physical_device(accel_task_context_t context, uint32_t index,
                                                                accel_physical_device_t* out_physical_device) {
  return ContextEntry(__func__, context, index, out_physical_device,
                      [](const Task& t, uint32_t i) { return OwnerOf(t).resources().devices[t.ranks[i]].physical; });
}

ACCEL_API accel_status_t accel_task_context_get_memory_limit(accel_task_context_t context, uint32_t index,
                                                             uint64_t* out_bytes) {
  return ContextEntry(__func__, context, index, out_bytes, [](const Task& t, uint32_t i) { return t.memory[i]; });
}

ACCEL_API accel_status_t accel_task_context_get_attempt(accel_task_context_t context, uint32_t* out_attempt) {
  return ContextValue(__func__, context, out_attempt, "out_attempt", [](const Task& t) { return t.attempt; });
}

ACCEL_API accel_status_t accel_task_context_is_cancelled(accel_task_context_t context, uint32_t* out_cancelled) {
  return ContextValue(__func__, context, out_cancelled, "out_cancelled", [](const Task& t) {
    return t.cancel_requested || t.preempt_requested || t.GroupCancelled() ? 1 : 0;
  });
}

ACCEL_API accel_status_t accel_task_context_is_preempted(accel_task_context_t context, uint32_t* out_preempted) {
  return ContextValue(__func__, context, out_preempted, "out_preempted",
                      [](const Task& t) { return t.preempt_requested ? 1 : 0; });
}

ACCEL_API accel_status_t accel_task_context_get_actor_data(accel_task_context_t context, void** out_user_data) {
  return ContextValue(__func__, context, out_user_data, "out_user_data",
                      [](const Task& t) { return t.actor ? t.actor->user_data : nullptr; });
}

ACCEL_API accel_status_t accel_queue_create(accel_runtime_t runtime, const accel_queue_desc_t* desc,
                                            accel_queue_t* out_queue) {
  if (out_queue != nullptr) *out_queue = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    accel_queue_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_QUEUE_DESC, out_queue, "out_queue", &d, &status)) return status;
    std::shared_ptr<Queue> parent;
    if (d.parent != nullptr) {
      parent = Find<Queue>(fn, d.parent, HandleType::kQueue, "desc->parent", &status);
      if (!parent) return status;
    }
    std::shared_ptr<Queue> queue;
    std::string why;
    status = rt->CreateQueue(d, parent, &queue, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    try {
      *out_queue = reinterpret_cast<accel_queue_t>(HandleTable::Get().Insert(HandleType::kQueue, queue));
    } catch (...) {  // no handle: the queue, made already (its share counted in its parent's), goes
      std::string ignored;
      static_cast<void>(rt->DestroyQueue(queue, &ignored));
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_queue_destroy(accel_queue_t queue) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [q, rt] = FindWithRuntime<Queue>(fn, queue, HandleType::kQueue, "queue", &status);
    if (!q) return status;
    std::string why;
    status = rt->DestroyQueue(q, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    HandleTable::Get().Remove(reinterpret_cast<uint64_t>(queue));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_queue_get_usage(accel_queue_t queue, accel_queue_usage_t* out_usage) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [q, rt] = FindWithRuntime<Queue>(fn, queue, HandleType::kQueue, "queue", &status);
    if (!q) return status;
    if (!CheckHeader(fn, out_usage, ACCEL_STRUCTURE_TYPE_QUEUE_USAGE, "out_usage", &status)) return status;
    FillOut(out_usage, rt->Usage(*q));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_actor_create(accel_runtime_t runtime, const accel_actor_desc_t* desc,
                                            accel_actor_t* out_actor) {
  if (out_actor != nullptr) *out_actor = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    accel_actor_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_ACTOR_DESC, out_actor, "out_actor", &d, &status)) return status;
    auto actor = std::make_shared<Actor>();
    actor->name = d.name != nullptr ? d.name : "";
    actor->init = d.init;
    actor->finalize = d.finalize;
    actor->user_data = d.user_data;
    actor->max_restarts = d.max_restarts;
    auto holder = NewTask();
    holder->priority = d.priority;
    std::string why;
    status = rt->ReadRequest(d.request, "desc->request", false, &holder->request, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    if (d.queue != nullptr) {
      auto q = Find<Queue>(fn, d.queue, HandleType::kQueue, "desc->queue", &status);
      if (!q) return status;
      if (q->owner != rt.get()) {
        return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->queue' is a queue of another runtime");
      }
      holder->queue = q;
    }
    actor->release_user_data = d.release_user_data;  // the runtime's once accepted
    status = rt->CreateActor(actor, holder, &why);
    if (status != ACCEL_SUCCESS) {
      actor->release_user_data = nullptr;
      return Fail(fn, status, fmt::format("'desc->request': {}", why));
    }
    try {
      *out_actor = reinterpret_cast<accel_actor_t>(HandleTable::Get().Insert(HandleType::kActor, actor));
    } catch (...) {  // no handle: the actor, placed already, goes; its data stays the caller's (the call failed)
      actor->release_user_data = nullptr;
      rt->DestroyActor(actor);
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_actor_call(accel_actor_t actor, const accel_task_desc_t* desc,
                                          accel_future_t* out_future) {
  if (out_future != nullptr) *out_future = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto a = Find<Actor>(fn, actor, HandleType::kActor, "actor", &status);
    if (!a) return status;
    accel_task_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_TASK_DESC, out_future, "out_future", &d, &status)) return status;
    if (d.request != nullptr || d.queue != nullptr || d.priority != 0 || d.preemptible != 0) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->request', 'queue', 'priority' and 'preemptible' must be NULL/0: a call runs on the actor's "
                  "reservation");
    }
    auto owner = LiveRuntime(fn, a->runtime, "actor", &status);
    if (!owner) return status;
    auto task = NewTask();
    task->actor = a;
    status = ReadTask(fn, *owner, d, task.get());
    if (status != ACCEL_SUCCESS) return status;
    task->release_user_data = d.release_user_data;
    std::string why;
    status = owner->Call(task, &why);
    if (status != ACCEL_SUCCESS) {
      task->release_user_data = nullptr;
      return Fail(fn, status, why);
    }
    *out_future = NewFuture(std::move(task), owner->handle());
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_actor_get_info(accel_actor_t actor, accel_actor_info_t* out_info) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [a, rt] = FindWithRuntime<Actor>(fn, actor, HandleType::kActor, "actor", &status);
    if (!a) return status;
    if (!CheckHeader(fn, out_info, ACCEL_STRUCTURE_TYPE_ACTOR_INFO, "out_info", &status)) return status;
    FillOut(out_info, rt->Info(*a));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_actor_get_message(accel_actor_t actor, size_t size, char* out_text, size_t* out_size) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto a = Find<Actor>(fn, actor, HandleType::kActor, "actor", &status);
    if (!a) return status;
    if (out_text == nullptr && out_size == nullptr) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_text' and 'out_size' are both NULL");
    }
    auto rt = LiveRuntime(fn, a->runtime, "actor", &status);
    if (!rt) return status;
    return CopyText(fn, rt->ActorMessage(*a), size, out_text, out_size);
  });
}

ACCEL_API accel_status_t accel_actor_destroy(accel_actor_t actor) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto a = Find<Actor>(fn, actor, HandleType::kActor, "actor", &status);
    if (!a) return status;
    if (!HandleTable::Get().Remove(reinterpret_cast<uint64_t>(actor))) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'actor' is a stale actor handle");
    }
    if (auto rt = a->runtime.lock()) rt->DestroyActor(a);
    return ACCEL_SUCCESS;
  });
}

}  // extern "C"
