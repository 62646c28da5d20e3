// Helpers shared by the C entry points of libaccel-runtime (api.cc,
// api_objects.cc): errors with the function's name, exception guards, handle
// lookups and struct headers. Internal; thread-safe like the calls they serve.
#ifndef ACCEL_RUNTIME_API_COMMON_H_
#define ACCEL_RUNTIME_API_COMMON_H_

#include <accel/runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "handles.h"
#include "pins.h"
#include "runtime.h"

namespace accel::runtime::api {

inline accel_status_t Fail(const char* function, accel_status_t code, const std::string& message) {
  return accel_set_last_error(code, fmt::format("{}: {}", function, message).c_str());
}

// Each entry point reads its name into `fn` before its Guarded lambda: inside
// the lambda, __func__ would be "operator()".

// Runs `body`, turning exceptions into ACCEL_ERROR_INTERNAL or
// RESOURCE_EXHAUSTED: none crosses the C ABI.
template <typename F>
accel_status_t Guarded(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(function, ACCEL_ERROR_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    return Fail(function, ACCEL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return Fail(function, ACCEL_ERROR_INTERNAL, "unknown exception");
  }
}

// The live object behind `handle`, or null after setting the error.
template <typename T, typename H>
std::shared_ptr<T> Find(const char* function, H handle, HandleType type, const char* argument, accel_status_t* status) {
  std::string why;
  auto found = HandleTable::Get().Find(reinterpret_cast<uint64_t>(handle), type, &why);
  if (!found) {
    *status = Fail(function, ACCEL_ERROR_INVALID_HANDLE, fmt::format("'{}' {}", argument, why));
    return nullptr;
  }
  return std::static_pointer_cast<T>(std::move(found));
}

// The runtime a handle value names, held for one call (docs/threading.md, "Pinned runtimes"): pinned on the calling
// thread (pins.h), so that the call writes no line other threads write, or, when the thread's pins are all in use, a
// counted reference. Empty when the value names no live runtime, and from the moment its destroy began.
//
//   if (auto rt = RuntimeRef::Of(task->runtime_handle)) rt->Cancel(task);
//
// Thread-compatible: one thread makes, uses and drops it, within one call.
class RuntimeRef {
 public:
  RuntimeRef() = default;
  explicit RuntimeRef(std::shared_ptr<Runtime> owned) : raw_(owned.get()), owned_(std::move(owned)) {}
  RuntimeRef(RuntimeRef&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)),
        owned_(std::move(other.owned_)),
        pin_(std::exchange(other.pin_, -1)) {}
  RuntimeRef& operator=(RuntimeRef&&) = delete;
  RuntimeRef(const RuntimeRef&) = delete;
  RuntimeRef& operator=(const RuntimeRef&) = delete;
  ~RuntimeRef() {
    if (pin_ >= 0) Pins::Unpin(pin_);
  }

  static RuntimeRef Of(uint64_t handle) {
    RuntimeRef ref;
    const HandleTable& table = HandleTable::Get();
    void* raw = table.Peek(handle, HandleType::kRuntime);
    if (raw == nullptr) return ref;
    // A pin this thread already holds on it (an enclosing call's) keeps it alive as long as this call.
    ref.pin_ = Pins::Pin(raw);
    if (ref.pin_ < 0) {
      std::string why;
      return RuntimeRef(std::static_pointer_cast<Runtime>(table.Find(handle, HandleType::kRuntime, &why)));
    }
    // Still live after the pin: its destroy, which takes the value out first, waits for the pin to go.
    if (table.Peek(handle, HandleType::kRuntime) == raw) ref.raw_ = static_cast<Runtime*>(raw);
    return ref;
  }

  explicit operator bool() const { return raw_ != nullptr; }
  Runtime* get() const { return raw_; }
  Runtime* operator->() const { return raw_; }
  Runtime& operator*() const { return *raw_; }

 private:
  Runtime* raw_ = nullptr;
  std::shared_ptr<Runtime> owned_;
  int pin_ = -1;
};

// A task group held for one call by a pin on the calling thread (docs/threading.md, "Pinned task groups"), with its
// runtime: the group's destroy and its runtime's destroy both wait for the pin to go. Empty when the value names no
// live group, when the group's runtime is being destroyed, or when the thread's pins are all in use; the caller then
// takes the counted path (Find, RuntimeRef), which also says what was wrong.
//
//   if (const GroupPin pinned(handle)) pinned.runtime().SubmitLight(pinned.group(), task);
//
// Thread-compatible: one thread makes, uses and drops it, within one call.
class GroupPin {
 public:
  explicit GroupPin(uint64_t handle) noexcept {
    const HandleTable& table = HandleTable::Get();
    auto* raw = static_cast<TaskGroup*>(table.Peek(handle, HandleType::kTaskGroup));
    if (raw == nullptr) return;
    pin_ = Pins::Pin(raw);
    // Still live after the pin (the group's destroy takes the value out first, then waits for the pins), and so is
    // its runtime (whose destroy marks its groups first, then waits for their pins).
    if (pin_ >= 0 && table.Peek(handle, HandleType::kTaskGroup) == raw &&
        !raw->runtime_gone.load(std::memory_order_seq_cst)) {
      group_ = raw;
    }
  }
  GroupPin(const GroupPin&) = delete;
  GroupPin& operator=(const GroupPin&) = delete;
  ~GroupPin() {
    if (pin_ >= 0) Pins::Unpin(pin_);
  }

  explicit operator bool() const { return group_ != nullptr; }
  TaskGroup& group() const { return *group_; }
  Runtime& runtime() const { return *group_->runtime; }

 private:
  TaskGroup* group_ = nullptr;
  int pin_ = -1;
};

// The live runtime behind `handle`, or empty after setting the error.
inline RuntimeRef FindRuntime(const char* function, accel_runtime_t handle, const char* argument,
                              accel_status_t* status) {
  RuntimeRef ref = RuntimeRef::Of(reinterpret_cast<uint64_t>(handle));
  if (ref) return ref;
  return RuntimeRef(Find<Runtime>(function, handle, HandleType::kRuntime, argument, status));
}

template <typename T>
bool CheckHeader(const char* function, const T* s, uint32_t stype, const char* argument, accel_status_t* status) {
  if (s == nullptr) {
    *status = Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' is NULL", argument));
    return false;
  }
  if (s->stype != stype) {
    *status = Fail(function, ACCEL_ERROR_INVALID_ARGUMENT,
                   fmt::format("'{}' has stype {}, expected {}", argument, s->stype, stype));
    return false;
  }
  if (s->struct_size < 16) {
    *status = Fail(function, ACCEL_ERROR_INVALID_ARGUMENT,
                   fmt::format("'{}' has struct_size {}, smaller than the 16-byte header", argument, s->struct_size));
    return false;
  }
  return true;
}

template <typename T>
void FillOut(T* out, const T& value) {
  const size_t n = std::min<size_t>(out->struct_size, sizeof(T));
  if (n > 16) std::memcpy(reinterpret_cast<char*>(out) + 16, reinterpret_cast<const char*>(&value) + 16, n - 16);
}

// Checks `desc`'s header and that the output `out_name` is not NULL, then copies `desc` into `*copy` up to its
// struct_size (fields of a later minor version stay zero). False with the error set otherwise.
template <typename T>
bool ReadDesc(const char* function, const T* desc, uint32_t stype, const void* out, const char* out_name, T* copy,
              accel_status_t* status) {
  if (!CheckHeader(function, desc, stype, "desc", status)) return false;
  if (out == nullptr) {
    *status = Fail(function, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'{}' is NULL", out_name));
    return false;
  }
  *copy = T{};
  std::memcpy(copy, desc, std::min<size_t>(desc->struct_size, sizeof(T)));
  return true;
}

// The runtime of a queue or actor, or null with INVALID_HANDLE set once it was destroyed.
inline std::shared_ptr<Runtime> LiveRuntime(const char* function, const std::weak_ptr<Runtime>& weak,
                                            const char* argument, accel_status_t* status) {
  auto rt = weak.lock();
  if (!rt || rt->stopping()) {
    *status = Fail(function, ACCEL_ERROR_INVALID_HANDLE,
                   fmt::format("'{}' belongs to a runtime that was destroyed", argument));
    return nullptr;
  }
  return rt;
}

// The live queue or actor behind `handle` and its runtime (not being destroyed), or nulls with the error set.
template <typename T, typename H>
std::pair<std::shared_ptr<T>, std::shared_ptr<Runtime>> FindWithRuntime(const char* function, H handle, HandleType type,
                                                                        const char* argument, accel_status_t* status) {
  auto object = Find<T>(function, handle, type, argument, status);
  if (!object) return {};
  auto rt = LiveRuntime(function, object->runtime, argument, status);
  if (!rt) return {};
  return {std::move(object), std::move(rt)};
}

// The calling task's context, or null with the error set.
inline Task* Context(const char* function, accel_task_context_t context, accel_status_t* status) {
  Task* current = CurrentTask();
  if (context == nullptr || current == nullptr || reinterpret_cast<Task*>(context) != current) {
    *status = Fail(function, ACCEL_ERROR_INVALID_HANDLE,
                   context == nullptr ? "'context' is NULL (expected the calling task's context)"
                                      : "'context' is not the calling task's context (a context is valid only inside "
                                        "its task function, on its thread)");
    return nullptr;
  }
  return current;
}

}  // namespace accel::runtime::api

#endif  // ACCEL_RUNTIME_API_COMMON_H_
