// accel._accel: the C ABI (include/accel/accel.h) for Python; the public API
// is the accel package (python/accel/__init__.py) built on this module.
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common.h"
#include "names.h"

namespace accelpy {

namespace {
PyObject* g_accel_error = nullptr;
}  // namespace

void raise(accel_status_t status, std::string message) { throw AccelException{status, std::move(message)}; }

accel_status_t check(accel_status_t status) {
  if (status < 0) {
    const char* message = accel_last_error();
    raise(status, (message != nullptr && *message != '\0') ? message : accel_status_name(status));
  }
  return status;
}

bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() != 0 && Py_IsFinalizing() == 0;
#else
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
#endif
}

// ---- instance and devices ---------------------------------------------------

accel_device_capabilities_t device_capabilities(accel_device_t device) {
  auto caps = accel::detail::sized<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
  check(accel_device_get_capabilities(device, &caps));
  return caps;
}

py::list kernel_format_names(uint64_t formats) {
  py::list out;
  for (int bit = 0; bit < 64; ++bit) {
    const char* name = accel_kernel_format_name(uint64_t{1} << bit);
    if (name != nullptr && (formats & (uint64_t{1} << bit)) != 0) out.append(name);
  }
  return out;
}

Instance::Instance(accel_instance_t h) : handle(h) {
  uint32_t count = 0;
  check(accel_instance_enumerate_devices(handle, &count, nullptr));
  std::vector<accel_device_t> handles(count);
  check(accel_instance_enumerate_devices(handle, &count, handles.data()));
  for (auto device : handles) {
    const auto caps = device_capabilities(device);
    uint32_t backend_index = 0;
    check(
        accel_device_get_info(device, ACCEL_DEVICE_INFO_BACKEND_INDEX, sizeof(backend_index), &backend_index, nullptr));
    const auto [dl_type, dl_id] = dlpack_device_for(caps, static_cast<int32_t>(backend_index));
    devices.push_back(DeviceInfo{device, accel::info::FixedString(caps.stable_id), dl_type, dl_id});
  }
}

Instance::~Instance() {
  NoGil nogil;
  for (auto& [device, stream] : streams_) accel_stream_destroy(stream);
  for (accel_stream_t stream : retired_) accel_stream_destroy(stream);
  accel_instance_destroy(handle);
}

accel_stream_t Instance::internal_stream(accel_device_t device) {
  std::lock_guard lock(mutex_);
  auto it = streams_.find(device);
  if (it != streams_.end()) return it->second;
  accel_stream_t stream = nullptr;
  check(accel_stream_create(device, nullptr, &stream));
  streams_.emplace(device, stream);
  return stream;
}

void Instance::retire_internal(accel_stream_t stream) {
  std::lock_guard lock(mutex_);
  for (auto it = streams_.begin(); it != streams_.end(); ++it) {
    if (it->second == stream) {
      retired_.push_back(stream);
      streams_.erase(it);
      return;
    }
  }
}

namespace {
// Leaked on purpose: objects that outlive the module keep their own reference.
std::shared_ptr<Instance>* g_instance = new std::shared_ptr<Instance>();
std::mutex g_instance_mutex;
}  // namespace

std::shared_ptr<Instance> instance() {
  std::lock_guard lock(g_instance_mutex);
  if (!*g_instance) {
    accel_instance_t handle = nullptr;
    check(accel_instance_create(nullptr, &handle));
    *g_instance = std::make_shared<Instance>(handle);
  }
  return *g_instance;
}

std::vector<Device> all_devices() {
  auto inst = instance();
  std::vector<Device> devices;
  for (uint32_t i = 0; i < inst->devices.size(); ++i) devices.push_back(Device{inst, inst->devices[i].handle, i});
  return devices;
}

const DeviceInfo& device_info(const Device& device) {
  for (auto& info : device.inst->devices)
    if (info.handle == device.handle) return info;
  raise(ACCEL_ERROR_INVALID_HANDLE, "the device is not one of this instance's");
}

namespace {
Device device_of(const std::shared_ptr<Instance>& inst, accel_device_t handle) {
  for (uint32_t i = 0; i < inst->devices.size(); ++i)
    if (inst->devices[i].handle == handle) return Device{inst, handle, i};
  return Device{inst, handle, UINT32_MAX};
}

accel_device_capabilities_t capabilities(const Device& d) { return device_capabilities(d.handle); }

const char* kind_name(accel_device_kind_t kind) { return accel::info::KindName(kind); }

// Every registered capability key, read through accel_device_get_info.
py::dict capability_dict(const Device& d) {
  py::dict out;
  for (uint32_t key = 1;; ++key) {
    const char* name = nullptr;
    accel_value_type_t type{};
    if (accel_device_info_key_describe(static_cast<accel_device_info_key_t>(key), &name, &type) != ACCEL_SUCCESS) break;
    size_t size = 0;
    auto k = static_cast<accel_device_info_key_t>(key);
    if (accel_device_get_info(d.handle, k, 0, nullptr, &size) != ACCEL_SUCCESS) continue;
    std::vector<unsigned char> value(std::max<size_t>(size, 1));
    check(accel_device_get_info(d.handle, k, value.size(), value.data(), &size));
    auto read = [&](auto zero) {
      decltype(zero) v{};
      std::memcpy(&v, value.data(), std::min(sizeof(v), value.size()));
      return v;
    };
    switch (type) {
      case ACCEL_VALUE_TYPE_STRING: out[name] = std::string(reinterpret_cast<const char*>(value.data())); break;
      case ACCEL_VALUE_TYPE_UINT32: out[name] = read(uint32_t{}); break;
      case ACCEL_VALUE_TYPE_INT32: out[name] = read(int32_t{}); break;
      case ACCEL_VALUE_TYPE_UINT64:
      case ACCEL_VALUE_TYPE_FLAGS64: out[name] = read(uint64_t{}); break;
      case ACCEL_VALUE_TYPE_UINT32_3: {
        auto v = read(std::array<uint32_t, 3>{});
        out[name] = py::make_tuple(v[0], v[1], v[2]);
        break;
      }
      case ACCEL_VALUE_TYPE_BYTES_16:
        out[name] = py::bytes(reinterpret_cast<const char*>(value.data()), std::min<size_t>(value.size(), 16));
        break;
      default: break;
    }
  }
  return out;
}

struct PhysicalDevice {
  std::shared_ptr<Instance> inst;
  accel_physical_device_t handle = nullptr;
};

accel_physical_device_properties_t physical_properties(const PhysicalDevice& p) {
  auto props =
      accel::detail::sized<accel_physical_device_properties_t>(ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES);
  check(accel_physical_device_get_properties(p.handle, &props));
  return props;
}

std::vector<PhysicalDevice> all_physical_devices() {
  auto inst = instance();
  uint32_t count = 0;
  check(accel_instance_enumerate_physical_devices(inst->handle, &count, nullptr));
  std::vector<accel_physical_device_t> handles(count);
  check(accel_instance_enumerate_physical_devices(inst->handle, &count, handles.data()));
  std::vector<PhysicalDevice> out;
  for (auto h : handles) out.push_back(PhysicalDevice{inst, h});
  return out;
}
}  // namespace

Device resolve_device(py::handle obj) {
  if (obj.is_none()) {
    auto inst = instance();
    if (inst->devices.empty()) raise(ACCEL_ERROR_NOT_FOUND, "no accel device is visible (check ACCEL_BACKENDS)");
    return Device{inst, inst->devices[0].handle, 0};
  }
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::int_>(obj) && !py::isinstance<py::bool_>(obj)) {
    auto index = obj.cast<int64_t>();
    auto inst = instance();
    if (index < 0 || index >= static_cast<int64_t>(inst->devices.size()))
      raise(ACCEL_ERROR_NOT_FOUND, "device index " + std::to_string(index) + " is out of range: " +
                                       std::to_string(inst->devices.size()) + " device(s) visible");
    return Device{inst, inst->devices[static_cast<size_t>(index)].handle, static_cast<uint32_t>(index)};
  }
  if (py::isinstance<py::str>(obj)) {
    auto id = obj.cast<std::string>();
    auto inst = instance();
    for (uint32_t i = 0; i < inst->devices.size(); ++i)
      if (id == inst->devices[i].stable_id) return Device{inst, inst->devices[i].handle, i};
    raise(ACCEL_ERROR_NOT_FOUND, "no visible device has the stable id '" + id + "'");
  }
  throw py::type_error("device must be None, an int index, a stable id string or an accel.Device");
}

// ---- dtypes -----------------------------------------------------------------

namespace {
constexpr DType kDTypes[] = {
    {"bool", 'b', 1, 6, "?"},
    {"int8", 'i', 1, 0, "b"},
    {"int16", 'i', 2, 0, "h"},
    {"int32", 'i', 4, 0, "i"},
    {"int64", 'i', 8, 0, "q"},
    {"uint8", 'u', 1, 1, "B"},
    {"uint16", 'u', 2, 1, "H"},
    {"uint32", 'u', 4, 1, "I"},
    {"uint64", 'u', 8, 1, "Q"},
    {"float16", 'f', 2, 2, "e"},
    {"float32", 'f', 4, 2, "f"},
    {"float64", 'f', 8, 2, "d"},
    {"complex64", 'c', 8, 5, "Zf"},
    {"complex128", 'c', 16, 5, "Zd"},
    // kDLBfloat; kind 'V' because neither typestrs nor the buffer protocol
    // can say bfloat16 (numpy has it through ml_dtypes).
    {"bfloat16", 'V', 2, 4, ""},
};

const DType* find_dtype(char kind, size_t itemsize) {
  for (auto& d : kDTypes)
    if (d.kind == kind && d.itemsize == itemsize) return &d;
  return nullptr;
}

std::string dtype_names() {
  std::string names;
  for (auto& d : kDTypes) {
    if (!names.empty()) names.append(", ");
    names.append(d.name);
  }
  return names;
}
}  // namespace

std::string typestr(const DType& dtype) {
  return std::string(dtype.itemsize == 1 ? "|" : "<") + dtype.kind + std::to_string(dtype.itemsize);
}

const DType* dtype_from_format(const std::string& format) {
  std::string f = format;
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.erase(0, 1);
  if (f == "l") f = sizeof(long) == 8 ? "q" : "i";
  if (f == "L") f = sizeof(long) == 8 ? "Q" : "I";
  if (f == "n") f = "q";
  if (f == "N") f = "Q";
  for (auto& d : kDTypes)
    if (*d.format != '\0' && f == d.format) return &d;
  return nullptr;
}

const DType* dtype_from_dlpack(uint8_t code, uint8_t bits) {
  for (auto& d : kDTypes)
    if (d.dl_code == code && (d.kind == 'b' ? bits == 8 : d.itemsize * 8 == bits)) return &d;
  return nullptr;
}

const DType& dtype_from(py::handle obj) {
  std::string text;
  if (py::isinstance<py::str>(obj)) {
    text = obj.cast<std::string>();
  } else if (py::hasattr(obj, "str") && py::hasattr(obj, "name") && py::isinstance<py::str>(obj.attr("name")) &&
             obj.attr("name").cast<std::string>() == "bfloat16") {
    text = "bfloat16";  // ml_dtypes' numpy dtype: its str is "<V2"
  } else if (py::hasattr(obj, "str") && py::isinstance<py::str>(obj.attr("str"))) {
    text = obj.attr("str").cast<std::string>();  // numpy.dtype
  } else if (py::hasattr(obj, "__name__")) {
    text = obj.attr("__name__").cast<std::string>();  // numpy.float32, bool, int, float
    if (text == "int") text = "int64";
    if (text == "float") text = "float64";
    if (text == "complex") text = "complex128";
  } else {
    text = py::str(obj).cast<std::string>();
  }
  for (auto& d : kDTypes)
    if (text == d.name) return d;
  std::string t = text;
  if (!t.empty() && (t[0] == '<' || t[0] == '|' || t[0] == '=')) t.erase(0, 1);
  if (t.size() >= 2 && std::isdigit(static_cast<unsigned char>(t[1]))) {
    if (const DType* d = find_dtype(t[0], std::strtoul(t.c_str() + 1, nullptr, 10)); d && t[0] != 'b') return *d;
    if (t == "b1") return kDTypes[0];
  }
  raise(ACCEL_ERROR_INVALID_ARGUMENT, "unsupported dtype '" + text + "' (supported: " + dtype_names() + ")");
}

// ---- buffers and arrays -----------------------------------------------------

void Buffer::destroy() {
  if (destroyed) return;
  destroyed = true;
  if (keep) {
    keep.reset();  // another's buffer (an object view's): release the view, not the buffer
    return;
  }
  NoGil nogil;
  accel_buffer_destroy(handle);
}

PendingWork::~PendingWork() {
  NoGil nogil;
  accel_event_destroy(event);
}

void Buffer::wait_pending() const {
  if (!pending) return;
  auto work = pending;
  accel_status_t status;
  {
    NoGil nogil;
    status = accel_event_synchronize(work->event, ACCEL_TIMEOUT_INFINITE);
  }
  if (pending == work) pending.reset();
  check(status);
}

void* Buffer::host_address(bool raise_unsupported, bool wait) const {
  if (wait) wait_pending();
  void* address = nullptr;
  accel_status_t status = accel_buffer_get_host_address(handle, &address);
  // UNIMPLEMENTED: the backend has no such entry point (its memory has no host address either).
  if (status == ACCEL_ERROR_UNSUPPORTED || status == ACCEL_ERROR_UNIMPLEMENTED) {
    if (!raise_unsupported) return nullptr;
    const char* why = accel_last_error();
    raise(ACCEL_ERROR_UNSUPPORTED, std::string("the array's memory has no host address (copy_to_host() copies it): ") +
                                       (why != nullptr ? why : ""));
  }
  check(status);
  return address;
}

int64_t Array::size() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::pair<int64_t, int64_t> Array::extent() const {
  int64_t lo = 0, hi = dtype->itemsize;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return {0, 0};
    int64_t span = (shape[i] - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  return {lo, hi};
}

bool Array::c_contiguous() const {
  if (size() == 0) return true;
  int64_t expected = dtype->itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

void* Array::element0_host(bool raise_unsupported, bool wait) const {
  if (!buffer) return empty_data;
  void* base = buffer->host_address(raise_unsupported, wait);
  return base == nullptr ? nullptr : static_cast<char*>(base) + offset;
}

std::vector<int64_t> c_strides(const std::vector<int64_t>& shape, int64_t itemsize) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

void synchronize(accel_stream_t stream) {
  accel_status_t status;
  {
    NoGil nogil;
    status = accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE);
  }
  // An error is sticky: after it, every operation on the package's own stream of the device failed. That stream is
  // retired once the error was raised here, to the operation that met it (a launch's failure reaches the next
  // synchronous operation); the next one gets a new stream.
  if (status < 0) instance()->retire_internal(stream);
  check(status);
}

namespace {
alignas(64) unsigned char g_empty_storage[64];
}  // namespace

std::shared_ptr<Buffer> create_buffer(const Device& device, uint64_t size) {
  auto desc = accel::detail::sized<accel_buffer_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_DESC);
  desc.size = size;
  desc.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  accel_buffer_t handle = nullptr;
  check(accel_buffer_create(device.handle, &desc, &handle));
  return std::make_shared<Buffer>(device.inst, handle, size);
}

namespace {
std::vector<int64_t> shape_from(py::handle obj) {
  std::vector<int64_t> shape;
  if (py::isinstance<py::int_>(obj)) {
    shape.push_back(obj.cast<int64_t>());
  } else {
    for (auto item : py::iter(obj)) shape.push_back(item.cast<int64_t>());
  }
  for (auto s : shape)
    if (s < 0) raise(ACCEL_ERROR_INVALID_ARGUMENT, "negative dimension " + std::to_string(s) + " in shape");
  return shape;
}
}  // namespace

ArrayPtr make_empty(const Device& device, std::vector<int64_t> shape, const DType& dtype) {
  auto array = std::make_shared<Array>();
  array->device = device;
  array->dtype = &dtype;
  // The element count and bytes, checked: a product that wraps would make a small buffer under a huge shape.
  uint64_t bytes = dtype.itemsize;
  for (int64_t s : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes) || bytes > uint64_t{INT64_MAX}) {
      std::string dims;
      for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      raise(ACCEL_ERROR_INVALID_ARGUMENT,
            "shape (" + dims + ") of " + std::to_string(dtype.itemsize) + "-byte elements is more than 2^63 - 1 bytes");
    }
  }
  array->strides = c_strides(shape, dtype.itemsize);
  array->shape = std::move(shape);
  if (bytes == 0)
    array->empty_data = g_empty_storage;
  else
    array->buffer = create_buffer(device, bytes);
  return array;
}

std::shared_ptr<Buffer> import_host(const Device& device, void* data, uint64_t size, bool readonly,
                                    accel_release_callback_t release, void* user, bool allow_unsupported) {
  return import_memory(device, ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER, reinterpret_cast<uint64_t>(data), size,
                       readonly, release, user, allow_unsupported);
}

std::shared_ptr<Buffer> import_memory(const Device& device, accel_external_memory_type_t type, uint64_t handle,
                                      uint64_t size, bool readonly, accel_release_callback_t release, void* user,
                                      bool allow_unsupported) {
  auto desc = accel::detail::sized<accel_buffer_import_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC);
  desc.type = type;
  desc.handle = handle;
  desc.size = size;
  desc.flags = readonly ? ACCEL_IMPORT_FLAG_READ_ONLY : 0;
  desc.release = release;
  desc.release_user_data = user;
  accel_buffer_t buffer = nullptr;
  accel_status_t status = accel_buffer_import(device.handle, &desc, &buffer);
  if (status == ACCEL_ERROR_UNSUPPORTED || status == ACCEL_ERROR_UNIMPLEMENTED) {
    if (allow_unsupported) return nullptr;
    const char* why = accel_last_error();
    raise(ACCEL_ERROR_UNSUPPORTED, "device " + std::to_string(device.index) +
                                       " cannot use this memory in place (pass copy=True or copy=None to copy it): " +
                                       (why != nullptr ? why : ""));
  }
  check(status);
  return std::make_shared<Buffer>(device.inst, buffer, size);
}

void copy_from_host(const Array& dst, const void* span_lo) {
  if (!dst.buffer) return;
  dst.buffer->wait_pending();
  auto [lo, hi] = dst.extent();
  accel_stream_t stream = dst.device.inst->internal_stream(dst.device.handle);
  check(accel_stream_copy_host_to_buffer(stream, span_lo, dst.buffer->handle, dst.offset + lo, hi - lo));
  synchronize(stream);
}

void copy_to_host(const Array& a, void* span_lo) {
  auto [lo, hi] = a.extent();
  if (!a.buffer || hi == lo) return;
  a.buffer->wait_pending();
  accel_stream_t stream = a.device.inst->internal_stream(a.device.handle);
  check(accel_stream_copy_buffer_to_host(stream, a.buffer->handle, a.offset + lo, span_lo, hi - lo));
  synchronize(stream);
}

ArrayPtr copy_to_device(const Array& a, const Device& device) {
  auto out = std::make_shared<Array>();
  out->device = device;
  out->dtype = a.dtype;
  out->shape = a.shape;
  out->strides = a.strides;
  auto [lo, hi] = a.extent();
  if (!a.buffer || hi == lo) {
    out->empty_data = g_empty_storage;
    return out;
  }
  out->buffer = create_buffer(device, hi - lo);
  out->offset = -lo;
  std::string staging(static_cast<size_t>(hi - lo), '\0');
  copy_to_host(a, staging.data());
  copy_from_host(*out, staging.data());
  return out;
}

namespace {
// The array's bytes [extent) copied to host memory, and where element 0 is in them.
py::tuple copy_span(const Array& a) {
  auto [lo, hi] = a.extent();
  if (!a.buffer || hi == lo) return py::make_tuple(py::bytearray(nullptr, 0), 0);
  std::string staging(static_cast<size_t>(hi - lo), '\0');
  copy_to_host(a, staging.data());
  return py::make_tuple(py::bytearray(staging), -lo);
}

// Writes `span` (the bytes of a's extent, as _copy_span gave them) back.
void write_span(const Array& a, py::bytes span) {
  if (a.readonly) raise(ACCEL_ERROR_INVALID_ARGUMENT, "the array is read-only");
  auto [lo, hi] = a.extent();
  if (!a.buffer || hi == lo) return;
  std::string_view bytes(span);
  if (bytes.size() != static_cast<size_t>(hi - lo))
    raise(ACCEL_ERROR_INVALID_ARGUMENT,
          "_write_span: " + std::to_string(bytes.size()) + " bytes for a span of " + std::to_string(hi - lo));
  copy_from_host(a, bytes.data());
}

void release_py_buffer(void* user) {
  auto* view = static_cast<Py_buffer*>(user);
  if (python_alive()) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyBuffer_Release(view);
    PyGILState_Release(state);
  }
  delete view;
}

// numpy (or any buffer-protocol object) -> Array; zero-copy unless `copy`.
ArrayPtr from_buffer(py::object obj, py::object device_obj, std::optional<bool> copy) {
  Device device = resolve_device(device_obj);
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_RECORDS_RO) != 0) throw py::error_already_set();
  struct Guard {
    std::unique_ptr<Py_buffer>& v;
    ~Guard() {
      if (v) PyBuffer_Release(v.get());
    }
  } guard{view};
  const DType* dtype = dtype_from_format(view->format != nullptr ? view->format : "B");
  if (dtype == nullptr || view->itemsize != dtype->itemsize)
    raise(ACCEL_ERROR_INVALID_ARGUMENT, std::string("unsupported buffer format '") +
                                            (view->format ? view->format : "") + "' (supported: " + dtype_names() +
                                            ")");
  auto array = std::make_shared<Array>();
  array->device = device;
  array->dtype = dtype;
  array->shape.assign(view->shape, view->shape + view->ndim);
  if (view->strides != nullptr)
    array->strides.assign(view->strides, view->strides + view->ndim);
  else
    array->strides = c_strides(array->shape, dtype->itemsize);
  auto [lo, hi] = array->extent();
  char* element0 = static_cast<char*>(view->buf);
  if (hi == lo) {  // zero-size: nothing to import
    array->empty_data = element0 != nullptr ? element0 : reinterpret_cast<char*>(g_empty_storage);
    array->owner = obj;
    array->readonly = view->readonly != 0;
    return array;
  }
  if (copy.value_or(false)) {
    if (PyBuffer_IsContiguous(view.get(), 'C') != 0) {
      auto copied = make_empty(device, array->shape, *dtype);
      copy_from_host(*copied, element0);
      return copied;
    }
    // Non-contiguous source: copy its whole span and keep its strides.
    array->buffer = create_buffer(device, hi - lo);
    array->offset = -lo;
    copy_from_host(*array, element0 + lo);
    return array;
  }
  bool readonly = view->readonly != 0;
  Py_buffer* raw = view.get();
  auto buffer =
      import_host(device, element0 + lo, hi - lo, readonly, release_py_buffer, raw, copy.has_value() == false);
  if (!buffer) {  // the device cannot use host memory in place: copy
    PyBuffer_Release(view.get());
    view.reset();
    return from_buffer(obj, device_obj, true);
  }
  view.release();  // release_py_buffer owns it now
  array->buffer = std::move(buffer);
  array->offset = -lo;
  array->readonly = readonly;
  return array;
}

py::dict array_interface(const Array& a) {
  if (*a.dtype->format == '\0')
    throw py::attribute_error(std::string("__array_interface__: no typestr says ") + a.dtype->name +
                              " (numpy.asarray(a) uses ml_dtypes)");
  void* data = a.element0_host(false);
  if (data == nullptr)
    throw py::attribute_error("__array_interface__: the array's memory is not host-visible (use copy_to_host())");
  if (a.buffer) a.buffer->interface_taken = true;
  py::dict d;
  py::tuple shape(a.shape.size());
  for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
  d["shape"] = shape;
  d["typestr"] = typestr(*a.dtype);
  d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(data), a.readonly);
  if (a.c_contiguous()) {
    d["strides"] = py::none();
  } else {
    py::tuple strides(a.strides.size());
    for (size_t i = 0; i < a.strides.size(); ++i) strides[i] = a.strides[i];
    d["strides"] = strides;
  }
  d["version"] = 3;
  return d;
}

// Basic indexing (ints, slices, Ellipsis, None): a view of the same buffer.
ArrayPtr index_array(const Array& a, py::handle key) {
  py::tuple items = py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  size_t consumed = 0;  // dimensions the key names (ints and slices)
  bool ellipsis = false;
  for (auto item : items) {
    if (item.is(py::ellipsis())) {
      if (ellipsis) throw py::index_error("an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (!item.is_none()) {
      ++consumed;
    }
  }
  if (consumed > a.shape.size())
    throw py::index_error("too many indices: the array is " + std::to_string(a.shape.size()) + "-dimensional, but " +
                          std::to_string(consumed) + " were indexed");
  auto out = std::make_shared<Array>(a);
  out->shape.clear();
  out->strides.clear();
  int64_t offset = static_cast<int64_t>(a.offset);
  size_t dim = 0;
  for (auto item : items) {
    if (item.is(py::ellipsis())) {
      for (size_t n = a.shape.size() - consumed; n > 0; --n, ++dim) {
        out->shape.push_back(a.shape[dim]);
        out->strides.push_back(a.strides[dim]);
      }
    } else if (item.is_none()) {
      out->shape.push_back(1);
      out->strides.push_back(0);
    } else if (PySlice_Check(item.ptr()) != 0) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) != 0) throw py::error_already_set();
      Py_ssize_t length = PySlice_AdjustIndices(static_cast<Py_ssize_t>(a.shape[dim]), &start, &stop, step);
      if (length > 0) offset += start * a.strides[dim];
      out->shape.push_back(length);
      out->strides.push_back(a.strides[dim] * step);
      ++dim;
    } else if (PyIndex_Check(item.ptr()) != 0) {
      PyObject* index = PyNumber_Index(item.ptr());
      if (index == nullptr) throw py::error_already_set();
      int64_t i = py::reinterpret_steal<py::int_>(index).cast<int64_t>();
      int64_t n = a.shape[dim];
      if (i < -n || i >= n)
        throw py::index_error("index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(dim) +
                              " with size " + std::to_string(n));
      offset += (i < 0 ? i + n : i) * a.strides[dim];
      ++dim;
    } else {
      throw py::index_error("accel.Array takes basic indices only (ints, slices, ..., None), not " +
                            py::str(py::type::handle_of(item)).cast<std::string>());
    }
  }
  for (; dim < a.shape.size(); ++dim) {
    out->shape.push_back(a.shape[dim]);
    out->strides.push_back(a.strides[dim]);
  }
  out->offset = static_cast<uint64_t>(offset);
  if (!a.buffer && out->size() != 0) throw py::index_error("indexing a zero-size array");
  return out;
}

// ---- streams and events -----------------------------------------------------

// The innermost `with accel.Stream()` blocks of this thread, innermost last.
thread_local std::vector<StreamPtr> t_stream_stack;
}  // namespace

void Stream::close() {
  if (closed) return;
  closed = true;
  NoGil nogil;
  accel_stream_destroy(handle);
}

accel_stream_t Stream::live() const {
  if (closed) raise(ACCEL_ERROR_INVALID_HANDLE, "the accel.Stream was closed");
  return handle;
}

uint64_t timeout_ns(std::optional<double> seconds, const char* what) {
  if (!seconds || std::isinf(*seconds) || *seconds >= 1e9) return ACCEL_TIMEOUT_INFINITE;
  if (std::isnan(*seconds)) throw py::value_error(std::string(what) + ": timeout is NaN, not a number of seconds");
  return *seconds <= 0 ? 0 : static_cast<uint64_t>(*seconds * 1e9);
}

void Stream::synchronize(std::optional<double> timeout_s) {
  const uint64_t ns = timeout_ns(timeout_s, "Stream.synchronize");
  accel_stream_t h = live();
  accel_status_t status;
  {
    NoGil nogil;
    status = accel_stream_synchronize(h, ns);
  }
  check(status);
}

bool Stream::query() { return check(accel_stream_query(live())) == ACCEL_SUCCESS; }

void Event::close() {
  if (closed) return;
  closed = true;
  accel_event_destroy(handle);
}

bool Event::query() { return check(accel_event_query(handle)) == ACCEL_SUCCESS; }

void Event::synchronize(std::optional<double> timeout_s) {
  const uint64_t ns = timeout_ns(timeout_s, "Event.synchronize");
  accel_status_t status;
  {
    NoGil nogil;
    status = accel_event_synchronize(handle, ns);
  }
  check(status);
}

StreamPtr current_stream(const Device& device) {
  for (auto it = t_stream_stack.rbegin(); it != t_stream_stack.rend(); ++it)
    if ((*it)->device.handle == device.handle && !(*it)->closed) return *it;
  return nullptr;
}

namespace {
std::shared_ptr<Event> make_event(py::object device_obj, bool timing) {
  Device device = resolve_device(device_obj);
  auto desc = accel::detail::sized<accel_event_desc_t>(ACCEL_STRUCTURE_TYPE_EVENT_DESC);
  desc.flags = timing ? ACCEL_EVENT_FLAG_TIMING : 0;
  auto event = std::make_shared<Event>();
  event->inst = device.inst;
  event->device = device;
  check(accel_event_create(device.handle, &desc, &event->handle));
  return event;
}
}  // namespace

namespace {
// The buffer protocol of accel.Array, written against CPython's slots rather
// than pybind11's def_buffer: a refusal must raise BufferError, which a
// def_buffer callback cannot do.
struct BufferExport {
  std::vector<Py_ssize_t> shape, strides;
  std::shared_ptr<Buffer> buffer;  // its `exports` counts this one until the release
};

int array_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  view->obj = nullptr;
  try {
    const Array& a = py::handle(obj).cast<const Array&>();
    auto refuse = [](const std::string& why) {
      PyErr_SetString(PyExc_BufferError, ("accel.Array: " + why).c_str());
      return -1;
    };
    if (*a.dtype->format == '\0')
      return refuse(std::string("the buffer protocol has no format for ") + a.dtype->name +
                    " (numpy.asarray(a) gives it through ml_dtypes)");
    if ((flags & PyBUF_WRITABLE) == PyBUF_WRITABLE && a.readonly) return refuse("the array is read-only");
    void* data = a.element0_host(false);
    if (data == nullptr) return refuse("the array's memory is not host-visible (use copy_to_host())");
    bool c_contiguous = a.c_contiguous();
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_contiguous)
      return refuse("the array is not C-contiguous and the consumer did not ask for strides");
    // Fortran order: the first dimension varies fastest (dimensions of one element have any stride; an empty array
    // is both orders). A 1-D strided view is neither (it passed as Fortran- and any-contiguous).
    const bool f_contiguous = [&] {
      if (std::find(a.shape.begin(), a.shape.end(), 0) != a.shape.end()) return true;
      int64_t expected = a.dtype->itemsize;
      for (size_t i = 0; i < a.shape.size(); ++i) {
        if (a.shape[i] != 1 && a.strides[i] != expected) return false;
        expected *= a.shape[i];
      }
      return true;
    }();
    if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contiguous && !f_contiguous)
      return refuse("the array is not contiguous");
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_contiguous)
      return refuse("the array is not C-contiguous");
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_contiguous)
      return refuse("the array is not Fortran-contiguous");
    auto* exported = new BufferExport{{a.shape.begin(), a.shape.end()}, {a.strides.begin(), a.strides.end()}, a.buffer};
    if (a.buffer) ++a.buffer->exports;
    view->buf = data;
    view->len = static_cast<Py_ssize_t>(a.size() * a.dtype->itemsize);
    view->readonly = a.readonly ? 1 : 0;
    view->itemsize = a.dtype->itemsize;
    view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? const_cast<char*>(a.dtype->format) : nullptr;
    view->ndim = static_cast<int>(a.shape.size());
    view->shape = (flags & PyBUF_ND) == PyBUF_ND ? exported->shape.data() : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? exported->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = exported;
    view->obj = obj;
    Py_INCREF(obj);
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const AccelException& e) {
    PyErr_SetString(PyExc_BufferError, ("accel.Array: " + e.message).c_str());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  return -1;
}

void array_releasebuffer(PyObject*, Py_buffer* view) {
  auto* exported = static_cast<BufferExport*>(view->internal);
  if (exported->buffer && exported->buffer->exports > 0) --exported->buffer->exports;
  delete exported;
}

void install_buffer_protocol(py::class_<Array, ArrayPtr>& cls) {
  auto* heap = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
  heap->as_buffer.bf_getbuffer = array_getbuffer;
  heap->as_buffer.bf_releasebuffer = array_releasebuffer;
  heap->ht_type.tp_as_buffer = &heap->as_buffer;
}
}  // namespace

}  // namespace accelpy

using namespace accelpy;

PYBIND11_MODULE(_accel, m) {
  m.doc() = "accel._accel: the Accel C ABI for Python (use the accel package, not this module)";

  py::dict error_dict;
  error_dict["status"] = py::none();
  error_dict["status_name"] = py::none();
  g_accel_error = PyErr_NewExceptionWithDoc(
      "accel.AccelError",
      "An Accel call failed. str(e) is Accel's message; .status is the accel_status_t value (int, negative) "
      "and .status_name its name (\"ACCEL_ERROR_NOT_FOUND\").",
      PyExc_RuntimeError, error_dict.ptr());
  if (g_accel_error == nullptr) throw py::error_already_set();
  m.add_object("AccelError", py::handle(g_accel_error));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const AccelException& e) {
      py::object cls = py::reinterpret_borrow<py::object>(g_accel_error);
      py::object exc = cls(e.message);
      exc.attr("status") = static_cast<int>(e.status);
      exc.attr("status_name") = accel_status_name(e.status);
      PyErr_SetObject(g_accel_error, exc.ptr());
    }
  });

  // Whether this process has made its instance yet: ACCEL_* variables are read then, so accel.ray's worker setup
  // must run before it.
  m.def("_has_instance", [] {
    std::lock_guard lock(g_instance_mutex);
    return static_cast<bool>(*g_instance);
  });
  m.def("status_name", [](int status) { return std::string(accel_status_name(static_cast<accel_status_t>(status))); });
  m.def("version", [] {
    auto info = accel::detail::sized<accel_version_info_t>(ACCEL_STRUCTURE_TYPE_VERSION_INFO);
    check(accel_version_get(&info));
    py::dict d;
    auto ver = [](uint32_t v) { return py::make_tuple(v >> 22, (v >> 12) & 0x3ff, v & 0xfff); };
    d["library_version"] = ver(info.library_version);
    d["abi_version"] = ver(info.abi_version);
    d["build"] = info.build != nullptr ? info.build : "";
    return d;
  });
  m.def("dtype_name", [](py::object d) { return std::string(dtype_from(d).name); });
  m.def("format_dtype", [](const std::string& format) -> py::object {
    const DType* d = dtype_from_format(format);
    return d ? py::str(d->name) : py::object(py::none());
  });

  auto device_class = py::class_<Device>(
      m, "Device", "One visible device: a backend's access path to a physical device (accel.devices()).");
  device_class.def_property_readonly("index", [](const Device& d) { return d.index; })
      .def_property_readonly("name", [](const Device& d) { return accel::info::FixedString(capabilities(d).name); })
      .def_property_readonly("kind", [](const Device& d) { return kind_name(capabilities(d).kind); })
      .def_property_readonly("vendor", [](const Device& d) { return accel::info::FixedString(capabilities(d).vendor); })
      .def_property_readonly("backend",
                             [](const Device& d) { return accel::info::FixedString(capabilities(d).backend_name); })
      .def_property_readonly("stable_id",
                             [](const Device& d) { return accel::info::FixedString(capabilities(d).stable_id); })
      .def_property_readonly("simulated",
                             [](const Device& d) { return (capabilities(d).flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0; })
      .def_property_readonly("capabilities", &capability_dict)
      .def_property_readonly("kernel_formats",
                             [](const Device& d) { return kernel_format_names(capabilities(d).kernel_formats); })
      .def_property_readonly("features",
                             [](const Device& d) {
                               // core/names' names as identifiers: "event-timing" -> "event_timing"
                               auto names =
                                   accel::info::FlagNames(accel::info::DeviceFeatureNames(), capabilities(d).features);
                               for (auto& n : names) std::replace(n.begin(), n.end(), '-', '_');
                               return names;
                             })
      .def("memory_info",
           [](const Device& d) {
             uint64_t free = 0, total = 0;
             check(accel_device_get_memory_info(d.handle, &free, &total));
             return py::make_tuple(free, total);
           })
      .def_property_readonly("physical_device",
                             [](const Device& d) {
                               PhysicalDevice p{d.inst, nullptr};
                               check(accel_device_get_physical_device(d.handle, &p.handle));
                               return p;
                             })
      .def("__eq__", [](const Device& a,
                        py::object b) { return py::isinstance<Device>(b) && a.handle == b.cast<Device>().handle; })
      .def("__hash__", [](const Device& d) { return std::hash<void*>()(d.handle); })
      .def("__repr__", [](const Device& d) {
        auto caps = capabilities(d);
        return "<accel.Device " + std::to_string(d.index) + " '" + accel::info::FixedString(caps.name) + "' (" +
               accel::info::FixedString(caps.backend_name) + ", " + kind_name(caps.kind) + ")>";
      });

  py::class_<PhysicalDevice>(m, "PhysicalDevice",
                             "A piece of hardware, counted once, with its access paths (.devices).")
      .def_property_readonly("properties",
                             [](const PhysicalDevice& p) {
                               auto props = physical_properties(p);
                               py::dict d;
                               d["index"] = props.index;
                               d["kind"] = kind_name(props.kind);
                               d["name"] = accel::info::FixedString(props.name);
                               d["stable_id"] = accel::info::FixedString(props.stable_id);
                               d["pci_bus_id"] = accel::info::FixedString(props.pci_bus_id);
                               d["flags"] = props.flags;
                               d["simulated"] = (props.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0;
                               d["memory_total"] = props.memory_total;
                               d["compute_units"] = props.compute_units;
                               d["device_count"] = props.device_count;
                               d["numa_node"] = props.numa_node;
                               return d;
                             })
      .def_property_readonly(
          "name", [](const PhysicalDevice& p) { return accel::info::FixedString(physical_properties(p).name); })
      .def_property_readonly("devices",
                             [](const PhysicalDevice& p) {
                               uint32_t count = 0;
                               check(accel_physical_device_enumerate_devices(p.handle, &count, nullptr));
                               std::vector<accel_device_t> handles(count);
                               check(accel_physical_device_enumerate_devices(p.handle, &count, handles.data()));
                               std::vector<Device> out;
                               for (auto h : handles) out.push_back(device_of(p.inst, h));
                               return out;
                             })
      .def(
          "matches",
          [](const PhysicalDevice& p, const std::string& selector) {
            uint32_t matches = 0;
            check(accel_physical_device_matches(p.handle, selector.c_str(), &matches));
            return matches != 0;
          },
          py::arg("selector"), "Whether this device matches a capability selector (docs/selectors.md).")
      .def(
          "explain",
          [](const PhysicalDevice& p, const std::string& selector) {
            size_t size = 0;
            check(accel_physical_device_explain(p.handle, selector.c_str(), 0, nullptr, &size));
            std::string text(size, '\0');
            check(accel_physical_device_explain(p.handle, selector.c_str(), text.size(), text.data(), nullptr));
            text.resize(size - 1);
            return text;
          },
          py::arg("selector"), "Why this device does not match a selector; '' when it does.")
      .def("__eq__",
           [](const PhysicalDevice& a, py::object b) {
             return py::isinstance<PhysicalDevice>(b) && a.handle == b.cast<PhysicalDevice>().handle;
           })
      .def("__hash__", [](const PhysicalDevice& p) { return std::hash<void*>()(p.handle); })
      .def("__repr__", [](const PhysicalDevice& p) {
        return "<accel.PhysicalDevice '" + accel::info::FixedString(physical_properties(p).name) + "'>";
      });

  m.def("devices", &all_devices,
        "The visible devices in the stable order (ACCEL_BACKENDS, ACCEL_VISIBLE_DEVICES apply).");
  m.def(
      "device", [](py::object d) { return resolve_device(d); }, py::arg("device") = py::none(),
      "One device by index or stable id (None: the first); AccelError (NOT_FOUND) when there is none.");
  m.def("physical_devices", &all_physical_devices, "The physical devices, each counted once.");

  auto array = py::class_<Array, ArrayPtr>(
      m, "Array",
      "An n-d array in an accel buffer (strides in bytes); views by basic indexing; numpy and DLPack interop.");
  install_buffer_protocol(array);
  array.def_property_readonly("shape", [](const Array& a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("strides", [](const Array& a) { return py::tuple(py::cast(a.strides)); })
      .def_property_readonly("dtype", [](const Array& a) { return std::string(a.dtype->name); })
      .def_property_readonly("ndim", [](const Array& a) { return a.shape.size(); })
      .def_property_readonly("size", &Array::size)
      .def_property_readonly("itemsize", [](const Array& a) { return a.dtype->itemsize; })
      .def_property_readonly("nbytes", [](const Array& a) { return a.size() * a.dtype->itemsize; })
      .def_property_readonly("device", [](const Array& a) { return a.device; })
      .def_property_readonly("readonly", [](const Array& a) { return a.readonly; })
      .def_property_readonly("is_c_contiguous", &Array::c_contiguous)
      .def_property_readonly("host_visible", [](const Array& a) { return a.element0_host(false) != nullptr; })
      .def_property_readonly("data_ptr",
                             [](const Array& a) { return reinterpret_cast<uintptr_t>(a.element0_host(true)); })
      .def_property_readonly("__array_interface__", &array_interface)
      .def("_copy_span", &copy_span)
      .def("_write_span", &write_span)
      .def(
          "to", [](const Array& a, py::object device) { return copy_to_device(a, resolve_device(device)); },
          py::arg("device"))
      .def("copy", [](const Array& a) { return copy_to_device(a, a.device); })
      .def("_view_as",
           [](const Array& a, py::object dtype) {
             const DType& d = dtype_from(dtype);
             if (d.itemsize != a.dtype->itemsize)
               raise(ACCEL_ERROR_INVALID_ARGUMENT,
                     std::string("cannot view ") + a.dtype->name + " as " + d.name + ": the item sizes differ");
             auto out = std::make_shared<Array>(a);
             out->dtype = &d;
             return out;
           })
      .def("synchronize",
           [](const Array& a) {
             if (a.buffer) a.buffer->wait_pending();
           })
      .def("free",
           [](Array& a) {
             if (a.buffer) a.buffer->destroy();
           })
      .def("__getitem__", &index_array)
      .def_property_readonly("T",
                             [](const Array& a) {
                               auto out = std::make_shared<Array>(a);
                               std::reverse(out->shape.begin(), out->shape.end());
                               std::reverse(out->strides.begin(), out->strides.end());
                               return out;
                             })
      .def("__len__",
           [](const Array& a) {
             if (a.shape.empty()) throw py::type_error("len() of a 0-d accel.Array");
             return a.shape[0];
           })
      .def("__repr__", [](const Array& a) {
        std::string shape;
        for (auto s : a.shape) shape += std::to_string(s) + ",";
        return "<accel.Array shape=(" + shape + ") dtype=" + a.dtype->name +
               " device=" + std::to_string(a.device.index) + (a.readonly ? " readonly" : "") + ">";
      });

  m.def("empty", [](py::object shape, py::object dtype, py::object device) {
    return make_empty(resolve_device(device), shape_from(shape), dtype_from(dtype));
  });
  m.def("zeros", [](py::object shape, py::object dtype, py::object device) {
    auto a = make_empty(resolve_device(device), shape_from(shape), dtype_from(dtype));
    if (a->buffer) {
      accel_stream_t stream = a->device.inst->internal_stream(a->device.handle);
      const uint8_t zero = 0;
      check(accel_stream_fill_buffer(stream, a->buffer->handle, 0, a->buffer->size, &zero, 1));
      synchronize(stream);
    }
    return a;
  });
  m.def("from_buffer", &from_buffer, py::arg("obj"), py::arg("device") = py::none(), py::arg("copy") = py::none());

  auto stream = py::class_<Stream, StreamPtr>(
      m, "Stream", "An in-order stream of one device; `with stream:` makes it current and synchronizes it at the end.");
  stream
      .def(py::init([](py::object device_obj) {
             Device device = resolve_device(device_obj);
             auto s = std::make_shared<Stream>();
             s->inst = device.inst;
             s->device = device;
             check(accel_stream_create(device.handle, nullptr, &s->handle));
             return s;
           }),
           py::arg("device") = py::none())
      .def_property_readonly("device", [](const Stream& s) { return s.device; })
      .def("synchronize", &Stream::synchronize, py::arg("timeout") = py::none())
      .def("query", &Stream::query)
      .def(
          "record",
          [](Stream& s, std::shared_ptr<Event> event) {
            if (!event) event = make_event(py::cast(s.device), false);
            check(accel_stream_record_event(s.live(), event->handle));
            return event;
          },
          py::arg("event") = py::none())
      .def("wait", [](Stream& s, Event& e) { check(accel_stream_wait_event(s.live(), e.handle)); })
      .def("close", &Stream::close)
      .def_property_readonly("closed", [](const Stream& s) { return s.closed; })
      .def("__enter__",
           [](StreamPtr s) {
             s->live();
             t_stream_stack.push_back(s);
             return s;
           })
      .def("__exit__",
           [](StreamPtr s, py::args) {
             auto it = std::find(t_stream_stack.rbegin(), t_stream_stack.rend(), s);
             if (it != t_stream_stack.rend()) t_stream_stack.erase(std::next(it).base());
             if (!s->closed) s->synchronize(std::nullopt);
             return false;
           })
      .def("__repr__", [](const Stream& s) {
        return "<accel.Stream device=" + std::to_string(s.device.index) + (s.closed ? " closed" : "") + ">";
      });
  m.def(
      "current_stream",
      [](py::object device) -> py::object {
        auto s = current_stream(resolve_device(device));
        return s ? py::cast(s) : py::none();
      },
      py::arg("device") = py::none(),
      "The stream of the innermost `with accel.Stream()` block on this thread for `device`, or None.");

  py::class_<Event, std::shared_ptr<Event>>(
      m, "Event", "A point in a stream (Stream.record); query, synchronize, elapsed_time with timing=True.")
      .def(py::init(&make_event), py::arg("device") = py::none(), py::arg("timing") = false)
      .def_property_readonly("device", [](const Event& e) { return e.device; })
      .def("query", &Event::query)
      .def("synchronize", &Event::synchronize, py::arg("timeout") = py::none())
      .def("elapsed_time",
           [](Event& start, Event& end) {
             uint64_t ns = 0;
             check(accel_event_elapsed_time(start.handle, end.handle, &ns));
             return ns;
           })
      .def("close", &Event::close)
      .def("__enter__", [](std::shared_ptr<Event> e) { return e; })
      .def("__exit__", [](Event& e, py::args) {
        e.close();
        return false;
      });

  init_dlpack(m, array);
  init_kernels(m, stream);
  init_topology(m, device_class);
  init_runtime(m);
}
