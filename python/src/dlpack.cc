// DLPack export (__dlpack__, __dlpack_device__) and import (from_dlpack) of
// accel arrays: legacy "dltensor" capsules and DLPack 1.x
// "dltensor_versioned" ones. The structs follow dlpack.h 1.0 (ABI-stable,
// dlpack_types.h); an imported tensor is checked by dlpack_check.h first.
#include <cstring>

#include <functional>

#include "common.h"
#include "dlpack_check.h"
#include "dlpack_types.h"
#include "names.h"

namespace accelpy {

namespace {

constexpr const char* kLegacy = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

// ---- export -----------------------------------------------------------------

struct ExportContext {
  ArrayPtr array;                   // keeps the buffer alive until the consumer's deleter runs
  py::object owner;                 // export_host_memory: keeps the memory's owner alive
  std::function<void()> on_delete;  // export_host_memory: runs (with the GIL) when the consumer lets go
  std::vector<int64_t> shape, strides;
  std::unique_ptr<unsigned char[]> host_copy;  // dl_device=CPU of memory without a host address
};

// The deleter may run on any thread, with or without the GIL.
void delete_context(void* ctx) {
  auto* context = static_cast<ExportContext*>(ctx);
  if (!python_alive()) return;  // leak at exit rather than touch Python
  PyGILState_STATE state = PyGILState_Ensure();
  if (context->on_delete) context->on_delete();
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

bool host_type(int32_t type) {
  return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost || type == kDLCUDAManaged;
}

py::tuple dlpack_device(const Array& a) {
  auto [type, id] = dlpack_device_of(a.device);
  return py::make_tuple(type, id);
}

// Makes the array's pending stream work safe for the consumer's `stream`
// (DLPack's stream semantics, python/README.md): None waits on the host, -1
// does not wait, an accel.Stream waits on the device.
void synchronize_for(const Array& a, py::handle stream, int32_t type) {
  if (stream.is_none()) {
    if (a.buffer) a.buffer->wait_pending();
    return;
  }
  if (py::isinstance<Stream>(stream)) {
    const auto& s = stream.cast<const Stream&>();
    if (a.buffer && a.buffer->pending) check(accel_stream_wait_event(s.live(), a.buffer->pending->event));
    return;
  }
  if (py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1) return;
  if (type == kDLCPU || type == kDLExtDev)
    throw py::buffer_error("accel.Array.__dlpack__: stream=" + py::repr(stream).cast<std::string>() +
                           ": a DLPack device of type " + std::to_string(type) +
                           " has no streams (pass None, -1 or an accel.Stream)");
  if (a.buffer) a.buffer->wait_pending();  // a vendor stream handle: waiting on the host is safe for any stream
}

// The capsule for `tensor`: versioned (with `flags`) or legacy; `context` goes to the consumer's deleter.
py::object make_capsule(std::unique_ptr<ExportContext> context, const DLTensor& tensor, bool versioned,
                        uint64_t flags) {
  if (versioned) {
    auto* t = new DLManagedTensorVersioned{};
    t->version = DLPackVersion{1, 0};
    t->manager_ctx = context.get();
    t->deleter = versioned_deleter;
    t->flags = flags;
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

py::object export_dlpack(ArrayPtr a, py::object stream, py::object max_version, py::object dl_device, py::object copy) {
  auto [own_type, own_id] = dlpack_device_of(a->device);
  int32_t type = own_type, id = own_id;
  if (!dl_device.is_none()) {
    auto wanted = dl_device.cast<py::tuple>();
    if (wanted.size() != 2) throw py::value_error("dl_device is a (device_type, device_id) tuple");
    type = wanted[0].cast<int32_t>();
    id = wanted[1].cast<int32_t>();
    bool to_host = type == kDLCPU && id == 0;
    if (!to_host && !(type == own_type && id == own_id))
      throw py::buffer_error("accel.Array.__dlpack__: cannot export an array of DLPack device (" +
                             std::to_string(own_type) + ", " + std::to_string(own_id) + ") to (" +
                             std::to_string(type) + ", " + std::to_string(id) + "); (1, 0) (the host) and (" +
                             std::to_string(own_type) + ", " + std::to_string(own_id) + ") are possible");
  }
  bool want_copy = !copy.is_none() && copy.cast<bool>();
  bool no_copy = !copy.is_none() && !copy.cast<bool>();
  synchronize_for(*a, stream, type);
  bool copied = false;
  void* host = nullptr;
  std::unique_ptr<unsigned char[]> host_copy;
  if (type == kDLCPU || type == kDLExtDev) {
    host = a->element0_host(false, false);
    if (type == kDLCPU && own_type != kDLCPU && host == nullptr && no_copy)
      throw py::buffer_error(
          "accel.Array.__dlpack__(dl_device=(1, 0), copy=False): the array's memory has no "
          "host address");
    if (host == nullptr && type == kDLExtDev)
      throw py::buffer_error("accel.Array.__dlpack__: the array's memory has no host address");
  } else if (type == kDLOpenCL || type == kDLVulkan) {
    throw py::buffer_error("accel.Array.__dlpack__: DLPack has no data-pointer convention for " +
                           std::string(type == kDLOpenCL ? "OpenCL" : "Vulkan") +
                           " buffers; ask for dl_device=(1, 0) to export through the host");
  }
  if (want_copy && type == own_type) {
    a = copy_to_device(*a, a->device);
    host = a->element0_host(false);
    copied = true;
  } else if (type == kDLCPU && (host == nullptr || want_copy)) {
    // To the host: the span copied into memory the capsule owns.
    auto [lo, hi] = a->extent();
    host_copy.reset(new unsigned char[static_cast<size_t>(std::max<int64_t>(hi - lo, 1))]);
    copy_to_host(*a, host_copy.get());
    host = host_copy.get() - lo;
    copied = true;
  }
  void* data = host;
  if (type != kDLCPU && type != kDLExtDev) {  // CUDA, ROCm, oneAPI: the device address
    uint64_t address = 0;
    if (a->buffer) check(accel_buffer_get_device_address(a->buffer->handle, &address));
    data = reinterpret_cast<void*>(address + a->offset);
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    auto v = max_version.cast<py::tuple>();
    versioned = v[0].cast<int>() >= 1;
  }
  if (a->readonly && !copied && !versioned)
    throw py::buffer_error(
        "accel.Array.__dlpack__: a read-only array exports zero-copy to DLPack 1.0 consumers only (max_version >= "
        "(1, 0)), whose tensors carry the read-only flag; an older consumer would get writable memory: pass "
        "copy=True, or use the buffer protocol (numpy.asarray)");
  for (size_t i = 0; i < a->strides.size(); ++i)
    if (a->strides[i] % a->dtype->itemsize != 0)
      throw py::buffer_error("accel.Array.__dlpack__: a stride is not a multiple of the item size");

  auto context = std::make_unique<ExportContext>();
  context->array = a;
  context->shape = a->shape;
  context->host_copy = std::move(host_copy);
  if (!context->host_copy && a->buffer) {  // the consumer reads the buffer's memory in place until its deleter runs
    ++a->buffer->exports;
    context->on_delete = [buffer = a->buffer] {
      if (buffer->exports > 0) --buffer->exports;
    };
  }
  for (auto s : a->strides) context->strides.push_back(s / a->dtype->itemsize);
  DLTensor tensor{};
  tensor.data = data;
  tensor.device = DLDevice{type, id};
  tensor.ndim = static_cast<int32_t>(a->shape.size());
  tensor.dtype = DLDataType{a->dtype->dl_code, static_cast<uint8_t>(a->dtype->itemsize * 8), 1};
  if (a->dtype->kind == 'b') tensor.dtype.bits = 8;
  tensor.shape = context->shape.data();
  tensor.strides = context->strides.data();
  tensor.byte_offset = 0;

  return make_capsule(std::move(context), tensor, versioned,
                      (a->readonly && !copied ? kReadOnly : 0) | (copied ? kIsCopied : 0));
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

// The accel dtype of the tensor's; raises for a dtype accel does not have.
const DType& tensor_dtype(const DLTensor& tensor) {
  const DType* dtype = dtype_from_dlpack(tensor.dtype.code, tensor.dtype.bits);
  if (dtype == nullptr || tensor.dtype.lanes != 1)
    raise(ACCEL_ERROR_INVALID_ARGUMENT,
          "from_dlpack: unsupported DLPack dtype (code " + std::to_string(tensor.dtype.code) + ", bits " +
              std::to_string(tensor.dtype.bits) + ", lanes " + std::to_string(tensor.dtype.lanes) + ")");
  return *dtype;
}

// An Array with the tensor's dtype, shape and strides (bytes), no device or
// memory yet. The tensor passed check_dlpack_tensor: its fields are safe to
// read and its strides in bytes fit in int64.
ArrayPtr array_from_tensor(const DLTensor& tensor, const DType& dtype, bool readonly) {
  auto array = std::make_shared<Array>();
  array->dtype = &dtype;
  array->shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides != nullptr) {
    for (int32_t i = 0; i < tensor.ndim; ++i) array->strides.push_back(tensor.strides[i] * dtype.itemsize);
  } else {
    array->strides = c_strides(array->shape, dtype.itemsize);
  }
  array->readonly = readonly;
  return array;
}

// A tensor in device memory (kDLCUDA, kDLROCM, kDLOneAPI): imported as that
// vendor's device pointer onto the accel device of the same DLPack device.
ArrayPtr import_device_tensor(const DLTensor& tensor, const DType& dtype, const DLPackExtent& extent,
                              const Imported& imported, Imported*& owner, bool readonly, py::object device_obj,
                              py::object copy_obj) {
  int32_t type = tensor.device.device_type;
  accel_external_memory_type_t memory_type{};
  switch (type) {
    case kDLCUDA: memory_type = ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER; break;
    case kDLROCM: memory_type = ACCEL_EXTERNAL_MEMORY_TYPE_HIP_DEVICE_POINTER; break;
    case kDLOneAPI: memory_type = ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER; break;
    default:
      throw py::buffer_error("from_dlpack: cannot import a tensor of DLPack device type " + std::to_string(type) +
                             " (host memory, CUDA, ROCm and oneAPI device memory can be imported)");
  }
  if (!copy_obj.is_none() && copy_obj.cast<bool>())
    throw py::buffer_error("from_dlpack(copy=True) of device memory is not supported; import it, then .copy()");
  std::optional<Device> device;
  for (auto& d : all_devices())
    if (dlpack_device_of(d) == std::make_pair(type, tensor.device.device_id)) device = d;
  if (!device)
    throw py::buffer_error("from_dlpack: no visible accel device is DLPack device (" + std::to_string(type) + ", " +
                           std::to_string(tensor.device.device_id) + ")");
  if (!device_obj.is_none() && resolve_device(device_obj).handle != device->handle)
    throw py::buffer_error("from_dlpack: the tensor lives on accel device " + std::to_string(device->index) +
                           "; importing it onto another device is not supported");
  auto array = array_from_tensor(tensor, dtype, readonly);
  array->device = *device;
  auto [lo, hi, element0, empty] = extent;
  if (empty) {
    array->empty_data = reinterpret_cast<void*>(element0);
    return array;
  }
  auto user = std::make_unique<Imported>(imported);
  auto buffer =
      import_memory(*device, memory_type, element0 + lo, hi - lo, readonly, release_tensor, user.get(), false);
  user.release();  // release_tensor owns it now
  owner = nullptr;
  array->buffer = std::move(buffer);
  array->offset = -lo;
  return array;
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

  // Nothing of the producer's tensor is used before it passed the checks (docs/interop.md, "DLPack"); a refusal
  // runs its deleter (the Owner above).
  const DType& dtype = tensor_dtype(*tensor);
  DLPackExtent extent;
  if (std::string why = check_dlpack_tensor(*tensor, dtype.itemsize, extent); !why.empty()) throw py::buffer_error(why);

  // One of this package's own exports: a view of the same buffer, on any device.
  void* ctx = imported.versioned ? static_cast<DLManagedTensorVersioned*>(imported.tensor)->manager_ctx
                                 : static_cast<DLManagedTensor*>(imported.tensor)->manager_ctx;
  bool ours = imported.versioned ? static_cast<DLManagedTensorVersioned*>(imported.tensor)->deleter == versioned_deleter
                                 : static_cast<DLManagedTensor*>(imported.tensor)->deleter == legacy_deleter;
  // (An ObjectView's export is ours too but holds no array: it takes the host import below, which keeps the view.)
  if (ours && static_cast<ExportContext*>(ctx)->array && !static_cast<ExportContext*>(ctx)->host_copy) {
    ArrayPtr source = static_cast<ExportContext*>(ctx)->array;
    auto view = std::make_shared<Array>(*source);
    view->readonly = view->readonly || readonly;
    bool copy = !copy_obj.is_none() && copy_obj.cast<bool>();
    if (!device_obj.is_none()) {
      Device target = resolve_device(device_obj);
      if (target.handle != source->device.handle) {
        if (!copy_obj.is_none() && !copy)
          throw py::buffer_error("from_dlpack(copy=False): the tensor lives on device " +
                                 std::to_string(source->device.index) + ", not on device " +
                                 std::to_string(target.index));
        return copy_to_device(*view, target);
      }
    }
    return copy ? copy_to_device(*view, view->device) : view;
  }

  int32_t type = tensor->device.device_type;
  if (!host_type(type))
    return import_device_tensor(*tensor, dtype, extent, imported, owner.imported, readonly, device_obj, copy_obj);
  auto array = array_from_tensor(*tensor, dtype, readonly);
  array->device = resolve_device(device_obj);
  const Device& device = array->device;
  char* element0 = reinterpret_cast<char*>(static_cast<uintptr_t>(extent.element0));
  const int64_t lo = extent.lo, hi = extent.hi;
  if (extent.empty) {  // zero-size: nothing to import; the deleter runs now
    array->empty_data = element0;
    return array;
  }
  bool copy = !copy_obj.is_none() && copy_obj.cast<bool>();
  if (!copy) {
    auto user = std::make_unique<Imported>(imported);
    auto buffer = import_host(device, element0 + lo, hi - lo, readonly, release_tensor, user.get(), copy_obj.is_none());
    if (buffer) {
      user.release();  // release_tensor owns it now
      owner.imported = nullptr;
      array->buffer = std::move(buffer);
      array->offset = -lo;
      return array;
    }
    // The device cannot use host memory in place: copy below.
  }
  array->readonly = false;
  array->buffer = create_buffer(device, hi - lo);
  array->offset = -lo;
  copy_from_host(*array, element0 + lo);
  return array;
}

}  // namespace

std::pair<int32_t, int32_t> dlpack_device_for(const accel_device_capabilities_t& caps, int32_t backend_index) {
  const std::string backend = accel::info::FixedString(caps.backend_name);
  int32_t type = kDLExtDev;  // simulated devices and backends DLPack has no code for
  if ((caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0)
    type = kDLExtDev;
  else if (backend == "host")
    return {kDLCPU, 0};
  else if (backend == "cuda")
    type = kDLCUDA;
  else if (backend == "hip" || backend == "rocm")
    type = kDLROCM;
  else if (backend == "opencl")
    type = kDLOpenCL;
  else if (backend == "vulkan")
    type = kDLVulkan;
  else if (backend == "level-zero" || backend == "level_zero" || backend == "levelzero")
    type = kDLOneAPI;
  // The id is the device's place in its backend's own list: the vendor's
  // ordinal for CUDA and HIP (docs/capability-keys.md, "The backend index").
  return {type, backend_index};
}

std::pair<int32_t, int32_t> dlpack_device_of(const Device& device) {
  const DeviceInfo& info = device_info(device);
  return {info.dl_type, info.dl_id};
}

py::object export_host_memory(void* data, const std::vector<int64_t>& shape, const DType& dtype, bool readonly,
                              py::object owner, py::object stream, py::object max_version, py::object dl_device,
                              py::object copy, std::function<void()> on_delete) {
  if (!stream.is_none() && !(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1))
    throw py::buffer_error("__dlpack__: stream=" + py::repr(stream).cast<std::string>() +
                           ": host memory has no streams (pass None or -1)");
  if (!dl_device.is_none()) {
    auto wanted = dl_device.cast<py::tuple>();
    if (wanted.size() != 2 || wanted[0].cast<int32_t>() != kDLCPU || wanted[1].cast<int32_t>() != 0)
      throw py::buffer_error("__dlpack__: host memory exports to dl_device=(1, 0) only");
  }
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("__dlpack__(copy=True): this memory exports without a copy only (copy=None or False)");
  bool versioned = false;
  if (!max_version.is_none()) versioned = max_version.cast<py::tuple>()[0].cast<int>() >= 1;
  if (readonly && !versioned)
    throw py::buffer_error(
        "__dlpack__: read-only memory exports to DLPack 1.0 consumers only (max_version >= (1, 0)), whose tensors "
        "carry the read-only flag; an older consumer would get writable memory: use the buffer protocol "
        "(numpy.asarray)");
  auto context = std::make_unique<ExportContext>();
  context->owner = std::move(owner);
  context->shape = shape;
  DLTensor tensor{};
  tensor.data = data;
  tensor.device = DLDevice{kDLCPU, 0};
  tensor.ndim = static_cast<int32_t>(shape.size());
  tensor.dtype = DLDataType{dtype.dl_code, static_cast<uint8_t>(dtype.itemsize * 8), 1};
  if (dtype.kind == 'b') tensor.dtype.bits = 8;
  tensor.shape = context->shape.data();
  tensor.strides = nullptr;                   // C-contiguous
  context->on_delete = std::move(on_delete);  // last: a failure before the capsule owns the context runs none
  return make_capsule(std::move(context), tensor, versioned, readonly ? kReadOnly : 0);
}

void init_dlpack(py::module_& m, py::class_<Array, ArrayPtr>& array) {
  array.def("__dlpack__", &export_dlpack, py::kw_only(), py::arg("stream") = py::none(),
            py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  array.def("__dlpack_device__", &dlpack_device);
  m.def("from_dlpack_capsule", &import_capsule, py::arg("capsule"), py::arg("device") = py::none(),
        py::arg("copy") = py::none());
}

}  // namespace accelpy
