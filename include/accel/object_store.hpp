// Accel object store C++ API: a header-only C++17 RAII wrapper over the C API
// of libaccel-runtime 1.2 (accel/object_store.h, docs/objectstore.md); link
// Accel::runtime.
//
// Object is a counted reference: copying it retains, destroying it releases
// (so a std::vector<Object> holds one reference per element); ObjectView
// pins a replica and is move-only. ObjectStoreOptions chains the store's
// configuration to a Runtime. A failing call throws accel::Error with the C
// status and message; destructors never throw. The C rules (ownership,
// threading: every call thread-safe) apply unchanged. Across processes:
// Object::share() gives a token string, import_object(rt, token) the object
// in another process.
//
//   accel::Runtime rt(instance);
//   accel::Object weights = accel::put(rt, bytes.data(), bytes.size(), "weights");
//   accel::ObjectView on_gpu = weights.get(3);           // a replica on device 3
//   launch(on_gpu.buffer(), on_gpu.offset(), on_gpu.size());
#ifndef ACCEL_OBJECT_STORE_HPP_
#define ACCEL_OBJECT_STORE_HPP_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accel/object_store.h"
#include "accel/runtime.hpp"

namespace accel {

// A pinned, read-only replica of an object (Object::get). Move-only.
class ObjectView : public detail::Owner<accel_object_view_t, accel_object_view_release> {
 public:
  ObjectView() noexcept = default;
  // Takes ownership of a view from the C API.
  static ObjectView adopt(accel_object_view_t handle) noexcept {
    ObjectView view;
    *view.out() = handle;
    return view;
  }

  accel_object_view_info_t info() const {
    auto info = detail::sized<accel_object_view_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO);
    check(accel_object_view_get_info(handle(), &info));
    return info;
  }
  // Host views: the bytes. Device views: nullptr.
  const void* data() const { return info().host_address; }
  // Device views: the store's buffer (read-only) and the object's offset in it.
  accel_buffer_t buffer() const { return info().buffer; }
  uint64_t offset() const { return info().offset; }
  uint64_t size() const { return info().size; }
  // ACCEL_OBJECT_LOCATION_HOST or a device index.
  int32_t location() const { return info().location; }
};

// A counted reference to an object. Copies retain, destructors release.
class Object {
 public:
  Object() noexcept = default;
  // Takes the reference a C call returned.
  static Object adopt(accel_object_t handle) noexcept {
    Object object;
    object.handle_ = handle;
    return object;
  }
  Object(const Object& other) : handle_(other.handle_) {
    if (handle_ != nullptr) check(accel_object_retain(handle_));
  }
  Object& operator=(const Object& other) {
    if (this != &other) *this = Object(other);
    return *this;
  }
  Object(Object&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Object& operator=(Object&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Object() { reset(); }

  accel_object_t handle() const noexcept { return handle_; }
  // Gives up this reference; the caller releases it.
  [[nodiscard]] accel_object_t release() noexcept { return std::exchange(handle_, nullptr); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  accel_object_info_t info() const {
    auto info = detail::sized<accel_object_info_t>(ACCEL_STRUCTURE_TYPE_OBJECT_INFO);
    check(accel_object_get_info(handle_, &info));
    return info;
  }
  uint64_t size() const { return info().size; }
  bool on_device(uint32_t device_index) const {
    uint32_t present = 0;
    check(accel_object_is_on_device(handle_, device_index, &present));
    return present != 0;
  }
  // Makes the object readable by other processes of this user on this node (accel_object_share): its token, to
  // pass to import_object there. The same token each time.
  std::string share() const {
    auto token = detail::sized<accel_object_token_t>(ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN);
    check(accel_object_share(handle_, &token));
    return token.text;
  }
  // A view at `location` (ACCEL_OBJECT_LOCATION_HOST or a device index), made when missing.
  ObjectView get(int32_t location = ACCEL_OBJECT_LOCATION_HOST, std::chrono::nanoseconds timeout = infinite) const {
    accel_object_view_t view = nullptr;
    check(accel_object_get(handle_, location, detail::to_timeout_ns(timeout), &view));
    return ObjectView::adopt(view);
  }

 private:
  void reset() noexcept {
    if (handle_ != nullptr) static_cast<void>(accel_object_release(std::exchange(handle_, nullptr)));
  }
  accel_object_t handle_ = nullptr;
};

// The store's configuration, chained to a runtime's desc (see make_runtime_with_store).
struct ObjectStoreOptions {
  uint64_t host_capacity = 0;    // 0: a quarter of the machine's memory
  uint64_t device_capacity = 0;  // 0: half of each device's
  std::string spill_directory;   // "": $ACCEL_SPILL_DIR or a temporary one
};

// A runtime whose object store has `options`.
inline Runtime make_runtime_with_store(accel_instance_t instance, const ObjectStoreOptions& options,
                                       uint32_t worker_threads = 0) {
  auto store = detail::sized<accel_object_store_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC);
  store.host_capacity = options.host_capacity;
  store.device_capacity = options.device_capacity;
  store.spill_directory = options.spill_directory.empty() ? nullptr : options.spill_directory.c_str();
  auto desc = detail::sized<accel_runtime_desc_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DESC);
  desc.worker_threads = worker_threads;
  desc.next = &store;
  accel_runtime_t runtime = nullptr;
  check(accel_runtime_create(instance, &desc, &runtime));
  return Runtime::adopt(runtime);
}

// A copy of `size` bytes at `data` in `runtime`'s store.
inline Object put(const Runtime& runtime, const void* data, uint64_t size, const char* name = nullptr) {
  auto desc = detail::sized<accel_object_put_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC);
  desc.data = data;
  desc.size = size;
  desc.name = name;
  accel_object_t object = nullptr;
  check(accel_object_put(runtime.handle(), &desc, &object));
  return Object::adopt(object);
}

// A copy of `size` bytes of `buffer` (on one of the runtime's devices) from `offset`, as a replica on that device.
inline Object put(const Runtime& runtime, accel_buffer_t buffer, uint64_t offset, uint64_t size,
                  const char* name = nullptr) {
  auto desc = detail::sized<accel_object_put_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC);
  desc.buffer = buffer;
  desc.buffer_offset = offset;
  desc.size = size;
  desc.name = name;
  accel_object_t object = nullptr;
  check(accel_object_put(runtime.handle(), &desc, &object));
  return Object::adopt(object);
}

// Takes `buffer` (on one of the runtime's devices) as the replica of a new object of its first `size` bytes, without
// a copy (ACCEL_OBJECT_PUT_ADOPT): the buffer is the store's once this returns, destroyed with the replica. When
// this throws, it stays the caller's.
inline Object adopt(const Runtime& runtime, accel_buffer_t buffer, uint64_t size, const char* name = nullptr) {
  auto desc = detail::sized<accel_object_put_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC);
  desc.buffer = buffer;
  desc.size = size;
  desc.name = name;
  desc.flags = ACCEL_OBJECT_PUT_ADOPT;
  accel_object_t object = nullptr;
  check(accel_object_put(runtime.handle(), &desc, &object));
  return Object::adopt(object);
}

// Streams `path` into one object per entry of `locations` (empty: one on the host); see accel_object_put_file.
inline std::vector<Object> put_file(const Runtime& runtime, const std::string& path,
                                    const std::vector<int32_t>& locations = {}, uint64_t chunk_size = 0) {
  auto desc = detail::sized<accel_object_file_desc_t>(ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC);
  desc.path = path.c_str();
  desc.locations = locations.empty() ? nullptr : locations.data();
  desc.location_count = static_cast<uint32_t>(locations.size());
  desc.chunk_size = chunk_size;
  std::vector<accel_object_t> handles(locations.empty() ? 1 : locations.size(), nullptr);
  check(accel_object_put_file(runtime.handle(), &desc, handles.data()));
  std::vector<Object> objects;
  objects.reserve(handles.size());
  for (accel_object_t h : handles) objects.push_back(Object::adopt(h));
  return objects;
}

// The object another process shared as `token` (Object::share there), mapped read-only into `runtime`'s store
// without a copy; see accel_object_import.
inline Object import_object(const Runtime& runtime, const std::string& token) {
  accel_object_t object = nullptr;
  check(accel_object_import(runtime.handle(), token.c_str(), &object));
  return Object::adopt(object);
}

// Tasks and objects (docs/objectstore.md, "Tasks and objects"): inside a
// task, its objects (TaskOptions::near) and its result; outside, the result
// of a task that ended.
//
//   accel::Future f = rt.submit([&](accel::TaskContext& ctx) {
//     accel::ObjectView in = accel::task_object(ctx, 0).get();
//     accel::set_result(ctx, accel::put(rt, transform(in), size));
//   }, accel::TaskOptions().near(input.handle()));
//   accel::Object out = accel::result_object(f);  // throws the task's error

// Inside a task: `object` becomes the task's result (replacing an earlier one).
inline void set_result(const TaskContext& context, const Object& object) {
  check(accel_task_context_set_result(context.handle(), object.handle()));
}

// Inside a task: its object `index`, in the order of TaskOptions::near.
inline Object task_object(const TaskContext& context, uint32_t index) {
  accel_object_t object = nullptr;
  check(accel_task_context_get_object(context.handle(), index, &object));
  return Object::adopt(object);
}

// Waits for the task behind `future` and returns its result object; throws
// accel::Error with the task's error when it failed, ACCEL_ERROR_NOT_FOUND
// when it set none.
inline Object result_object(const Future& future) {
  future.wait();
  accel_object_t object = nullptr;
  check(accel_future_get_object(future.handle(), &object));
  return Object::adopt(object);
}

// The store's figures at `location` (ACCEL_OBJECT_LOCATION_HOST or a device index).
inline accel_object_store_usage_t object_store_usage(const Runtime& runtime, int32_t location) {
  auto usage = detail::sized<accel_object_store_usage_t>(ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE);
  check(accel_object_store_get_usage(runtime.handle(), location, &usage));
  return usage;
}

}  // namespace accel

#endif  // ACCEL_OBJECT_STORE_HPP_
