// Shared declarations of the accel._accel extension (python/README.md).
#pragma once

#include <pybind11/pybind11.h>

#include <accel/accel.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace accelpy {

namespace py = pybind11;

// An Accel failure; the module's translator raises it as accel.AccelError
// with `.status` and `.status_name`.
struct AccelException {
  accel_status_t status;
  std::string message;
};

[[noreturn]] void raise(accel_status_t status, std::string message);
// Throws AccelException with the calling thread's C message for a negative status.
accel_status_t check(accel_status_t status);

// True while Python may still be called (not finalizing).
bool python_alive();

// Releases the GIL for its scope when this thread holds it, so that release
// callbacks running on a stream worker can take it.
class NoGil {
 public:
  NoGil() {
    if (PyGILState_Check() != 0) state_ = PyEval_SaveThread();
  }
  ~NoGil() {
    if (state_ != nullptr) PyEval_RestoreThread(state_);
  }
  NoGil(const NoGil&) = delete;
  NoGil& operator=(const NoGil&) = delete;

 private:
  PyThreadState* state_ = nullptr;
};

// One process-wide accel instance, created on first use (ACCEL_* variables
// are read then), destroyed when the last object using it is gone.
class Instance {
 public:
  explicit Instance(accel_instance_t h) : handle(h) {}
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // The stream the package's own synchronous operations use on `device`.
  accel_stream_t internal_stream(accel_device_t device);

  accel_instance_t handle;

 private:
  std::mutex mutex_;
  std::unordered_map<accel_device_t, accel_stream_t> streams_;
};

std::shared_ptr<Instance> instance();

struct Device {
  std::shared_ptr<Instance> inst;
  accel_device_t handle = nullptr;
  uint32_t index = 0;
};

std::vector<Device> all_devices();
// None (the first device), an index, a stable id or a Device.
Device resolve_device(py::handle obj);

struct DType {
  const char* name;
  char kind;  // b i u f c
  uint8_t itemsize;
  uint8_t dl_code;
  const char* format;  // buffer-protocol format
};

const DType& dtype_from(py::handle obj);
const DType* dtype_from_format(const std::string& format);
const DType* dtype_from_dlpack(uint8_t code, uint8_t bits);
std::string typestr(const DType& dtype);

// One accel buffer; destroyed with the last array or export using it.
class Buffer {
 public:
  Buffer(std::shared_ptr<Instance> i, accel_buffer_t h, uint64_t bytes) : inst(std::move(i)), handle(h), size(bytes) {}
  ~Buffer() { destroy(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void destroy();
  // Host address of byte 0; nullptr when the memory has none. Raises for a
  // stale (freed) handle.
  void* host_address(bool raise_unsupported) const;

  std::shared_ptr<Instance> inst;
  accel_buffer_t handle;
  uint64_t size;
  bool destroyed = false;
};

// An n-d view over (part of) a buffer: element [0,...,0] sits at `offset`
// bytes into the buffer, strides are in bytes (numpy's convention).
struct Array {
  std::shared_ptr<Buffer> buffer;  // null for zero-size arrays
  Device device;
  uint64_t offset = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  const DType* dtype = nullptr;
  bool readonly = false;
  void* empty_data = nullptr;  // zero-size arrays: the pointer exports report
  py::object owner;            // zero-size arrays: keeps the source alive

  int64_t size() const;
  // [lo, hi) in bytes relative to element 0, covering every element.
  std::pair<int64_t, int64_t> extent() const;
  bool c_contiguous() const;
  void* element0_host(bool raise_unsupported) const;  // nullptr: not host-visible
};

using ArrayPtr = std::shared_ptr<Array>;

std::vector<int64_t> c_strides(const std::vector<int64_t>& shape, int64_t itemsize);
ArrayPtr make_empty(const Device& device, std::vector<int64_t> shape, const DType& dtype);
// Imports [data, data+size) as a host pointer; `release(user)` runs once when
// Accel is done with it. Returns nullptr (release not called) when the device
// cannot import host memory and `allow_unsupported`.
std::shared_ptr<Buffer> import_host(const Device& device, void* data, uint64_t size, bool readonly,
                                    accel_release_callback_t release, void* user, bool allow_unsupported);
void copy_from_host(const Array& dst, const void* span_lo);

void init_dlpack(py::module_& m, py::class_<Array, ArrayPtr>& array);

}  // namespace accelpy
