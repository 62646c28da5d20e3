// DLPack export (__dlpack__, __dlpack_device__) and import (from_dlpack) of
// accel arrays: legacy "dltensor" capsules and DLPack 1.x
// "dltensor_versioned" ones. The structs follow dlpack.h 1.0 (ABI-stable).
#include <cstring>

#include "common.h"

namespace accelpy {

namespace {

// ---- dlpack.h 1.0 -----------------------------------------------------------
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDAHost = 3, kDLROCMHost = 11, kDLCUDAManaged = 13 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
constexpr uint64_t kReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kIsCopied = 2;  // DLPACK_FLAG_BITMASK_IS_COPIED
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr const char* kLegacy = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

// ---- export -----------------------------------------------------------------

struct ExportContext {
  ArrayPtr array;  // keeps the buffer alive until the consumer's deleter runs
  std::vector<int64_t> shape, strides;
};

// The deleter may run on any thread, with or without the GIL.
void delete_context(void* ctx) {
  auto* context = static_cast<ExportContext*>(ctx);
  if (!python_alive()) return;  // leak at exit rather than touch Python
  PyGILState_STATE state = PyGILState_Ensure();
  delete context;
  PyGILState_Release(state);
}

void legacy_deleter(DLManagedTensor* self) {
  delete_context(self->manager_ctx);
  delete self;
}

void versioned_deleter(DLManagedTensorVersioned* self) {
  delete_context(self->manager_ctx);
  delete self;
}

// An unconsumed capsule owns its tensor.
void legacy_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kLegacy) == 0) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacy));
  if (t != nullptr && t->deleter != nullptr) t->deleter(t);
}

void versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kVersioned) == 0) return;
  auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersioned));
  if (t != nullptr && t->deleter != nullptr) t->deleter(t);
}

py::tuple dlpack_device(const Array& a) {
  if (a.element0_host(false) == nullptr)
    throw py::buffer_error("DLPack export of memory without a host address is not implemented yet");
  return py::make_tuple(static_cast<int>(kDLCPU), 0);
}

py::object export_dlpack(ArrayPtr a, py::object stream, py::object max_version, py::object dl_device, py::object copy) {
  (void)stream;  // host memory: every accel operation of the package is synchronous
  auto device = dlpack_device(*a);
  bool copied = false;
  if (!dl_device.is_none()) {
    auto wanted = dl_device.cast<py::tuple>();
    if (wanted[0].cast<int>() != kDLCPU && wanted[0].cast<int>() != kDLCUDAHost)
      throw py::buffer_error("accel.Array.__dlpack__: cannot export to DLPack device type " +
                             std::to_string(wanted[0].cast<int>()));
    (void)device;
  }
  if (!copy.is_none() && copy.cast<bool>()) {
    py::object self = py::cast(a);
    a = self.attr("copy")().cast<ArrayPtr>();
    copied = true;
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    auto v = max_version.cast<py::tuple>();
    versioned = v[0].cast<int>() >= 1;
  }
  for (size_t i = 0; i < a->strides.size(); ++i)
    if (a->strides[i] % a->dtype->itemsize != 0)
      throw py::buffer_error("accel.Array.__dlpack__: a stride is not a multiple of the item size");

  auto context = std::make_unique<ExportContext>();
  context->array = a;
  context->shape = a->shape;
  for (auto s : a->strides) context->strides.push_back(s / a->dtype->itemsize);
  DLTensor tensor{};
  tensor.data = a->element0_host(true);
  tensor.device = DLDevice{kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(a->shape.size());
  tensor.dtype = DLDataType{a->dtype->dl_code, static_cast<uint8_t>(a->dtype->itemsize * 8), 1};
  if (a->dtype->kind == 'b') tensor.dtype.bits = 8;
  tensor.shape = context->shape.data();
  tensor.strides = context->strides.data();
  tensor.byte_offset = 0;

  if (versioned) {
    auto* t = new DLManagedTensorVersioned{};
    t->version = DLPackVersion{1, 0};
    t->manager_ctx = context.get();
    t->deleter = versioned_deleter;
    t->flags = (a->readonly ? kReadOnly : 0) | (copied ? kIsCopied : 0);
    t->dl_tensor = tensor;
    PyObject* capsule = PyCapsule_New(t, kVersioned, versioned_capsule_destructor);
    if (capsule == nullptr) {
      delete t;
      throw py::error_already_set();
    }
    context.release();
    return py::reinterpret_steal<py::object>(capsule);
  }
  auto* t = new DLManagedTensor{};
  t->dl_tensor = tensor;
  t->manager_ctx = context.get();
  t->deleter = legacy_deleter;
  PyObject* capsule = PyCapsule_New(t, kLegacy, legacy_capsule_destructor);
  if (capsule == nullptr) {
    delete t;
    throw py::error_already_set();
  }
  context.release();
  return py::reinterpret_steal<py::object>(capsule);
}

// ---- import -----------------------------------------------------------------

struct Imported {
  void* tensor;
  bool versioned;
};

void call_deleter(const Imported& imported) {
  if (imported.versioned) {
    auto* t = static_cast<DLManagedTensorVersioned*>(imported.tensor);
    if (t->deleter != nullptr) t->deleter(t);
  } else {
    auto* t = static_cast<DLManagedTensor*>(imported.tensor);
    if (t->deleter != nullptr) t->deleter(t);
  }
}

// The release callback of an imported tensor: runs the producer's deleter
// (with the GIL, since Python producers such as numpy decref in it).
void release_tensor(void* user) {
  auto* imported = static_cast<Imported*>(user);
  if (python_alive()) {
    PyGILState_STATE state = PyGILState_Ensure();
    call_deleter(*imported);
    PyGILState_Release(state);
  }
  delete imported;
}

ArrayPtr import_capsule(py::object capsule, py::object device_obj, py::object copy_obj) {
  Imported imported{nullptr, false};
  DLTensor* tensor = nullptr;
  bool readonly = false;
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, kVersioned) != 0) {
    auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersioned));
    if (t->version.major != 1)
      throw py::buffer_error("from_dlpack: DLPack version " + std::to_string(t->version.major) + "." +
                             std::to_string(t->version.minor) + " is not supported (1.x is)");
    imported = {t, true};
    tensor = &t->dl_tensor;
    readonly = (t->flags & kReadOnly) != 0;
    PyCapsule_SetName(cap, kVersionedUsed);
  } else if (PyCapsule_IsValid(cap, kLegacy) != 0) {
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacy));
    imported = {t, false};
    tensor = &t->dl_tensor;
    PyCapsule_SetName(cap, kLegacyUsed);
  } else {
    throw py::type_error("from_dlpack: expected an object with __dlpack__ or an unconsumed DLPack capsule");
  }
  // From here the tensor is ours: its deleter runs exactly once.
  struct Owner {
    Imported* imported;
    ~Owner() {
      if (imported != nullptr) call_deleter(*imported);
    }
  } owner{&imported};

  int32_t type = tensor->device.device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLROCMHost && type != kDLCUDAManaged)
    throw py::buffer_error("from_dlpack: DLPack device type " + std::to_string(type) +
                           " is not host memory; only host-visible tensors can be imported yet");
  const DType* dtype = dtype_from_dlpack(tensor->dtype.code, tensor->dtype.bits);
  if (dtype == nullptr || tensor->dtype.lanes != 1)
    raise(ACCEL_ERROR_INVALID_ARGUMENT,
          "from_dlpack: unsupported DLPack dtype (code " + std::to_string(tensor->dtype.code) + ", bits " +
              std::to_string(tensor->dtype.bits) + ", lanes " + std::to_string(tensor->dtype.lanes) + ")");
  Device device = resolve_device(device_obj);
  auto array = std::make_shared<Array>();
  array->device = device;
  array->dtype = dtype;
  array->shape.assign(tensor->shape, tensor->shape + tensor->ndim);
  if (tensor->strides != nullptr) {
    for (int32_t i = 0; i < tensor->ndim; ++i) array->strides.push_back(tensor->strides[i] * dtype->itemsize);
  } else {
    array->strides = c_strides(array->shape, dtype->itemsize);
  }
  array->readonly = readonly;
  char* element0 = static_cast<char*>(tensor->data) + tensor->byte_offset;
  auto [lo, hi] = array->extent();
  if (hi == lo) {  // zero-size: nothing to import; the deleter runs now
    array->empty_data = element0;
    return array;
  }
  bool copy = !copy_obj.is_none() && copy_obj.cast<bool>();
  if (!copy) {
    auto* user = new Imported(imported);
    auto buffer = import_host(device, element0 + lo, hi - lo, readonly, release_tensor, user, copy_obj.is_none());
    if (buffer) {
      owner.imported = nullptr;  // release_tensor owns it now
      array->buffer = std::move(buffer);
      array->offset = -lo;
      return array;
    }
    delete user;  // the device cannot use host memory in place: copy below
  }
  array->readonly = false;
  py::object source = py::reinterpret_steal<py::object>(PyMemoryView_FromMemory(element0 + lo, hi - lo, PyBUF_READ));
  py::module_ accel = py::module_::import("accel._accel");
  auto copied = accel.attr("from_buffer")(source, py::cast(device), true).cast<ArrayPtr>();
  array->buffer = copied->buffer;
  array->offset = -lo;
  return array;
}

}  // namespace

void init_dlpack(py::module_& m, py::class_<Array, ArrayPtr>& array) {
  array.def("__dlpack__", &export_dlpack, py::kw_only(), py::arg("stream") = py::none(),
            py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  array.def("__dlpack_device__", &dlpack_device);
  m.def("from_dlpack_capsule", &import_capsule, py::arg("capsule"), py::arg("device") = py::none(),
        py::arg("copy") = py::none());
}

}  // namespace accelpy
