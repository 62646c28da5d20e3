// C entry points of the object store (include/accel/object_store.h,
// docs/objectstore.md): handles, counted references and views over
// ObjectStore.
#include <accel/object_store.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/protocol.h"
#include "api_common.h"
#include "handles.h"
#include "object_store.h"
#include "runtime.h"

using accel::runtime::HandleTable;
using accel::runtime::HandleType;
using accel::runtime::HeldObject;
using accel::runtime::Object;
using accel::runtime::ObjectRef;
using accel::runtime::RetainObject;
using accel::runtime::Runtime;
using accel::runtime::Task;
using accel::runtime::TaskKind;
using accel::runtime::View;
using namespace accel::runtime::api;  // NOLINT(google-build-using-namespace): the entry points' helpers

namespace {

// What a view handle holds.
struct ViewRef {
  View view;
  std::weak_ptr<Runtime> runtime;
};

// The object and its live runtime, or nulls with the error set.
std::pair<std::shared_ptr<ObjectRef>, std::shared_ptr<Runtime>> FindObject(const char* fn, accel_object_t object,
                                                                           accel_status_t* status) {
  return FindWithRuntime<ObjectRef>(fn, object, HandleType::kObject, "object", status);
}

// Fails with INVALID_ARGUMENT naming `field` unless `location` is the host or a device index of `rt`.
bool CheckLocation(const char* fn, Runtime& rt, int32_t location, const std::string& field, accel_status_t* status) {
  if (rt.store().ValidLocation(location)) return true;
  *status = Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                 fmt::format("'{}' {} is neither ACCEL_OBJECT_LOCATION_HOST (-1) nor one of the runtime's {} device "
                             "indices",
                             field, location, rt.store().device_count()));
  return false;
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_object_put(accel_runtime_t runtime, const accel_object_put_desc_t* desc,
                                          accel_object_t* out_object) {
  if (out_object != nullptr) *out_object = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    accel_object_put_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC, out_object, "out_object", &d, &status)) {
      return status;
    }
    if (d.size == 0) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->size' is 0");
    if ((d.data == nullptr) == (d.buffer == nullptr)) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  d.data == nullptr ? "'desc->data' and 'desc->buffer' are both NULL: one gives the bytes"
                                    : "'desc->data' and 'desc->buffer' are both set: only one gives the bytes");
    }
    if (d.data != nullptr && d.buffer_offset != 0) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->buffer_offset' is set without 'desc->buffer'");
    }
    if ((d.flags & ~ACCEL_OBJECT_PUT_ADOPT) != 0) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'desc->flags' 0x{:x} has bits no ACCEL_OBJECT_PUT_* flag names", d.flags));
    }
    if (d.reserved0 != 0) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->reserved0' must be 0");
    const bool adopt = (d.flags & ACCEL_OBJECT_PUT_ADOPT) != 0;
    if (adopt && d.data != nullptr && d.release_data == nullptr) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->release_data' is NULL: adopting 'desc->data' needs it (the store gives the memory back "
                  "through it)");
    }
    if (!adopt && d.release_data != nullptr) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->release_data' is set without ACCEL_OBJECT_PUT_ADOPT (a copy never calls it)");
    }
    if (adopt && d.buffer != nullptr && d.buffer_offset != 0) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'desc->buffer_offset' is {}: an adopted buffer is the object from its start (0)",
                              d.buffer_offset));
    }
    std::shared_ptr<Object> object;
    std::string why;
    status = rt->store().Put(d, &object, &why);
    rt->store().RunDeferred();  // what making room freed (adopted memory given back, lineages)
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    try {
      auto ref = std::make_shared<ObjectRef>();
      ref->object = object;
      ref->runtime = rt;
      *out_object = reinterpret_cast<accel_object_t>(HandleTable::Get().Insert(HandleType::kObject, ref));
    } catch (...) {
      rt->store().Drop(object);  // no handle: nothing may keep it
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_put_file(accel_runtime_t runtime, const accel_object_file_desc_t* desc,
                                               accel_object_t* out_objects) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    accel_object_file_desc_t d{};
    if (!ReadDesc(fn, desc, ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC, out_objects, "out_objects", &d, &status)) {
      return status;
    }
    if (d.path == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->path' is NULL");
    if (d.reserved0 != 0) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->reserved0' must be 0");
    if (d.locations != nullptr && d.location_count == 0) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->location_count' is 0 with 'desc->locations' set");
    }
    const uint32_t parts = d.locations != nullptr ? d.location_count : 1;
    for (uint32_t i = 0; i < parts; ++i) out_objects[i] = nullptr;
    for (uint32_t i = 0; d.locations != nullptr && i < parts; ++i) {
      if (!CheckLocation(fn, *rt, d.locations[i], fmt::format("desc->locations[{}]", i), &status)) return status;
    }
    std::vector<std::shared_ptr<Object>> objects;
    std::string why;
    status = rt->store().PutFile(d, &objects, &why);
    rt->store().RunDeferred();
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    size_t inserted = 0;
    try {
      for (; inserted < objects.size(); ++inserted) {
        auto ref = std::make_shared<ObjectRef>();
        ref->object = objects[inserted];
        ref->runtime = rt;
        out_objects[inserted] = reinterpret_cast<accel_object_t>(HandleTable::Get().Insert(HandleType::kObject, ref));
      }
    } catch (...) {
      for (size_t i = 0; i < objects.size(); ++i) {
        if (i < inserted) HandleTable::Get().Remove(reinterpret_cast<uint64_t>(out_objects[i]));
        out_objects[i] = nullptr;
        rt->store().Drop(objects[i]);
      }
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_retain(accel_object_t object) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [ref, rt] = FindObject(fn, object, &status);  // a destroyed runtime's object is stale
    if (!ref) return status;
    if (!RetainObject(*ref->object)) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'object' is being released (its last reference went)");
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_release(accel_object_t object) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto ref = Find<ObjectRef>(fn, object, HandleType::kObject, "object", &status);
    if (!ref) return status;
    uint32_t n = ref->object->references.load();
    do {
      if (n == 0) return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'object' is a released object handle");
    } while (!ref->object->references.compare_exchange_weak(n, n - 1));
    if (n == 1) {
      HandleTable::Get().Remove(reinterpret_cast<uint64_t>(object));
      if (auto rt = ref->runtime.lock()) rt->store().Drop(ref->object);
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_get_info(accel_object_t object, accel_object_info_t* out_info) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [ref, rt] = FindObject(fn, object, &status);
    if (!ref) return status;
    if (!CheckHeader(fn, out_info, ACCEL_STRUCTURE_TYPE_OBJECT_INFO, "out_info", &status)) return status;
    FillOut(out_info, rt->store().Info(*ref->object));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_is_on_device(accel_object_t object, uint32_t device_index,
                                                   uint32_t* out_present) {
  if (out_present != nullptr) *out_present = 0;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [ref, rt] = FindObject(fn, object, &status);
    if (!ref) return status;
    if (out_present == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_present' is NULL");
    if (device_index >= rt->store().device_count()) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'device_index' {} is past the runtime's {} device(s)", device_index,
                              rt->store().device_count()));
    }
    *out_present = rt->store().OnDevice(*ref->object, device_index) ? 1 : 0;
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_get(accel_object_t object, int32_t location, uint64_t timeout_ns,
                                          accel_object_view_t* out_view) {
  if (out_view != nullptr) *out_view = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [ref, rt] = FindObject(fn, object, &status);
    if (!ref) return status;
    if (out_view == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_view' is NULL");
    if (!CheckLocation(fn, *rt, location, "location", &status)) return status;
    auto view = std::make_shared<ViewRef>();
    view->runtime = rt;
    std::string why;
    status = rt->store().Get(ref->object, location, timeout_ns, &view->view, &why);
    rt->store().RunDeferred();
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    try {
      *out_view = reinterpret_cast<accel_object_view_t>(HandleTable::Get().Insert(HandleType::kObjectView, view));
    } catch (...) {
      rt->store().ReleaseView(view->view);  // no handle: unpin at once
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_view_get_info(accel_object_view_t view, accel_object_view_info_t* out_info) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto ref = Find<ViewRef>(fn, view, HandleType::kObjectView, "view", &status);
    if (!ref) return status;
    if (!LiveRuntime(fn, ref->runtime, "view", &status)) return status;
    if (!CheckHeader(fn, out_info, ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO, "out_info", &status)) return status;
    accel_object_view_info_t info{};
    info.host_address = ref->view.host;
    info.buffer = ref->view.buffer;
    info.offset = 0;
    info.size = ref->view.object->size;
    info.location = ref->view.location;
    FillOut(out_info, info);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_view_release(accel_object_view_t view) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto ref = Find<ViewRef>(fn, view, HandleType::kObjectView, "view", &status);
    if (!ref) return status;
    if (!HandleTable::Get().Remove(reinterpret_cast<uint64_t>(view))) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'view' is a released view handle");
    }
    // A destroyed runtime freed its store already.
    if (auto rt = ref->runtime.lock()) rt->store().ReleaseView(ref->view);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_store_get_usage(accel_runtime_t runtime, int32_t location,
                                                      accel_object_store_usage_t* out_usage) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (!CheckLocation(fn, *rt, location, "location", &status)) return status;
    if (!CheckHeader(fn, out_usage, ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE, "out_usage", &status)) return status;
    FillOut(out_usage, rt->store().Usage(location));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_share(accel_object_t object, accel_object_token_t* out_token) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto [ref, rt] = FindObject(fn, object, &status);
    if (!ref) return status;
    if (!CheckHeader(fn, out_token, ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN, "out_token", &status)) return status;
    if (out_token->struct_size < sizeof(accel_object_token_t)) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'out_token' has struct_size {}, too small for its {}-byte text", out_token->struct_size,
                              ACCEL_OBJECT_TOKEN_SIZE));
    }
    std::memset(out_token->text, 0, sizeof(out_token->text));
    std::string token;
    std::string why;
    status = rt->store().Share(ref->object, &token, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    std::memcpy(out_token->text, token.c_str(), std::min(token.size() + 1, sizeof(out_token->text) - 1));
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_object_import(accel_runtime_t runtime, const char* token, accel_object_t* out_object) {
  if (out_object != nullptr) *out_object = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto rt = Find<Runtime>(fn, runtime, HandleType::kRuntime, "runtime", &status);
    if (!rt) return status;
    if (rt->stopping()) return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'runtime' is being destroyed");
    if (token == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'token' is NULL");
    if (out_object == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_object' is NULL");
    std::string why;
    if (!accel::object_agent::ValidToken(token, ACCEL_OBJECT_TOKEN_SIZE, &why)) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, fmt::format("'token': {}", why));
    }
    std::shared_ptr<Object> object;
    status = rt->store().Import(token, &object, &why);
    if (status != ACCEL_SUCCESS) return Fail(fn, status, why);
    try {
      auto ref = std::make_shared<ObjectRef>();
      ref->object = object;
      ref->runtime = rt;
      *out_object = reinterpret_cast<accel_object_t>(HandleTable::Get().Insert(HandleType::kObject, ref));
    } catch (...) {
      rt->store().Drop(object);
      throw;
    }
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_task_context_set_result(accel_task_context_t context, accel_object_t object) {
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    Task* task = Context(fn, context, &status);
    if (task == nullptr) return status;
    auto ref = Find<ObjectRef>(fn, object, HandleType::kObject, "object", &status);
    if (!ref) return status;
    if (ref->runtime.lock().get() != task->owner) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'object' is an object of another runtime");
    }
    if (task->kind != TaskKind::kTask) {
      return Fail(fn, ACCEL_ERROR_FAILED_PRECONDITION,
                  fmt::format("{} is an actor's work: only tasks have result objects", task->Name()));
    }
    if (!RetainObject(*ref->object)) {
      return Fail(fn, ACCEL_ERROR_INVALID_HANDLE, "'object' is being released (its last reference went)");
    }
    if (task->result_object.object) task->drop_later.push_back(std::exchange(task->result_object, {}));  // replaced
    task->result_object = {ref->object, reinterpret_cast<uint64_t>(object)};
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_task_context_get_object(accel_task_context_t context, uint32_t index,
                                                       accel_object_t* out_object) {
  if (out_object != nullptr) *out_object = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    Task* task = Context(fn, context, &status);
    if (task == nullptr) return status;
    if (out_object == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_object' is NULL");
    if (index >= task->near.size()) {
      return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT,
                  fmt::format("'index' {} is past the task's {} object(s)", index, task->near.size()));
    }
    const HeldObject& held = task->near[index];
    if (!RetainObject(*held.object)) return Fail(fn, ACCEL_ERROR_INTERNAL, "the task's object lost its references");
    *out_object = reinterpret_cast<accel_object_t>(held.handle);
    return ACCEL_SUCCESS;
  });
}

ACCEL_API accel_status_t accel_future_get_object(accel_future_t future, accel_object_t* out_object) {
  if (out_object != nullptr) *out_object = nullptr;
  const char* const fn = __func__;
  return Guarded(fn, [&]() -> accel_status_t {
    accel_status_t status = ACCEL_SUCCESS;
    auto task = Find<Task>(fn, future, HandleType::kFuture, "future", &status);
    if (!task) return status;
    if (out_object == nullptr) return Fail(fn, ACCEL_ERROR_INVALID_ARGUMENT, "'out_object' is NULL");
    if (!task->done.load(std::memory_order_acquire)) return ACCEL_NOT_READY;
    if (task->final_result != ACCEL_SUCCESS) {
      return Fail(fn, task->final_result < 0 ? task->final_result : ACCEL_ERROR_FAILED_PRECONDITION,
                  fmt::format("{} failed, so it has no result: {}", task->Name(), task->final_message));
    }
    // Set before `done` and held while the future lives.
    const HeldObject held = task->result_object;
    if (!held.object) {
      return Fail(fn, ACCEL_ERROR_NOT_FOUND,
                  fmt::format("{} ended without a result object (accel_task_context_set_result)", task->Name()));
    }
    if (!RetainObject(*held.object)) return Fail(fn, ACCEL_ERROR_INTERNAL, "the result lost its references");
    *out_object = reinterpret_cast<accel_object_t>(held.handle);
    return ACCEL_SUCCESS;
  });
}

}  // extern "C"
