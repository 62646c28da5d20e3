// accel._accel's scheduler part: libaccel-runtime (include/accel/runtime.h,
// docs/scheduler.md) for Python. The accel package (accel/_runtime.py) builds
// the user-facing API (accel.task, actors, current runtime) on these classes.
//
// Threads and the GIL: task functions run on the runtime's worker threads.
// The trampolines take the GIL (when the interpreter is not finalizing) and
// call a Python "runner" with the TaskContext; every C call that can block or
// run callbacks (submit, wait, cancel, destroy, ...) is made without the GIL.
//
// Lifetimes: what the runtime calls back with (TaskCall, ActorState) holds
// Python objects and no C++ object of the bindings, so that no runtime is ever
// destroyed from its own callbacks; Futures keep their runtime, placement
// group and actor alive (queues live until destroyed or their runtime
// closes). A runtime whose last reference goes away on a worker thread is
// destroyed by a helper thread (a runtime cannot be destroyed from its own
// threads), and every runtime still open is closed at exit.
#include <pybind11/stl.h>

#include <accel/object_store.h>
#include <accel/runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <thread>
#include <utility>

#include "common.h"
#include "names.h"

namespace accelpy {
namespace {

PyObject* g_accel_error_type = nullptr;  // accel.AccelError (the module holds it)
PyObject* g_task_error = nullptr;        // accel.TaskError(AccelError)
PyObject* g_selector_error = nullptr;    // accel.SelectorError(AccelError, ValueError)

// True while this thread runs a task function (a runtime worker, or a thread
// whose wait runs a task nobody started: docs/scheduler.md, "The direct path").
thread_local bool t_runtime_thread = false;

// Sets t_runtime_thread for one task function and restores it after.
class InTaskFunction {
 public:
  InTaskFunction() : previous_(t_runtime_thread) { t_runtime_thread = true; }
  ~InTaskFunction() { t_runtime_thread = previous_; }
  InTaskFunction(const InTaskFunction&) = delete;
  InTaskFunction& operator=(const InTaskFunction&) = delete;

 private:
  bool previous_;
};

using accel::detail::sized;

// Makes an Accel C call without the GIL and raises its error (read on this thread before the GIL is taken back).
template <class F>
void CallWithoutGil(F&& c_call) {
  accel_status_t status;
  std::string error;
  {
    NoGil nogil;
    status = c_call();
    if (status < 0) error = accel_last_error();
  }
  if (status < 0) raise(status, error);
}

// Raises `cls` (AccelError or a subclass) with the status attributes set.
[[noreturn]] void raise_as(PyObject* cls, accel_status_t status, const std::string& message,
                           py::handle cause = py::handle(), uint32_t column = 0) {
  py::object exc = py::reinterpret_borrow<py::object>(cls)(message);
  exc.attr("status") = static_cast<int>(status);
  exc.attr("status_name") = accel_status_name(status);
  if (cls == g_selector_error) exc.attr("column") = column;
  if (cause) PyException_SetCause(exc.ptr(), py::reinterpret_borrow<py::object>(cause).release().ptr());
  PyErr_SetObject(cls, exc.ptr());
  throw py::error_already_set();
}

// Checks a selector with accel_selector_check; raises SelectorError with the column.
void check_selector(const std::string& selector, const std::string& field) {
  if (selector.empty()) return;
  uint32_t column = 0;
  if (accel_selector_check(selector.c_str(), &column) != ACCEL_SUCCESS) {
    raise_as(g_selector_error, ACCEL_ERROR_INVALID_ARGUMENT, field + ": " + accel_last_error(), py::handle(), column);
  }
}

py::object device_object(const std::shared_ptr<Instance>& inst, accel_device_t handle) {
  for (uint32_t i = 0; i < inst->devices.size(); ++i)
    if (inst->devices[i].handle == handle) return py::cast(Device{inst, handle, i});
  return py::cast(Device{inst, handle, UINT32_MAX});
}

// The first access path (stable order) of a physical device, as the runtime hands them to tasks.
py::object first_access_path(const std::shared_ptr<Instance>& inst, accel_physical_device_t physical) {
  uint32_t count = 0;
  check(accel_physical_device_enumerate_devices(physical, &count, nullptr));
  std::vector<accel_device_t> handles(count);
  check(accel_physical_device_enumerate_devices(physical, &count, handles.data()));
  for (auto& info : inst->devices)
    if (std::find(handles.begin(), handles.end(), info.handle) != handles.end())
      return device_object(inst, info.handle);
  return py::none();
}

// Reads a text with the size pattern of accel_future_get_message, again when it grew between the two calls (a
// waiting task's message changes as it waits).
template <class Get>
std::string read_text(Get&& get) {
  size_t size = 0;
  check(get(size_t{0}, nullptr, &size));
  for (;;) {
    std::string text(size, '\0');
    size_t needed = 0;
    const accel_status_t status = get(size, text.data(), &needed);
    if (status == ACCEL_SUCCESS) {
      text.resize(needed > 0 ? needed - 1 : 0);
      return text;
    }
    if (status != ACCEL_ERROR_INVALID_ARGUMENT || needed <= size) check(status);
    size = needed;
  }
}

// Whether this is Python's main thread, the one signals (Ctrl-C) reach. Needs the GIL.
bool on_main_thread() {
  // Leaked: a static py::object would be released after the interpreter ends.
  static const auto* const main_thread = new py::object(py::module_::import("threading").attr("main_thread"));
  return (*main_thread)().attr("ident").cast<unsigned long>() == PyThread_get_thread_ident();
}

// ---- runtime ---------------------------------------------------------------

// One accel_runtime_t. The GIL guards `handle`; the C calls themselves are thread-safe.
struct HostViewCore;

struct RuntimeCore {
  std::shared_ptr<Instance> inst;
  accel_runtime_t handle = nullptr;
  uint32_t workers = 0;
  // The host views of its objects (ref.get()), which read the store's memory: closing destroys the store, so it
  // releases those no numpy array, memoryview or DLPack capsule uses, and refuses while one does. Under the GIL.
  std::vector<std::weak_ptr<HostViewCore>> host_views;
  // The buffers of its device replicas (ref.get(device)), the store's memory too: closing refuses while one has a
  // buffer-protocol or DLPack export (Buffer::exports), or lives after its __array_interface__ was read; the arrays
  // themselves then raise on use (a stale handle).
  std::vector<std::weak_ptr<Buffer>> replica_buffers;

  ~RuntimeCore() {
    accel_runtime_t h = handle;
    handle = nullptr;
    if (h == nullptr) return;
    if (t_runtime_thread) {
      // A worker cannot destroy its runtime (it would wait for itself).
      std::thread([h, keep = inst] { accel_runtime_destroy(h); }).detach();
      return;
    }
    NoGil nogil;
    if (accel_runtime_destroy(h) == ACCEL_ERROR_FAILED_PRECONDITION) {
      // On one of its workers after all (one that released a task's data without running it): as above.
      std::thread([h, keep = inst] { accel_runtime_destroy(h); }).detach();
    }
  }

  accel_runtime_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "the accel.Runtime is closed");
    return handle;
  }

  // `force` (at interpreter exit): exported views do not keep the runtime open.
  void close(bool force = false);
  void close_now() {
    accel_runtime_t h = handle;
    if (h == nullptr) return;
    handle = nullptr;  // new work is refused from now on
    accel_status_t status;
    {
      NoGil nogil;
      status = accel_runtime_destroy(h);
    }
    if (status != ACCEL_SUCCESS) {
      handle = h;  // e.g. closed from one of its own tasks: still open
      check(status);
    }
  }
};

using RuntimePtr = std::shared_ptr<RuntimeCore>;

std::mutex g_runtimes_mutex;
std::vector<std::weak_ptr<RuntimeCore>>* g_runtimes = new std::vector<std::weak_ptr<RuntimeCore>>();  // leaked

void close_all_runtimes() {  // atexit: before the interpreter finalizes, while tasks can still take the GIL
  std::vector<RuntimePtr> open;
  {
    std::lock_guard lock(g_runtimes_mutex);
    for (auto& weak : *g_runtimes)
      if (auto rt = weak.lock()) open.push_back(rt);
    g_runtimes->clear();
  }
  for (auto& rt : open) {
    try {
      rt->close(/*force=*/true);
    } catch (...) {
      PyErr_Clear();
    }
  }
}

// ---- placement groups and queues ---------------------------------------------

struct GroupCore {
  RuntimePtr rt;
  accel_placement_group_t handle = nullptr;
  std::string name;
  uint32_t bundle_count = 0;
  ~GroupCore() { destroy(); }
  void destroy() {
    if (handle == nullptr) return;
    accel_placement_group_t h = handle;
    handle = nullptr;
    NoGil nogil;
    accel_placement_group_destroy(h);  // INVALID_HANDLE after the runtime closed: nothing left to free
  }
  accel_placement_group_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "placement group '" + name + "' was destroyed");
    return handle;
  }
  std::vector<accel_bundle_device_t> devices() const {
    uint32_t count = 0;
    if (accel_placement_group_get_devices(live(), &count, nullptr) == ACCEL_NOT_READY) return {};  // pending
    std::vector<accel_bundle_device_t> out(count, sized<accel_bundle_device_t>(ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE));
    check(accel_placement_group_get_devices(live(), &count, out.data()));
    out.resize(count);
    return out;
  }
};
using GroupPtr = std::shared_ptr<GroupCore>;

// A queue lives until destroy() or its runtime's close, not only as long as
// this object: the hierarchy holds it (dropping a child must not turn its
// parent back into a leaf).
struct QueueCore {
  RuntimePtr rt;
  accel_queue_t handle = nullptr;
  std::string name;
  accel_queue_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "queue '" + name + "' was destroyed");
    return handle;
  }
};
using QueuePtr = std::shared_ptr<QueueCore>;

// ---- tasks -----------------------------------------------------------------

// The shape of an accel.ObjectRef a task returned, to wrap its result object
// again for Future.result() (the task's result holds the reference: holding
// the ObjectRef here would keep the object, and so its lineage, alive forever).
struct ObjectMeta {
  uint64_t size = 0;
  std::string name;
  const DType* dtype = nullptr;
  std::vector<int64_t> shape;
};

// When `value` is an accel.ObjectRef: makes it the task's result object
// (accel_task_context_set_result, so that its lineage can make it again:
// docs/objectstore.md) and returns its shape; null otherwise, or when the C
// call refuses (an actor's call: its value is returned as is). Defined with
// the objects below.
std::shared_ptr<ObjectMeta> set_result_object(accel_task_context_t context, const py::object& value);
// The result object of the task behind `future`, as an accel.ObjectRef of `rt`.
py::object get_result_object(const RuntimePtr& rt, accel_future_t future, const ObjectMeta& meta);

// What a Future reads: the last attempt's return value or exception. The GIL guards it.
struct TaskResult {
  py::object value;
  std::shared_ptr<ObjectMeta> object;  // set when the value is the task's result object (then `value` is None)
  py::object exception;
  // Called without the GIL when Python is gone: the objects are leaked, not freed.
  void leak() {
    value.release();
    exception.release();
  }
};

// The user_data of a task or actor call.
struct TaskCall {
  std::string name;
  py::object runner;  // runner(ctx) -> the task's value
  std::shared_ptr<TaskResult> result;
};

// The user_data of an actor: its Python instance, made by factory(ctx) in init.
struct ActorState {
  std::string name;
  py::object factory;
  py::object instance;
};

struct TaskContext {
  accel_task_context_t handle = nullptr;
  std::weak_ptr<RuntimeCore> rt;
  std::shared_ptr<Instance> inst;
  bool valid = true;  // only during the task function's call

  accel_task_context_t live() const {
    if (!valid) raise(ACCEL_ERROR_FAILED_PRECONDITION, "the TaskContext was used after its task function returned");
    return handle;
  }
  uint32_t device_count() const {
    uint32_t count = 0;
    check(accel_task_context_get_device_count(live(), &count));
    return count;
  }
};
using ContextPtr = std::shared_ptr<TaskContext>;

// Per-call state: the context, made invalid when the call returns.
struct ContextScope {
  ContextPtr ctx;
  ContextScope(accel_task_context_t handle, std::shared_ptr<Instance> inst, std::weak_ptr<RuntimeCore> rt)
      : ctx(std::make_shared<TaskContext>()) {
    ctx->handle = handle;
    ctx->inst = std::move(inst);
    ctx->rt = std::move(rt);
  }
  ~ContextScope() { ctx->valid = false; }
};

// The runtime a trampoline's context belongs to, for TaskContext.runtime; set in submit.
struct Origin {
  std::weak_ptr<RuntimeCore> rt;
  std::shared_ptr<Instance> inst;
};

// The status and message a Python exception ends a task with: an AccelError's
// own status (DEVICE_LOST retries), else ACCEL_ERROR_INTERNAL.
accel_status_t describe_exception(const std::string& name, const py::error_already_set& e, std::string* message) {
  accel_status_t status = ACCEL_ERROR_INTERNAL;
  try {
    py::object value = e.value();
    if (py::isinstance(value, py::handle(g_accel_error_type))) {
      py::object s = value.attr("status");
      if (py::isinstance<py::int_>(s) && s.cast<int>() < 0) status = static_cast<accel_status_t>(s.cast<int>());
    }
    *message = py::module_::import("accel._runtime").attr("_error_message")(name, value, e.trace()).cast<std::string>();
  } catch (const std::exception&) {  // py::error_already_set, py::cast_error (an odd .status), ...
    *message = name + " raised an exception that could not be described";
  }
  return status;
}

// Runs `body` (the Python code of a task or of an actor's init) with the GIL held and turns whatever it throws into
// the task's status and message (`on_python_error` sees a Python exception first): nothing leaves into C.
template <class Body, class OnPythonError>
accel_status_t guarded_python(const std::string& name, Body&& body, OnPythonError&& on_python_error) {
  std::string message;
  accel_status_t status = ACCEL_SUCCESS;
  try {
    body();
  } catch (py::error_already_set& e) {
    status = describe_exception(name, e, &message);
    on_python_error(e);
  } catch (const AccelException& e) {
    status = e.status;
    message = e.message;
  } catch (const std::exception& e) {
    status = ACCEL_ERROR_INTERNAL;
    message = name + ": " + e.what();
  } catch (...) {
    status = ACCEL_ERROR_INTERNAL;
    message = name + ": an unknown C++ exception";
  }
  if (status == ACCEL_SUCCESS) return ACCEL_SUCCESS;
  return accel_set_last_error(status, message.c_str());
}

struct TaskPayload {
  TaskCall call;
  Origin origin;
};

accel_status_t run_task(accel_task_context_t context, void* user_data) {
  const InTaskFunction in_task;
  auto* payload = static_cast<TaskPayload*>(user_data);
  if (!python_alive()) return accel_set_last_error(ACCEL_ERROR_CANCELLED, "the Python interpreter is shutting down");
  py::gil_scoped_acquire gil;
  return guarded_python(
      payload->call.name,
      [&] {
        ContextScope scope(context, payload->origin.inst, payload->origin.rt);
        py::object value = payload->call.runner(scope.ctx);
        payload->call.result->object = set_result_object(context, value);
        if (payload->call.result->object) value = py::object();
        payload->call.result->value = std::move(value);
        payload->call.result->exception = py::object();
      },
      [&](const py::error_already_set& e) {
        payload->call.result->value = py::object();
        payload->call.result->exception = e.value();
      });
}

void release_task(void* user_data) {
  auto* payload = static_cast<TaskPayload*>(user_data);
  if (!python_alive()) {
    payload->call.runner.release();
    if (payload->call.result.use_count() == 1) payload->call.result->leak();
    delete payload;
    return;
  }
  py::gil_scoped_acquire gil;
  delete payload;
}

// Set once the runtime released an actor's user_data: after finalize, with its reservation freed.
struct Released {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  void set() {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done; });
  }
};

struct ActorPayload {
  ActorState state;
  Origin origin;
  std::shared_ptr<Released> released;
};

accel_status_t run_actor_init(accel_task_context_t context, void* user_data) {
  const InTaskFunction in_task;
  auto* payload = static_cast<ActorPayload*>(user_data);
  if (!python_alive()) return accel_set_last_error(ACCEL_ERROR_CANCELLED, "the Python interpreter is shutting down");
  py::gil_scoped_acquire gil;
  return guarded_python(
      payload->state.name,
      [&] {
        ContextScope scope(context, payload->origin.inst, payload->origin.rt);
        payload->state.instance = py::object();  // a restart makes a new instance
        payload->state.instance = payload->state.factory(scope.ctx);
      },
      [](const py::error_already_set&) {});
}

accel_status_t run_actor_finalize(accel_task_context_t, void* user_data) {
  const InTaskFunction in_task;
  auto* payload = static_cast<ActorPayload*>(user_data);
  if (!python_alive()) {
    payload->state.instance.release();
    return ACCEL_SUCCESS;
  }
  py::gil_scoped_acquire gil;
  try {
    payload->state.instance = py::object();  // the instance's __del__ runs here, on the reservation
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("finalizing an accel actor");
  }
  return ACCEL_SUCCESS;
}

void release_actor(void* user_data) {
  auto* payload = static_cast<ActorPayload*>(user_data);
  auto released = payload->released;
  if (!python_alive()) {
    payload->state.factory.release();
    payload->state.instance.release();
    delete payload;
  } else {
    py::gil_scoped_acquire gil;
    delete payload;
  }
  released->set();
}

struct ActorCore {
  RuntimePtr rt;
  GroupPtr group;  // the placement group its reservation is in, kept while the actor lives
  accel_actor_t handle = nullptr;
  std::string name;
  std::shared_ptr<Released> released = std::make_shared<Released>();
  ~ActorCore() { destroy(false); }
  // With `wait` (and not on a runtime thread), returns once finalize ran and the reservation is free.
  void destroy(bool wait) {
    if (handle == nullptr) return;
    accel_actor_t h = handle;
    handle = nullptr;
    NoGil nogil;
    const accel_status_t status = accel_actor_destroy(h);
    // INVALID_HANDLE: the runtime closed, which released the actor already.
    if (wait && !t_runtime_thread && (status == ACCEL_SUCCESS || status == ACCEL_ERROR_INVALID_HANDLE))
      released->wait();
  }
  accel_actor_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "actor '" + name + "' was destroyed");
    return handle;
  }
};
using ActorPtr = std::shared_ptr<ActorCore>;

// Waits through `wait(slice_ns)`, called without the GIL, which returns ACCEL_NOT_READY while what it waits for has
// not ended: on the main thread in 100 ms slices, so that Ctrl-C interrupts the wait; elsewhere, without a deadline,
// one call with ACCEL_TIMEOUT_INFINITE. Returns its last status, or nullopt when `timeout_s` passed first.
template <class Wait>
std::optional<accel_status_t> wait_in_slices(std::optional<double> timeout_s, const char* what, Wait&& wait) {
  using clock = std::chrono::steady_clock;
  const uint64_t total = timeout_ns(timeout_s, what);  // the package's one rule for timeouts (common.h)
  const bool bounded = total != ACCEL_TIMEOUT_INFINITE;
  const auto deadline = bounded ? clock::now() + std::chrono::duration_cast<clock::duration>(
                                                     std::chrono::nanoseconds(static_cast<int64_t>(total)))
                                : clock::time_point::max();
  const bool sliced = bounded || on_main_thread();
  for (;;) {
    uint64_t slice = ACCEL_TIMEOUT_INFINITE;
    if (sliced) {
      slice = 100'000'000;  // 100 ms
      if (bounded) {
        const auto left =
            std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::min(deadline, clock::now()));
        slice = std::min<uint64_t>(slice, static_cast<uint64_t>(left.count()));
      }
    }
    accel_status_t status;
    {
      NoGil nogil;
      status = wait(slice);
    }
    if (status != ACCEL_NOT_READY) return status;
    if (clock::now() >= deadline) return std::nullopt;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

struct Future {
  RuntimePtr rt;
  GroupPtr group;  // the placement group it runs in, kept until the future goes
  ActorPtr actor;  // an actor call's actor
  accel_future_t handle = nullptr;
  std::string name;
  std::shared_ptr<TaskResult> result;

  ~Future() {
    if (handle == nullptr) return;
    NoGil nogil;
    accel_future_release(handle);
  }

  std::string message() const {
    return read_text(
        [&](size_t size, char* text, size_t* out) { return accel_future_get_message(handle, size, text, out); });
  }

  // Waits (wait_in_slices); a wait without a deadline off the main thread is one C wait, which runs the task here
  // when no worker started it (docs/scheduler.md, "The direct path": a task that waits for another never starves
  // the workers). Returns the task's result, or nullopt when `timeout_s` passed first.
  std::optional<accel_status_t> wait(std::optional<double> timeout_s, std::string* error) {
    auto ended = wait_in_slices(timeout_s, "Future.result", [&](uint64_t slice) {
      accel_status_t status = accel_future_wait(handle, slice);
      // A task may itself end with ACCEL_ERROR_TIMEOUT: the query tells.
      if (status == ACCEL_ERROR_TIMEOUT) status = accel_future_query(handle);
      if (status < 0) *error = accel_last_error();
      return status;
    });
    if (!ended) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", timeout_s.value_or(0.0));
      *error = name + " did not end within " + seconds + " s (it goes on)";
    }
    return ended;
  }

  py::object get(std::optional<double> timeout_s) {
    std::string error;
    auto ended = wait(timeout_s, &error);
    if (!ended) raise(ACCEL_ERROR_TIMEOUT, error);
    const accel_status_t status = *ended;
    if (status == ACCEL_SUCCESS && result->object) return get_result_object(rt, handle, *result->object);
    if (status == ACCEL_SUCCESS) return result->value ? result->value : py::none();
    if (result->exception) raise_as(g_task_error, status, error, result->exception);
    raise(status, error);
  }
};
using FuturePtr = std::shared_ptr<Future>;

// ---- requests ----------------------------------------------------------------

// A resource request from Python arguments; owns the selector's text.
struct Request {
  std::string selector;
  GroupPtr group;
  accel_resource_request_t c = sized<accel_resource_request_t>(ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST);
};

// `share` None: 1.0, or inside a placement group the bundle's share; `devices`
// 0 inside a placement group: all of the bundle's devices.
std::unique_ptr<Request> make_request(uint32_t devices, std::optional<double> share, uint64_t memory,
                                      std::optional<std::string> selector, GroupPtr group, uint32_t bundle) {
  auto r = std::make_unique<Request>();
  r->selector = selector.value_or("");
  check_selector(r->selector, "selector");
  double s = share.value_or(1.0);
  if (group) {
    group->live();
    if (bundle >= group->bundle_count)
      raise(ACCEL_ERROR_INVALID_ARGUMENT, "bundle " + std::to_string(bundle) + " is past placement group '" +
                                              group->name + "''s " + std::to_string(group->bundle_count) +
                                              " bundle(s)");
    uint32_t in_bundle = 0;
    double bundle_share = 1.0;
    for (const auto& d : group->devices()) {
      if (d.bundle != bundle) continue;
      ++in_bundle;
      bundle_share = d.share;
    }
    if (devices == 0) devices = in_bundle;
    if (!share) s = bundle_share;
    r->c.placement_group = group->handle;
    r->c.bundle_index = bundle;
    r->group = std::move(group);
  }
  r->c.device_count = devices;
  r->c.share = devices > 0 ? s : 0.0;
  r->c.memory = memory;
  r->c.selector = r->selector.empty() ? nullptr : r->selector.c_str();
  return r;
}

std::vector<accel_future_t> dependency_handles(const std::vector<FuturePtr>& after) {
  std::vector<accel_future_t> out;
  for (const auto& f : after) {
    if (!f) raise(ACCEL_ERROR_INVALID_ARGUMENT, "after: None is not an accel.Future");
    out.push_back(f->handle);
  }
  return out;
}

// The accel_object_t of an accel.ObjectRef (TypeError otherwise); defined with the objects below.
accel_object_t object_handle(py::handle object);

// A task's C descriptor from Python arguments, with everything it points to.
struct PreparedTask {
  std::vector<accel_object_t> near_handles;
  std::unique_ptr<Request> request;
  std::vector<accel_future_t> deps;
  std::shared_ptr<TaskResult> result = std::make_shared<TaskResult>();
  std::unique_ptr<TaskPayload> payload;
  accel_task_desc_t desc = sized<accel_task_desc_t>(ACCEL_STRUCTURE_TYPE_TASK_DESC);
};

std::unique_ptr<PreparedTask> prepare_task(const RuntimePtr& rt, py::object runner, const std::string& name,
                                           uint32_t devices, std::optional<double> share, uint64_t memory,
                                           std::optional<std::string> selector, GroupPtr group, uint32_t bundle,
                                           const std::vector<FuturePtr>& after, uint32_t max_retries,
                                           const QueuePtr& queue, int32_t priority, bool preemptible,
                                           const py::list& near) {
  auto t = std::make_unique<PreparedTask>();
  for (py::handle object : near) t->near_handles.push_back(object_handle(object));
  t->request = make_request(devices, share, memory, std::move(selector), std::move(group), bundle);
  t->deps = dependency_handles(after);
  t->payload =
      std::make_unique<TaskPayload>(TaskPayload{TaskCall{name, std::move(runner), t->result}, Origin{rt, rt->inst}});
  accel_task_desc_t& desc = t->desc;
  desc.name = t->payload->call.name.c_str();
  desc.function = run_task;
  desc.user_data = t->payload.get();
  desc.release_user_data = release_task;
  desc.request = &t->request->c;  // device_count 0: no device (the C side checks the rest)
  desc.dependencies = t->deps.empty() ? nullptr : t->deps.data();
  desc.dependency_count = static_cast<uint32_t>(t->deps.size());
  desc.max_retries = max_retries;
  desc.queue = queue ? queue->live() : nullptr;
  desc.priority = priority;
  desc.preemptible = preemptible ? 1 : 0;
  desc.near_objects = t->near_handles.empty() ? nullptr : t->near_handles.data();
  desc.near_object_count = static_cast<uint32_t>(t->near_handles.size());
  return t;
}

FuturePtr submit(const RuntimePtr& rt, py::object runner, const std::string& name, uint32_t devices,
                 std::optional<double> share, uint64_t memory, std::optional<std::string> selector, GroupPtr group,
                 uint32_t bundle, const std::vector<FuturePtr>& after, uint32_t max_retries, QueuePtr queue,
                 int32_t priority, bool preemptible, const py::list& near) {
  auto t = prepare_task(rt, std::move(runner), name, devices, share, memory, std::move(selector), std::move(group),
                        bundle, after, max_retries, queue, priority, preemptible, near);
  auto future = std::make_shared<Future>();
  future->rt = rt;
  future->group = t->request->group;
  future->name = name;
  future->result = t->result;
  accel_runtime_t handle = rt->live();
  CallWithoutGil([&] {
    return accel_task_submit(handle, &t->desc, &future->handle);
  });  // the payload is still ours (freed with the GIL held)
  static_cast<void>(t->payload.release());
  return future;
}

// ---- task groups (1.4) ---------------------------------------------------------

// Tasks without a Future each, waited for together (Runtime.task_group). The
// placement groups its tasks run in are kept until a wait returns.
struct TaskGroupCore {
  RuntimePtr rt;
  accel_task_group_t handle = nullptr;
  std::string name;
  std::vector<GroupPtr> placement_groups;
  ~TaskGroupCore() { destroy(); }
  void destroy() {
    if (handle == nullptr) return;
    accel_task_group_t h = std::exchange(handle, nullptr);
    NoGil nogil;
    accel_task_group_destroy(h);  // its tasks go on
  }
  accel_task_group_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, name + " was destroyed");
    return handle;
  }

  void submit(py::object runner, const std::string& task_name, uint32_t devices, std::optional<double> share,
              uint64_t memory, std::optional<std::string> selector, GroupPtr group, uint32_t bundle,
              const std::vector<FuturePtr>& after, uint32_t max_retries, QueuePtr queue, int32_t priority,
              bool preemptible, const py::list& near) {
    auto t = prepare_task(rt, std::move(runner), task_name, devices, share, memory, std::move(selector),
                          std::move(group), bundle, after, max_retries, queue, priority, preemptible, near);
    accel_task_group_t h = live();
    CallWithoutGil([&] { return accel_task_group_submit(h, &t->desc); });
    static_cast<void>(t->payload.release());
    if (t->request->group) placement_groups.push_back(t->request->group);
  }

  // As Future.wait (wait_in_slices): a C wait without a deadline runs this thread's own queued tasks meanwhile.
  // True once all ended; false when `timeout_s` passed first; raises TaskError for the first failure (or the
  // cancel).
  bool wait(std::optional<double> timeout_s) {
    accel_task_group_t h = live();
    std::string error;
    auto ended = wait_in_slices(timeout_s, "TaskGroup.wait", [&](uint64_t slice) {
      accel_status_t status = accel_task_group_wait(h, slice);
      // A task may itself fail with ACCEL_ERROR_TIMEOUT: the query tells.
      if (status == ACCEL_ERROR_TIMEOUT && accel_task_group_query(h) == ACCEL_NOT_READY) return ACCEL_NOT_READY;
      if (status < 0) error = accel_last_error();
      return status;
    });
    if (!ended) return false;
    placement_groups.clear();
    if (*ended < 0) raise_as(g_task_error, *ended, error);
    return true;
  }
};
using TaskGroupPtr = std::shared_ptr<TaskGroupCore>;

py::dict counters_dict(const accel_runtime_counters_t& c) {
  py::dict d;
  d["submitted"] = c.submitted;
  d["placed"] = c.placed;
  d["started"] = c.started;
  d["finished"] = c.finished;
  d["failed"] = c.failed;
  d["cancelled"] = c.cancelled;
  d["retried"] = c.retried;
  d["devices_lost"] = c.devices_lost;
  d["pending"] = c.pending;
  d["running"] = c.running;
  d["placement_groups_created"] = c.placement_groups_created;
  d["placement_groups_refused"] = c.placement_groups_refused;
  d["preempted"] = c.preempted;
  d["actors_created"] = c.actors_created;
  d["actors_restarted"] = c.actors_restarted;
  d["actors_died"] = c.actors_died;
  return d;
}

py::list events_list(accel_runtime_t rt, uint64_t after, uint32_t max) {
  std::vector<accel_runtime_event_t> out(std::max<uint32_t>(max, 1),
                                         sized<accel_runtime_event_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT));
  uint32_t count = 0;
  check(accel_runtime_get_events(rt, after, max, out.data(), &count, nullptr));
  py::list list;
  for (uint32_t i = 0; i < count; ++i) {
    const accel_runtime_event_t& e = out[i];
    py::dict d;
    d["sequence"] = e.sequence;
    d["time_ns"] = e.time_ns;
    d["kind"] = accel::info::RuntimeEventKindName(e.kind);
    d["status"] = std::string(accel_status_name(static_cast<accel_status_t>(e.status)));
    d["id"] = e.id;
    d["device"] = e.device == UINT32_MAX ? py::object(py::none()) : py::object(py::int_(e.device));
    d["device_count"] = e.device_count;
    d["name"] = std::string(e.name);
    list.append(std::move(d));
  }
  return list;
}

accel_placement_strategy_t strategy_from(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  if (name == "PACK") return ACCEL_PLACEMENT_STRATEGY_PACK;
  if (name == "SPREAD") return ACCEL_PLACEMENT_STRATEGY_SPREAD;
  if (name == "STRICT_PACK") return ACCEL_PLACEMENT_STRATEGY_STRICT_PACK;
  if (name == "STRICT_SPREAD") return ACCEL_PLACEMENT_STRATEGY_STRICT_SPREAD;
  raise(ACCEL_ERROR_INVALID_ARGUMENT, "strategy '" + name + "' is not one of PACK, SPREAD, STRICT_PACK, STRICT_SPREAD");
}

accel_topology_level_t level_from(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::replace(name.begin(), name.end(), '-', '_');
  static const std::pair<const char*, accel_topology_level_t> kLevels[] = {
      {"clique", ACCEL_TOPOLOGY_LEVEL_CLIQUE}, {"pcie_root", ACCEL_TOPOLOGY_LEVEL_PCIE_ROOT},
      {"numa", ACCEL_TOPOLOGY_LEVEL_NUMA},     {"node", ACCEL_TOPOLOGY_LEVEL_NODE},
      {"rack", ACCEL_TOPOLOGY_LEVEL_RACK},     {"block", ACCEL_TOPOLOGY_LEVEL_BLOCK}};
  for (const auto& [n, level] : kLevels)
    if (name == n) return level;
  raise(ACCEL_ERROR_INVALID_ARGUMENT, "level '" + name + "' is not one of clique, pcie_root, numa, node, rack, block");
}

GroupPtr create_group(const RuntimePtr& rt, const py::list& bundles, const std::string& strategy,
                      const std::string& level, bool required, std::optional<std::string> name, const QueuePtr& queue,
                      bool wait) {
  std::vector<std::string> selectors;
  selectors.reserve(bundles.size());
  std::vector<accel_resource_request_t> requests;
  size_t index = 0;
  for (py::handle item : bundles) {
    const std::string field = "bundles[" + std::to_string(index++) + "]";
    if (!py::isinstance<py::dict>(item)) raise(ACCEL_ERROR_INVALID_ARGUMENT, field + " is not a dict");
    auto r = sized<accel_resource_request_t>(ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST);
    r.device_count = 1;
    r.share = 1.0;
    std::string selector;
    for (auto [key_obj, value] : item.cast<py::dict>()) {
      const auto key = key_obj.cast<std::string>();
      if (key == "devices") {
        r.device_count = value.cast<uint32_t>();
      } else if (key == "share") {
        r.share = value.cast<double>();
      } else if (key == "memory") {
        r.memory = value.cast<uint64_t>();
      } else if (key == "selector") {
        selector = value.is_none() ? "" : value.cast<std::string>();
      } else {
        raise(ACCEL_ERROR_INVALID_ARGUMENT,
              field + ": unknown key '" + key + "' (devices, share, memory and selector are known)");
      }
    }
    check_selector(selector, field + ".selector");
    selectors.push_back(selector);
    requests.push_back(r);
  }
  for (size_t i = 0; i < requests.size(); ++i)
    requests[i].selector = selectors[i].empty() ? nullptr : selectors[i].c_str();

  auto group = std::make_shared<GroupCore>();
  group->rt = rt;
  group->name = name.value_or("");
  group->bundle_count = static_cast<uint32_t>(requests.size());
  auto desc = sized<accel_placement_group_desc_t>(ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC);
  desc.name = name ? group->name.c_str() : nullptr;
  desc.bundles = requests.data();
  desc.bundle_count = group->bundle_count;
  desc.strategy = strategy_from(strategy);
  desc.level = level_from(level);
  desc.required = required ? 1 : 0;
  desc.queue = queue ? queue->live() : nullptr;
  desc.flags = wait ? ACCEL_PLACEMENT_GROUP_WAIT : 0;
  accel_runtime_t handle = rt->live();
  CallWithoutGil([&] { return accel_placement_group_create(handle, &desc, &group->handle); });
  if (!name) group->name = "placement group";
  return group;
}

const char* actor_state_name(accel_actor_state_t state) {
  switch (state) {
    case ACCEL_ACTOR_STATE_PENDING: return "PENDING";
    case ACCEL_ACTOR_STATE_ALIVE: return "ALIVE";
    case ACCEL_ACTOR_STATE_RESTARTING: return "RESTARTING";
    case ACCEL_ACTOR_STATE_DEAD: return "DEAD";
    default: return "UNKNOWN";
  }
}

// ---- objects (the object store, include/accel/object_store.h) ---------------

// One object reference (accel.ObjectRef): an accel_object_t holding one
// reference, and the layout the bytes had when put (for the views). The GIL
// guards `handle`.
struct ObjectCore {
  std::shared_ptr<RuntimeCore> rt;
  accel_object_t handle = nullptr;
  uint64_t size = 0;
  std::string name;
  const DType* dtype = nullptr;  // of the data put; uint8 when unknown
  std::vector<int64_t> shape;

  ~ObjectCore() { release(); }
  void release() {
    if (handle == nullptr) return;
    accel_object_t h = handle;
    handle = nullptr;
    NoGil nogil;
    accel_object_release(h);
  }
  accel_object_t live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "the accel.ObjectRef was released");
    return handle;
  }
};
using ObjectPtr = std::shared_ptr<ObjectCore>;

// One host view (accel.ObjectView): read-only bytes of a host replica, pinned until released.
struct HostViewCore {
  accel_object_view_t handle = nullptr;
  const void* data = nullptr;
  uint64_t size = 0;
  const DType* dtype = nullptr;
  std::vector<int64_t> shape;
  std::shared_ptr<RuntimeCore> rt;  // the store outlives the view while it is pinned
  uint32_t exports = 0;             // live buffer-protocol and DLPack exports: release waits for none

  ~HostViewCore() { release(); }
  void release() {
    if (handle == nullptr) return;
    accel_object_view_t h = handle;
    handle = nullptr;
    data = nullptr;
    NoGil nogil;
    accel_object_view_release(h);
  }
  const void* live() const {
    if (handle == nullptr) raise(ACCEL_ERROR_FAILED_PRECONDITION, "the accel.ObjectView was released");
    if (closing) raise(ACCEL_ERROR_FAILED_PRECONDITION, "the accel.ObjectView's runtime is closing");
    return data;
  }
  bool closing = false;  // its runtime's close is destroying the store (under the GIL)
};
using HostViewPtr = std::shared_ptr<HostViewCore>;

void RuntimeCore::close(bool force) {
  if (handle == nullptr) return;
  // A snapshot under the GIL: close_now lets the GIL go, and another thread may then get a view (appending to
  // host_views) or read one.
  std::vector<std::shared_ptr<HostViewCore>> views;
  size_t exported = 0;
  for (const auto& weak : host_views) {
    if (auto v = weak.lock(); v && v->handle != nullptr) {
      exported += v->exports > 0 ? 1 : 0;
      views.push_back(std::move(v));
    }
  }
  size_t replicas_exported = 0;
  for (const auto& weak : replica_buffers) {
    if (auto b = weak.lock(); b && (b->exports > 0 || b->interface_taken)) ++replicas_exported;
  }
  if ((exported > 0 || replicas_exported > 0) && !force) {
    // Their bytes are the store's, which goes with the runtime: a numpy array over them would read freed memory.
    std::string what;
    if (exported > 0) what = std::to_string(exported) + " object view(s)";
    if (replicas_exported > 0) {
      what += (what.empty() ? "" : " and ") + std::to_string(replicas_exported) + " device replica array(s)";
    }
    raise(ACCEL_ERROR_FAILED_PRECONDITION,
          "accel.Runtime.close: " + what +
              " are still used by numpy arrays, memoryviews or DLPack capsules, which read the object store's "
              "memory: drop those (or copy what you keep) before closing the runtime");
  }
  for (const auto& v : views) v->closing = true;  // no read or new export while the store goes
  try {
    close_now();
  } catch (...) {  // still open (closed from one of its own tasks, say): its views read on
    for (const auto& v : views) v->closing = false;
    throw;
  }
  host_views.clear();
  replica_buffers.clear();
  for (const auto& v : views) v->release();  // later reads raise "the accel.ObjectView was released"
}

// Adds `item` to a runtime's list of what reads its store (host views, device replicas' buffers), dropping the dead
// ones at each power of two, so that the list stays as long as what lives.
template <typename T>
void Track(std::vector<std::weak_ptr<T>>* list, const std::shared_ptr<T>& item) {
  if (list->size() >= 64 && (list->size() & (list->size() - 1)) == 0) {
    std::erase_if(*list, [](const std::weak_ptr<T>& w) { return w.expired(); });
  }
  list->push_back(item);
}

// Releases an accel_object_view_t when the last Python array over it goes.
struct ViewKeeper {
  accel_object_view_t handle = nullptr;
  ~ViewKeeper() {
    if (handle != nullptr) accel_object_view_release(handle);
  }
};

ObjectPtr put_object(const RuntimePtr& rt, const py::object& data, std::optional<std::string> name) {
  auto object = std::make_shared<ObjectCore>();
  object->rt = rt;
  object->name = name.value_or("");
  auto desc = sized<accel_object_put_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC);
  desc.name = name ? object->name.c_str() : nullptr;
  py::buffer_info info;
  if (py::isinstance<Array>(data)) {
    const Array& a = data.cast<const Array&>();
    if (!a.c_contiguous() || !a.buffer)
      raise(ACCEL_ERROR_INVALID_ARGUMENT, "accel.put: the array is not C-contiguous (or is empty)");
    a.buffer->wait_pending();
    desc.buffer = a.buffer->handle;
    desc.buffer_offset = a.offset;
    desc.size = static_cast<uint64_t>(a.size()) * a.dtype->itemsize;
    object->dtype = a.dtype;
    object->shape = a.shape;
  } else if (PyObject_CheckBuffer(data.ptr()) != 0) {
    info = py::buffer(data).request();
    const py::ssize_t itemsize = info.itemsize;
    py::ssize_t expected = itemsize;
    for (py::ssize_t i = info.ndim - 1; i >= 0; --i) {
      if (info.strides[static_cast<size_t>(i)] != expected)
        raise(ACCEL_ERROR_INVALID_ARGUMENT,
              "accel.put: the buffer is not C-contiguous (numpy.ascontiguousarray first)");
      expected *= info.shape[static_cast<size_t>(i)];
    }
    desc.data = info.ptr;
    desc.size = static_cast<uint64_t>(info.size * itemsize);
    object->dtype = dtype_from_format(info.format);
    for (auto d : info.shape) object->shape.push_back(d);
  } else {
    throw py::type_error(
        "accel.put: expected bytes, a buffer-protocol object (numpy array, memoryview) or an "
        "accel.Array, got " +
        py::repr(data.get_type()).cast<std::string>());
  }
  if (object->dtype == nullptr || object->dtype->itemsize == 0) {
    object->dtype = &dtype_from(py::str("uint8"));
    object->shape = {static_cast<int64_t>(desc.size)};
  }
  object->size = desc.size;
  accel_runtime_t handle = rt->live();
  CallWithoutGil([&] { return accel_object_put(handle, &desc, &object->handle); });
  return object;
}

// ObjectRef.share(): the token another process imports it by (docs/objectstore.md, "Across processes").
std::string share_object(const ObjectCore& o) {
  auto token = sized<accel_object_token_t>(ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN);
  accel_object_t handle = o.live();
  CallWithoutGil([&] { return accel_object_share(handle, &token); });
  return token.text;
}

// Runtime.import_object(token): the object another process shared, mapped read-only here without a copy (its
// bytes come as uint8: the layout of the data put stays with the exporter).
ObjectPtr import_object(const RuntimePtr& rt, const std::string& token) {
  auto object = std::make_shared<ObjectCore>();
  object->rt = rt;
  accel_runtime_t handle = rt->live();
  CallWithoutGil([&] { return accel_object_import(handle, token.c_str(), &object->handle); });
  auto info = sized<accel_object_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_INFO);
  check(accel_object_get_info(object->handle, &info));
  object->size = info.size;
  object->dtype = &dtype_from(py::str("uint8"));
  object->shape = {static_cast<int64_t>(info.size)};
  return object;
}

// Runtime.put_file: one ObjectRef per part (docs/objectstore.md, "Streaming a file").
py::list put_file(const RuntimePtr& rt, const std::string& path, std::optional<std::vector<int32_t>> devices,
                  uint64_t offset, uint64_t size, uint64_t chunk_size, py::object progress,
                  std::optional<std::string> name) {
  auto desc = sized<accel_object_file_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC);
  desc.path = path.c_str();
  desc.offset = offset;
  desc.size = size;
  desc.chunk_size = chunk_size;
  desc.name = name ? name->c_str() : nullptr;
  if (devices) {
    if (devices->empty()) raise(ACCEL_ERROR_INVALID_ARGUMENT, "Runtime.put_file: 'devices' is empty");
    desc.locations = devices->data();
    desc.location_count = static_cast<uint32_t>(devices->size());
  }
  struct Progress {
    py::object callable;
    py::object error;  // the first exception the callable raised: raised after the call
  } state{std::move(progress), py::none()};
  if (!state.callable.is_none()) {
    desc.progress = [](void* user, uint64_t done, uint64_t total) {
      auto* p = static_cast<Progress*>(user);
      py::gil_scoped_acquire gil;
      if (!p->error.is_none()) return;
      try {
        p->callable(done, total);
      } catch (py::error_already_set& e) {
        p->error = e.value();
      }
    };
    desc.user_data = &state;
  }
  std::vector<accel_object_t> handles(devices ? devices->size() : 1, nullptr);
  accel_runtime_t handle = rt->live();
  CallWithoutGil([&] { return accel_object_put_file(handle, &desc, handles.data()); });
  py::list out;
  for (size_t i = 0; i < handles.size(); ++i) {
    auto object = std::make_shared<ObjectCore>();
    object->rt = rt;
    object->handle = handles[i];
    object->name = name.value_or(path);
    auto info = sized<accel_object_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_INFO);
    check(accel_object_get_info(handles[i], &info));
    object->size = info.size;
    object->dtype = &dtype_from(py::str("uint8"));
    object->shape = {static_cast<int64_t>(info.size)};
    out.append(object);
  }
  if (!state.error.is_none()) {
    // The progress callable raised: the objects are made (and released with `out`); its exception surfaces here.
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(state.error.ptr())), state.error.ptr());
    throw py::error_already_set();
  }
  return out;
}

accel_object_t object_handle(py::handle object) {
  if (!py::isinstance<ObjectCore>(object)) {
    throw py::type_error("near: expected accel.ObjectRef objects, got " +
                         py::repr(object.get_type()).cast<std::string>());
  }
  return object.cast<const ObjectCore&>().live();
}

std::shared_ptr<ObjectMeta> set_result_object(accel_task_context_t context, const py::object& value) {
  if (!value || !py::isinstance<ObjectCore>(value)) return nullptr;
  const auto& object = value.cast<const ObjectCore&>();
  accel_status_t status;
  {
    NoGil nogil;
    status = accel_task_context_set_result(context, object.live());
  }
  if (status == ACCEL_ERROR_FAILED_PRECONDITION) return nullptr;  // an actor's call: no result objects there
  check(status);
  auto meta = std::make_shared<ObjectMeta>();
  meta->size = object.size;
  meta->name = object.name;
  meta->dtype = object.dtype;
  meta->shape = object.shape;
  return meta;
}

py::object get_result_object(const RuntimePtr& rt, accel_future_t future, const ObjectMeta& meta) {
  auto object = std::make_shared<ObjectCore>();
  object->rt = rt;
  object->size = meta.size;
  object->name = meta.name;
  object->dtype = meta.dtype;
  object->shape = meta.shape;
  check(accel_future_get_object(future, &object->handle));
  return py::cast(object);
}

py::object get_object(const ObjectPtr& object, py::object device, std::optional<double> timeout) {
  accel_object_t h = object->live();
  int32_t location = ACCEL_OBJECT_LOCATION_HOST;
  if (!device.is_none()) location = device.cast<int32_t>();
  const uint64_t ns = timeout_ns(timeout, "get");
  accel_object_view_t view = nullptr;
  CallWithoutGil([&] { return accel_object_get(h, location, ns, &view); });
  auto info = sized<accel_object_view_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO);
  const accel_status_t status = accel_object_view_get_info(view, &info);
  if (status != ACCEL_SUCCESS) {
    const std::string why = accel_last_error();
    accel_object_view_release(view);
    raise(status, why);
  }
  if (location == ACCEL_OBJECT_LOCATION_HOST) {
    auto v = std::make_shared<HostViewCore>();
    v->handle = view;
    v->data = info.host_address;
    v->size = info.size;
    v->dtype = object->dtype;
    v->shape = object->shape;
    v->rt = object->rt;
    Track(&object->rt->host_views, v);
    return py::cast(v);
  }
  // A device replica: a read-only accel.Array over the store's buffer, the view released with the array.
  auto keeper = std::make_shared<ViewKeeper>();
  keeper->handle = view;
  auto props = sized<accel_buffer_properties_t>(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES);
  check(accel_buffer_get_properties(info.buffer, &props));
  auto inst = object->rt->inst;
  auto buffer = std::make_shared<Buffer>(inst, info.buffer, info.size);
  buffer->keep = keeper;
  Track(&object->rt->replica_buffers, buffer);
  auto array = std::make_shared<Array>();
  array->buffer = buffer;
  array->device = resolve_device(device_object(inst, props.device));
  array->offset = info.offset;
  array->shape = object->shape;
  array->dtype = object->dtype;
  array->strides = c_strides(array->shape, array->dtype->itemsize);
  array->readonly = true;
  return py::cast(array);
}

py::dict usage_dict(const accel_object_store_usage_t& u) {
  py::dict d;
  d["capacity"] = u.capacity;
  d["used"] = u.used;
  d["replicas"] = u.replicas;
  d["transfers_in"] = u.transfers_in;
  d["evicted"] = u.evicted;
  d["moved_out"] = u.moved_out;
  d["restored"] = u.restored;
  return d;
}

// The buffer protocol of accel.ObjectView: read-only, C-contiguous, the put's format and shape.
struct HostViewExport {
  std::vector<Py_ssize_t> shape, strides;
};

int host_view_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    auto& v = py::handle(obj).cast<HostViewCore&>();
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE) {
      PyErr_SetString(PyExc_BufferError, "accel.ObjectView: an object's bytes are read-only");
      return -1;
    }
    const void* data = v.live();
    auto* exported = new HostViewExport{{v.shape.begin(), v.shape.end()}, {}};
    exported->strides.resize(v.shape.size());
    Py_ssize_t stride = v.dtype->itemsize;
    for (size_t i = v.shape.size(); i-- > 0;) {
      exported->strides[i] = stride;
      stride *= exported->shape[i];
    }
    view->buf = const_cast<void*>(data);
    view->len = static_cast<Py_ssize_t>(v.size);
    view->readonly = 1;
    view->itemsize = v.dtype->itemsize;
    view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? const_cast<char*>(v.dtype->format) : nullptr;
    view->ndim = static_cast<int>(v.shape.size());
    view->shape = (flags & PyBUF_ND) == PyBUF_ND ? exported->shape.data() : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? exported->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = exported;
    view->obj = obj;
    Py_INCREF(obj);
    ++v.exports;
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const AccelException& e) {
    PyErr_SetString(PyExc_BufferError, ("accel.ObjectView: " + e.message).c_str());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  return -1;
}

void host_view_releasebuffer(PyObject* obj, Py_buffer* view) {
  delete static_cast<HostViewExport*>(view->internal);
  try {
    auto& v = py::handle(obj).cast<HostViewCore&>();
    if (v.exports > 0) --v.exports;
  } catch (...) {
  }
}
}  // namespace

void init_runtime(py::module_& m) {
  g_accel_error_type = m.attr("AccelError").ptr();
  py::tuple task_bases = py::make_tuple(py::handle(g_accel_error_type));
  g_task_error = PyErr_NewExceptionWithDoc(
      "accel.TaskError",
      "A task or actor call raised a Python exception: str(e) is the task's message (the exception and where it "
      "was raised); __cause__ is the exception itself.",
      task_bases.ptr(), nullptr);
  if (g_task_error == nullptr) throw py::error_already_set();
  m.add_object("TaskError", py::handle(g_task_error));
  py::tuple selector_bases = py::make_tuple(py::handle(g_accel_error_type), py::handle(PyExc_ValueError));
  py::dict selector_dict;
  selector_dict["column"] = 0;
  g_selector_error = PyErr_NewExceptionWithDoc(
      "accel.SelectorError",
      "A capability selector does not parse (docs/selectors.md): .column is the 1-based column of the error.",
      selector_bases.ptr(), selector_dict.ptr());
  if (g_selector_error == nullptr) throw py::error_already_set();
  m.add_object("SelectorError", py::handle(g_selector_error));

  m.def(
      "check_selector", [](const std::string& selector) { check_selector(selector, "selector"); }, py::arg("selector"),
      "Raises SelectorError (with .column) when `selector` does not parse.");
  m.def("_close_runtimes", &close_all_runtimes);
  py::module_::import("atexit").attr("register")(m.attr("_close_runtimes"));

  py::class_<TaskContext, ContextPtr>(m, "TaskContext",
                                      "What a running task knows of itself; valid only during its function's call.")
      .def_property_readonly("devices",
                             [](const TaskContext& c) {
                               py::list out;
                               for (uint32_t i = 0, n = c.device_count(); i < n; ++i) {
                                 accel_device_t d = nullptr;
                                 check(accel_task_context_get_device(c.live(), i, &d));
                                 out.append(device_object(c.inst, d));
                               }
                               return out;
                             })
      .def(
          "memory_limit",
          [](const TaskContext& c, uint32_t index) {
            uint64_t bytes = 0;
            check(accel_task_context_get_memory_limit(c.live(), index, &bytes));
            return bytes;
          },
          py::arg("index") = 0)
      .def_property_readonly("attempt",
                             [](const TaskContext& c) {
                               uint32_t attempt = 0;
                               check(accel_task_context_get_attempt(c.live(), &attempt));
                               return attempt;
                             })
      .def_property_readonly("cancelled",
                             [](const TaskContext& c) {
                               uint32_t cancelled = 0;
                               check(accel_task_context_is_cancelled(c.live(), &cancelled));
                               return cancelled != 0;
                             })
      .def_property_readonly("preempted",
                             [](const TaskContext& c) {
                               uint32_t preempted = 0;
                               check(accel_task_context_is_preempted(c.live(), &preempted));
                               return preempted != 0;
                             })
      .def_property_readonly("runtime",
                             [](const TaskContext& c) -> py::object {
                               c.live();
                               auto rt = c.rt.lock();
                               return rt ? py::cast(rt) : py::none();
                             })
      .def_property_readonly("_actor",
                             [](const TaskContext& c) -> py::object {
                               void* data = nullptr;
                               check(accel_task_context_get_actor_data(c.live(), &data));
                               if (data == nullptr) return py::none();
                               auto& state = static_cast<ActorPayload*>(data)->state;
                               return state.instance ? state.instance : py::none();
                             })
      .def("__repr__",
           [](const TaskContext& c) { return std::string("<accel.TaskContext") + (c.valid ? "" : " (ended)") + ">"; });

  py::class_<Future, FuturePtr>(m, "Future", "The result of a task or actor call (accel.task, Runtime.submit).")
      .def("result", &Future::get, py::arg("timeout") = py::none())
      .def("done",
           [](const Future& f) {
             accel_status_t status;
             {
               NoGil nogil;
               status = accel_future_query(f.handle);
             }
             return status != ACCEL_NOT_READY;
           })
      .def("cancel", [](const Future& f) { CallWithoutGil([&] { return accel_future_cancel(f.handle); }); })
      .def_property_readonly("message", &Future::message)
      .def_property_readonly("name", [](const Future& f) { return f.name; })
      .def("__repr__", [](const Future& f) {
        const accel_status_t status = accel_future_query(f.handle);
        std::string state = status == ACCEL_NOT_READY ? "pending"
                            : status == ACCEL_SUCCESS ? "finished"
                                                      : std::string("failed: ") + accel_status_name(status);
        return "<accel.Future '" + f.name + "' " + state + ">";
      });

  py::class_<GroupCore, GroupPtr>(m, "PlacementGroup",
                                  "Devices reserved all at once, bundle by bundle (Runtime.placement_group).")
      .def("devices",
           [](const GroupCore& g) {
             py::list out;
             for (const auto& d : g.devices()) {
               py::dict item;
               item["bundle"] = d.bundle;
               item["rank"] = d.rank;
               item["share"] = d.share;
               item["memory"] = d.memory;
               item["device"] = first_access_path(g.rt->inst, d.physical_device);
               out.append(item);
             }
             return out;
           })
      .def(
          "wait",
          [](const GroupCore& g, std::optional<double> timeout) {
            const uint64_t ns = timeout_ns(timeout, "PlacementGroup.wait");
            accel_placement_group_t h = g.live();
            accel_status_t status;
            std::string error;
            {
              NoGil nogil;
              status = accel_placement_group_wait(h, ns);
              if (status < 0) error = accel_last_error();
            }
            if (status == ACCEL_ERROR_TIMEOUT) return false;
            if (status != ACCEL_SUCCESS) raise(status, error);
            return true;
          },
          py::arg("timeout") = py::none(),
          "Waits until the group is placed (placement_group(..., wait=True)); False when `timeout` seconds passed "
          "first.")
      .def_property_readonly("message",
                             [](const GroupCore& g) {
                               accel_placement_group_t h = g.live();
                               return read_text([&](size_t size, char* text, size_t* out) {
                                 return accel_placement_group_get_message(h, size, text, out);
                               });
                             })
      .def("destroy", &GroupCore::destroy)
      .def_property_readonly("name", [](const GroupCore& g) { return g.name; })
      .def_property_readonly("bundle_count", [](const GroupCore& g) { return g.bundle_count; })
      .def_property_readonly("destroyed", [](const GroupCore& g) { return g.handle == nullptr; })
      .def("__enter__", [](GroupPtr g) { return g; })
      .def("__exit__",
           [](GroupCore& g, py::args) {
             g.destroy();
             return false;
           })
      .def("__repr__", [](const GroupCore& g) {
        return "<accel.PlacementGroup '" + g.name + "' " + std::to_string(g.bundle_count) + " bundle(s)" +
               (g.handle == nullptr ? " destroyed" : "") + ">";
      });

  py::class_<TaskGroupCore, TaskGroupPtr>(m, "TaskGroup",
                                          "Tasks without a Future each, waited for together (Runtime.task_group).")
      .def("_submit", &TaskGroupCore::submit, py::arg("runner"), py::arg("name"), py::arg("devices"), py::arg("share"),
           py::arg("memory"), py::arg("selector"), py::arg("placement_group"), py::arg("bundle"), py::arg("after"),
           py::arg("max_retries"), py::arg("queue"), py::arg("priority"), py::arg("preemptible"),
           py::arg("near") = py::list())
      .def("wait", &TaskGroupCore::wait, py::arg("timeout") = py::none())
      .def("done",
           [](const TaskGroupCore& g) {
             accel_task_group_t h = g.live();
             accel_status_t status;
             {
               NoGil nogil;
               status = accel_task_group_query(h);
             }
             return check(status) != ACCEL_NOT_READY;
           })
      .def("cancel",
           [](const TaskGroupCore& g) {
             accel_task_group_t h = g.live();
             CallWithoutGil([&] { return accel_task_group_cancel(h); });
           })
      .def("destroy", &TaskGroupCore::destroy)
      .def_property_readonly("name", [](const TaskGroupCore& g) { return g.name; })
      .def("__enter__", [](TaskGroupPtr g) { return g; })
      .def("__exit__",
           [](TaskGroupCore& g, const py::object& type, const py::object&, const py::object&) {
             // Leaving the block waits for the tasks (raising the first failure), unless an exception leaves it:
             // then the tasks are cancelled, waited for quietly, and that exception goes on.
             if (g.handle == nullptr) return false;
             if (type.is_none()) {
               g.wait(std::nullopt);
             } else {
               accel_task_group_t h = g.handle;
               NoGil nogil;
               accel_task_group_cancel(h);
               accel_task_group_wait(h, ACCEL_TIMEOUT_INFINITE);
             }
             g.placement_groups.clear();
             g.destroy();
             return false;
           })
      .def("__repr__", [](const TaskGroupCore& g) { return "<accel.TaskGroup " + g.name + ">"; });

  py::class_<QueueCore, QueuePtr>(m, "Queue", "A scheduling queue with a quota, a limit and a weight (Runtime.queue).")
      .def("usage",
           [](const QueueCore& q) {
             auto u = sized<accel_queue_usage_t>(ACCEL_STRUCTURE_TYPE_QUEUE_USAGE);
             check(accel_queue_get_usage(q.live(), &u));
             py::dict d;
             d["devices"] = u.devices;
             d["memory"] = u.memory;
             d["pending"] = u.pending;
             d["running"] = u.running;
             d["finished"] = u.finished;
             d["preempted"] = u.preempted;
             d["dominant_share"] = u.dominant_share;
             d["over_quota"] = u.over_quota != 0;
             return d;
           })
      .def("destroy",
           [](QueueCore& q) {
             accel_queue_t h = q.live();
             CallWithoutGil([&] { return accel_queue_destroy(h); });
             q.handle = nullptr;
           })
      .def_property_readonly("name", [](const QueueCore& q) { return q.name; })
      .def("__repr__", [](const QueueCore& q) { return "<accel.Queue '" + q.name + "'>"; });

  py::class_<ActorCore, ActorPtr>(m, "_Actor", "An accel_actor_t (accel.ActorHandle wraps it).")
      .def(
          "call",
          [](const ActorPtr& actor, py::object runner, const std::string& name, const std::vector<FuturePtr>& after,
             uint32_t max_retries) {
            auto deps = dependency_handles(after);
            auto result = std::make_shared<TaskResult>();
            auto payload = std::make_unique<TaskPayload>(
                TaskPayload{TaskCall{name, std::move(runner), result}, Origin{actor->rt, actor->rt->inst}});
            auto desc = sized<accel_task_desc_t>(ACCEL_STRUCTURE_TYPE_TASK_DESC);
            desc.name = payload->call.name.c_str();
            desc.function = run_task;
            desc.user_data = payload.get();
            desc.release_user_data = release_task;
            desc.dependencies = deps.empty() ? nullptr : deps.data();
            desc.dependency_count = static_cast<uint32_t>(deps.size());
            desc.max_retries = max_retries;
            auto future = std::make_shared<Future>();
            future->rt = actor->rt;
            future->actor = actor;
            future->name = name;
            future->result = result;
            accel_actor_t handle = actor->live();
            CallWithoutGil([&] { return accel_actor_call(handle, &desc, &future->handle); });
            payload.release();
            return future;
          },
          py::arg("runner"), py::arg("name"), py::arg("after"), py::arg("max_retries"))
      .def("info",
           [](const ActorCore& a) {
             auto info = sized<accel_actor_info_t>(ACCEL_STRUCTURE_TYPE_ACTOR_INFO);
             check(accel_actor_get_info(a.live(), &info));
             py::dict d;
             d["state"] = actor_state_name(info.state);
             d["restarts"] = info.restarts;
             d["calls_pending"] = info.calls_pending;
             d["calls_done"] = info.calls_done;
             return d;
           })
      .def_property_readonly("message",
                             [](const ActorCore& a) {
                               accel_actor_t h = a.live();
                               return read_text([&](size_t size, char* text, size_t* out) {
                                 return accel_actor_get_message(h, size, text, out);
                               });
                             })
      .def("destroy", [](ActorCore& a) { a.destroy(true); })
      .def_property_readonly("destroyed", [](const ActorCore& a) { return a.handle == nullptr; })
      .def_property_readonly("name", [](const ActorCore& a) { return a.name; });

  py::class_<ObjectCore, ObjectPtr>(m, "ObjectRef",
                                    "A reference to an immutable object in a runtime's object store (Runtime.put, "
                                    "accel.put); released when the last Python reference goes, or by release().")
      .def("get", &get_object, py::arg("device") = py::none(), py::kw_only(), py::arg("timeout") = py::none(),
           "A read-only view: on the host (device None) an accel.ObjectView; on a runtime device index a read-only "
           "accel.Array over the replica there (made when missing).")
      .def_property_readonly("size", [](const ObjectCore& o) { return o.size; })
      .def_property_readonly("name", [](const ObjectCore& o) { return o.name; })
      .def("info",
           [](const ObjectCore& o) {
             auto info = sized<accel_object_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_INFO);
             check(accel_object_get_info(o.live(), &info));
             py::dict d;
             d["size"] = info.size;
             d["references"] = info.references;
             d["views"] = info.views;
             d["on_host"] = info.on_host != 0;
             d["on_disk"] = info.on_disk != 0;
             d["device_replicas"] = info.device_replicas;
             return d;
           })
      .def("on_device",
           [](const ObjectCore& o, uint32_t device) {
             uint32_t present = 0;
             check(accel_object_is_on_device(o.live(), device, &present));
             return present != 0;
           })
      .def("share", &share_object,
           "Makes the object readable by other processes of this user on this node: a token (str) for "
           "Runtime.import_object there. The same token each time.")
      .def("release", &ObjectCore::release)
      .def_property_readonly("released", [](const ObjectCore& o) { return o.handle == nullptr; })
      .def("__enter__", [](ObjectPtr o) { return o; })
      .def("__exit__",
           [](ObjectCore& o, const py::args&) {
             o.release();
             return false;
           })
      .def("__repr__", [](const ObjectCore& o) {
        return "<accel.ObjectRef" + (o.name.empty() ? std::string() : " '" + o.name + "'") + " " +
               std::to_string(o.size) + " bytes" + (o.handle == nullptr ? " released" : "") + ">";
      });

  auto view_class = py::class_<HostViewCore, HostViewPtr>(
      m, "ObjectView",
      "Read-only bytes of an object's host replica (ObjectRef.get()): the buffer protocol and DLPack, zero-copy; "
      "the replica stays in place until release() or the last reference goes.");
  view_class.def_property_readonly("nbytes", [](const HostViewCore& v) { return v.size; })
      .def_property_readonly("shape", [](const HostViewCore& v) { return py::tuple(py::cast(v.shape)); })
      .def_property_readonly("dtype", [](const HostViewCore& v) { return std::string(v.dtype->name); })
      .def("tobytes",
           [](const HostViewCore& v) {
             return py::bytes(static_cast<const char*>(v.live()), static_cast<py::ssize_t>(v.size));
           })
      .def(
          "__dlpack__",
          [](const HostViewPtr& v, py::object stream, py::object max_version, py::object dl_device, py::object copy) {
            const void* data = v->live();
            // Counted as an export until the consumer's deleter runs: release() must not drop the replica under it.
            ++v->exports;
            try {
              return export_host_memory(const_cast<void*>(data), v->shape, *v->dtype, true, py::cast(v),
                                        std::move(stream), std::move(max_version), std::move(dl_device),
                                        std::move(copy), [v] {
                                          if (v->exports > 0) --v->exports;
                                        });
            } catch (...) {
              --v->exports;
              throw;
            }
          },
          py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const HostViewCore&) { return py::make_tuple(1, 0); })
      .def("release",
           [](HostViewCore& v) {
             if (v.exports > 0)
               raise(ACCEL_ERROR_FAILED_PRECONDITION,
                     "accel.ObjectView.release: " + std::to_string(v.exports) +
                         " export(s) (memoryview, numpy array, DLPack tensor) still use the bytes");
             v.release();
           })
      .def_property_readonly("released", [](const HostViewCore& v) { return v.handle == nullptr; })
      .def("__enter__", [](HostViewPtr v) { return v; })
      .def("__exit__",
           [](HostViewCore& v, const py::args&) {
             if (v.exports == 0) v.release();
             return false;
           })
      .def("__repr__", [](const HostViewCore& v) {
        return "<accel.ObjectView " + std::to_string(v.size) + " bytes" + (v.handle == nullptr ? " released" : "") +
               ">";
      });
  {
    auto* heap = reinterpret_cast<PyHeapTypeObject*>(view_class.ptr());
    heap->as_buffer.bf_getbuffer = host_view_getbuffer;
    heap->as_buffer.bf_releasebuffer = host_view_releasebuffer;
    heap->ht_type.tp_as_buffer = &heap->as_buffer;
  }

  py::class_<RuntimeCore, RuntimePtr>(
      m, "Runtime",
      "The scheduler (libaccel-runtime) over this process's devices; `with accel.Runtime() as rt:` closes it.")
      .def(py::init([](uint32_t workers, uint64_t store_host_capacity, uint64_t store_device_capacity,
                       std::optional<std::string> spill_directory) {
             auto inst = instance();
             auto rt = std::make_shared<RuntimeCore>();
             rt->inst = inst;
             rt->workers = workers;
             auto store = sized<accel_object_store_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC);
             store.host_capacity = store_host_capacity;
             store.device_capacity = store_device_capacity;
             store.spill_directory = spill_directory ? spill_directory->c_str() : nullptr;
             auto desc = sized<accel_runtime_desc_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DESC);
             desc.worker_threads = workers;
             desc.next = &store;
             CallWithoutGil([&] { return accel_runtime_create(inst->handle, &desc, &rt->handle); });
             std::lock_guard lock(g_runtimes_mutex);
             std::erase_if(*g_runtimes, [](const auto& w) { return w.expired(); });
             g_runtimes->push_back(rt);
             return rt;
           }),
           py::arg("workers") = 0, py::kw_only(), py::arg("store_host_capacity") = 0,
           py::arg("store_device_capacity") = 0, py::arg("spill_directory") = py::none())
      .def("close", [](RuntimeCore& rt) { rt.close(); })
      .def("put", &put_object, py::arg("data"), py::kw_only(), py::arg("name") = py::none(),
           "Puts a copy of `data` (bytes, a C-contiguous buffer-protocol object, or an accel.Array) into the object "
           "store: an accel.ObjectRef (docs/objectstore.md).")
      .def("import_object", &import_object, py::arg("token"),
           "The object another process shared (ObjectRef.share() there) as an accel.ObjectRef of this runtime: its "
           "host view is a read-only mapping of the shared bytes, no copy (docs/objectstore.md, \"Across "
           "processes\").")
      .def("put_file", &put_file, py::arg("path"), py::kw_only(), py::arg("devices") = py::none(),
           py::arg("offset") = 0, py::arg("size") = 0, py::arg("chunk_size") = 0, py::arg("progress") = py::none(),
           py::arg("name") = py::none(),
           "Streams a file's bytes (from `offset`, `size` of them; 0: to the end) into the object store: one "
           "ObjectRef per entry of `devices` (runtime device indices, -1 the host; None: one object on the host), "
           "the range split in equal contiguous parts; reads overlap the copies. progress(done, total) is called "
           "after each chunk.")
      .def(
          "object_store_usage",
          [](const RuntimeCore& rt, std::optional<int32_t> device) {
            auto u = sized<accel_object_store_usage_t>(ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE);
            const int32_t location = device.value_or(ACCEL_OBJECT_LOCATION_HOST);
            accel_runtime_t h = rt.live();
            check(accel_object_store_get_usage(h, location, &u));
            return usage_dict(u);
          },
          py::arg("device") = py::none(),
          "The store's figures on the host (device None) or on a runtime device index: capacity, used, replicas, "
          "transfers_in, evicted, moved_out, restored.")
      .def_property_readonly("closed", [](const RuntimeCore& rt) { return rt.handle == nullptr; })
      .def("devices",
           [](const RuntimeCore& rt) {
             uint32_t count = 0;
             check(accel_runtime_get_device_count(rt.live(), &count));
             py::list out;
             for (uint32_t i = 0; i < count; ++i) {
               auto d = sized<accel_runtime_device_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE);
               check(accel_runtime_get_device(rt.live(), i, &d));
               py::dict item;
               item["device"] = first_access_path(rt.inst, d.physical_device);
               item["share_free"] = d.share_free;
               item["memory_free"] = d.memory_free;
               item["memory_total"] = d.memory_total;
               item["lost"] = d.lost != 0;
               out.append(item);
             }
             return out;
           })
      .def("counters",
           [](const RuntimeCore& rt) {
             auto c = sized<accel_runtime_counters_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS);
             check(accel_runtime_get_counters(rt.live(), &c));
             return counters_dict(c);
           })
      .def(
          "set_event_log",
          [](const RuntimeCore& rt, uint32_t capacity) { check(accel_runtime_set_event_log(rt.live(), capacity)); },
          py::arg("capacity"))
      .def(
          "events",
          [](const RuntimeCore& rt, uint64_t after, uint32_t max) { return events_list(rt.live(), after, max); },
          py::arg("after") = 0, py::arg("max") = 4096)
      .def("_submit", &submit, py::arg("runner"), py::arg("name"), py::arg("devices"), py::arg("share"),
           py::arg("memory"), py::arg("selector"), py::arg("placement_group"), py::arg("bundle"), py::arg("after"),
           py::arg("max_retries"), py::arg("queue"), py::arg("priority"), py::arg("preemptible"),
           py::arg("near") = py::list())
      .def(
          "task_group",
          [](const RuntimePtr& rt, std::optional<std::string> name) {
            auto g = std::make_shared<TaskGroupCore>();
            g->rt = rt;
            g->name = name ? "task group '" + *name + "'" : "task group";
            auto desc = sized<accel_task_group_desc_t>(ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC);
            desc.name = name ? name->c_str() : nullptr;
            accel_runtime_t handle = rt->live();
            CallWithoutGil([&] { return accel_task_group_create(handle, &desc, &g->handle); });
            return g;
          },
          py::arg("name") = py::none(),
          "A TaskGroup: tasks submitted with group.submit(fn, *args, **options) have no Future; group.wait() (or "
          "leaving a `with` block) waits for all and raises the first failure.")
      .def(
          "placement_group",
          [](const RuntimePtr& rt, const py::list& bundles, const std::string& strategy, const std::string& level,
             bool required, std::optional<std::string> name, const QueuePtr& queue,
             bool wait) { return create_group(rt, bundles, strategy, level, required, std::move(name), queue, wait); },
          py::arg("bundles"), py::arg("strategy") = "PACK", py::arg("level") = "clique", py::arg("required") = true,
          py::arg("name") = py::none(), py::arg("queue") = py::none(), py::arg("wait") = false)
      .def(
          "queue",
          [](const RuntimePtr& rt, const std::string& name, QueuePtr parent, double quota, double limit,
             uint64_t quota_memory, uint64_t limit_memory, double weight) {
            auto q = std::make_shared<QueueCore>();
            q->rt = rt;
            q->name = name;
            auto desc = sized<accel_queue_desc_t>(ACCEL_STRUCTURE_TYPE_QUEUE_DESC);
            desc.name = q->name.c_str();
            desc.parent = parent ? parent->live() : nullptr;
            desc.quota_devices = quota;
            desc.limit_devices = limit;
            desc.quota_memory = quota_memory;
            desc.limit_memory = limit_memory;
            desc.weight = weight;
            accel_runtime_t handle = rt->live();
            CallWithoutGil([&] { return accel_queue_create(handle, &desc, &q->handle); });
            return q;
          },
          py::arg("name"), py::arg("parent") = py::none(), py::arg("quota") = 0.0, py::arg("limit") = 0.0,
          py::arg("quota_memory") = 0, py::arg("limit_memory") = 0, py::arg("weight") = 1.0)
      .def(
          "_actor",
          [](const RuntimePtr& rt, py::object factory, const std::string& name, uint32_t devices,
             std::optional<double> share, uint64_t memory, std::optional<std::string> selector, GroupPtr group,
             uint32_t bundle, uint32_t max_restarts, QueuePtr queue, int32_t priority) {
            auto request = make_request(devices, share, memory, std::move(selector), std::move(group), bundle);
            auto actor = std::make_shared<ActorCore>();
            actor->rt = rt;
            actor->group = request->group;
            actor->name = name;
            auto payload = std::make_unique<ActorPayload>(ActorPayload{
                ActorState{name, std::move(factory), py::object()}, Origin{rt, rt->inst}, actor->released});
            auto desc = sized<accel_actor_desc_t>(ACCEL_STRUCTURE_TYPE_ACTOR_DESC);
            desc.name = payload->state.name.c_str();
            desc.request = &request->c;
            desc.init = run_actor_init;
            desc.finalize = run_actor_finalize;
            desc.user_data = payload.get();
            desc.release_user_data = release_actor;
            desc.max_restarts = max_restarts;
            desc.priority = priority;
            desc.queue = queue ? queue->live() : nullptr;
            accel_runtime_t handle = rt->live();
            CallWithoutGil([&] { return accel_actor_create(handle, &desc, &actor->handle); });
            payload.release();
            return actor;
          },
          py::arg("factory"), py::arg("name"), py::arg("devices"), py::arg("share"), py::arg("memory"),
          py::arg("selector"), py::arg("placement_group"), py::arg("bundle"), py::arg("max_restarts"), py::arg("queue"),
          py::arg("priority"))
      .def_property_readonly("workers", [](const RuntimeCore& rt) { return rt.workers; })
      .def("__repr__", [](const RuntimeCore& rt) {
        return std::string("<accel.Runtime") + (rt.handle == nullptr ? " closed" : "") + ">";
      });
}

}  // namespace accelpy
