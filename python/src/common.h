// Shared declarations of the accel._accel extension (python/README.md).
#pragma once

#include <pybind11/pybind11.h>

#include <accel/accel.h>
#include <accel/accel.hpp>

#include <cstdint>
#include <functional>
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

// A Python timeout in seconds as the C API's nanoseconds: None, infinity and values from 1e9 s on wait forever, a
// negative one polls (0); NaN raises ValueError naming `what` (a cast of NaN, a negative or a huge double to uint64_t
// is undefined: -1 could wait forever).
uint64_t timeout_ns(std::optional<double> seconds, const char* what);

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

// What the package keeps of each device (the instance's device list is fixed
// for its lifetime): enough to resolve and describe it without queries.
struct DeviceInfo {
  accel_device_t handle = nullptr;
  std::string stable_id;
  int32_t dl_type = 0, dl_id = 0;  // dlpack_device_of
};

// One process-wide accel instance, created on first use (ACCEL_* variables
// are read then), destroyed when the last object using it is gone.
class Instance {
 public:
  explicit Instance(accel_instance_t h);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // The stream the package's own synchronous operations use on `device`.
  accel_stream_t internal_stream(accel_device_t device);
  // Retires `stream` if it is one of those (synchronize does, once it raised the stream's error): the next operation
  // on its device gets a new stream, while work other threads queued on the old one still meets the error there
  // (clearing it would let their skipped work look done). Retired streams go with the instance.
  void retire_internal(accel_stream_t stream);

  accel_instance_t handle;
  std::vector<DeviceInfo> devices;  // in accel_instance_enumerate_devices order

 private:
  std::mutex mutex_;
  std::unordered_map<accel_device_t, accel_stream_t> streams_;
  std::vector<accel_stream_t> retired_;  // internal streams that held an error (retire_internal)
};

std::shared_ptr<Instance> instance();

struct Device {
  std::shared_ptr<Instance> inst;
  accel_device_t handle = nullptr;
  uint32_t index = 0;
};

std::vector<Device> all_devices();
const DeviceInfo& device_info(const Device& device);
accel_device_capabilities_t device_capabilities(accel_device_t device);
// The names of the ACCEL_KERNEL_FORMAT_* bits set in `formats`, lowest first.
py::list kernel_format_names(uint64_t formats);
// The DLPack (device_type, device_id) of a device with these capabilities at
// `backend_index` in its backend's own list (dlpack.cc).
std::pair<int32_t, int32_t> dlpack_device_for(const accel_device_capabilities_t& caps, int32_t backend_index);
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

// An event recorded after work that used a buffer (a kernel launch on a user
// stream); owned by the buffers it covers.
struct PendingWork {
  std::shared_ptr<Instance> inst;
  accel_event_t event = nullptr;
  PendingWork(std::shared_ptr<Instance> i, accel_event_t e) : inst(std::move(i)), event(e) {}
  ~PendingWork();
  PendingWork(const PendingWork&) = delete;
  PendingWork& operator=(const PendingWork&) = delete;
};

// One accel buffer; destroyed with the last array or export using it. Every
// use of the Python objects holds the GIL, which guards its fields.
class Buffer {
 public:
  Buffer(std::shared_ptr<Instance> i, accel_buffer_t h, uint64_t bytes) : inst(std::move(i)), handle(h), size(bytes) {}
  ~Buffer() { destroy(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void destroy();
  // Host address of byte 0; nullptr when the memory has none. Raises for a
  // stale (freed) handle. Waits for pending stream work first unless told not to.
  void* host_address(bool raise_unsupported, bool wait = true) const;
  // Blocks (without the GIL) until the stream work that used the buffer is
  // done; raises that work's stream error.
  void wait_pending() const;

  std::shared_ptr<Instance> inst;
  accel_buffer_t handle;
  uint64_t size;
  bool destroyed = false;
  // Set for a buffer that is another's (an object view's replica): destroy releases this, not the handle.
  std::shared_ptr<void> keep;
  // Live buffer-protocol and DLPack exports of its memory in place (raw pointers a consumer holds): a runtime whose
  // object store owns the memory refuses to close under them (runtime.cc).
  uint32_t exports = 0;
  // Its address went out through __array_interface__, which has no release: the consumer (a numpy array) holds the
  // array that gave it, so such a buffer counts as exported for as long as it lives.
  bool interface_taken = false;
  mutable std::shared_ptr<PendingWork> pending;  // the last launch that bound it
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
  void* element0_host(bool raise_unsupported, bool wait = true) const;  // nullptr: not host-visible
};

using ArrayPtr = std::shared_ptr<Array>;

std::vector<int64_t> c_strides(const std::vector<int64_t>& shape, int64_t itemsize);
ArrayPtr make_empty(const Device& device, std::vector<int64_t> shape, const DType& dtype);
// Imports [data, data+size) as a host pointer; `release(user)` runs once when
// Accel is done with it. Returns nullptr (release not called) when the device
// cannot import host memory and `allow_unsupported`.
std::shared_ptr<Buffer> import_host(const Device& device, void* data, uint64_t size, bool readonly,
                                    accel_release_callback_t release, void* user, bool allow_unsupported);
// The same for any external memory type (`handle` as accel_buffer_import_desc_t has it).
std::shared_ptr<Buffer> import_memory(const Device& device, accel_external_memory_type_t type, uint64_t handle,
                                      uint64_t size, bool readonly, accel_release_callback_t release, void* user,
                                      bool allow_unsupported);
std::shared_ptr<Buffer> create_buffer(const Device& device, uint64_t size);
// The bytes of dst's extent from host memory at `span_lo`; waits for pending work first.
void copy_from_host(const Array& dst, const void* span_lo);
// The bytes of a's extent into host memory at `span_lo` (extent().second -
// extent().first bytes); waits for pending work first.
void copy_to_host(const Array& a, void* span_lo);
// A same-layout copy of `a` on `device` (through host memory).
ArrayPtr copy_to_device(const Array& a, const Device& device);

// Synchronizes `stream` without holding the GIL; raises its error.
void synchronize(accel_stream_t stream);

struct Stream {
  std::shared_ptr<Instance> inst;
  Device device;
  accel_stream_t handle = nullptr;
  bool closed = false;
  ~Stream() { close(); }
  void close();
  void synchronize(std::optional<double> timeout_s);
  bool query();
  // Raises for a closed stream (its handle is stale).
  accel_stream_t live() const;
};

struct Event {
  std::shared_ptr<Instance> inst;
  Device device;
  accel_event_t handle = nullptr;
  bool closed = false;
  ~Event() { close(); }
  void close();
  bool query();
  void synchronize(std::optional<double> timeout_s);
};

using StreamPtr = std::shared_ptr<Stream>;

// The stream of the innermost `with accel.Stream(...)` block on this thread
// for `device`; null when there is none.
StreamPtr current_stream(const Device& device);

// The DLPack device (type, id) of a device: kDLCPU for the host backend,
// kDLExtDev for simulated devices, the vendor's type otherwise (docs in
// python/README.md).
std::pair<int32_t, int32_t> dlpack_device_of(const Device& device);

void init_dlpack(py::module_& m, py::class_<Array, ArrayPtr>& array);
// A DLPack capsule (legacy, or versioned when max_version >= (1, 0)) over C-contiguous host memory at `data`,
// `owner` kept alive until the consumer's deleter runs; `readonly` sets DLPACK_FLAG_BITMASK_READ_ONLY (versioned
// capsules carry flags; read-only memory goes to versioned consumers only). The arguments of __dlpack__ as given.
// `on_delete`, when set, runs with the GIL once the consumer lets go of the tensor (not when the export fails).
py::object export_host_memory(void* data, const std::vector<int64_t>& shape, const DType& dtype, bool readonly,
                              py::object owner, py::object stream, py::object max_version, py::object dl_device,
                              py::object copy, std::function<void()> on_delete = {});
void init_kernels(py::module_& m, py::class_<Stream, StreamPtr>& stream);
void init_topology(py::module_& m, py::class_<Device>& device);
// The scheduler (libaccel-runtime, runtime.cc): after AccelError and Device exist.
void init_runtime(py::module_& m);

}  // namespace accelpy
