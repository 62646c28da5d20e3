// What the files of the OpenCL backend share: the core's host services, the
// guard that keeps exceptions from crossing the C ABI, owning wrappers of
// OpenCL objects, the device, buffer and stream-operation types, the pure
// functions that map OpenCL properties to Accel's descriptors (unit-tested in
// tests/opencl), and the slot functions backend.cc puts into its table.
//
// Objects and their owners: a Context (backend.cc) owns the Runtime (the ICD
// loader and its entry points), the Platforms (one cl_context each) and the
// Devices. Buffers, streams, events, modules and kernels are the core's
// handles; what queued work needs (buffer storage, kernels, event records) is
// reference-counted, so destroying a handle never cuts queued work short.
//
// Lock order, outermost first: Stream::mutex_ > Record::mutex_; Kernel::mutex
// and Storage's map mutex are leaves. No lock is held while a host callback
// runs or while the worker waits for OpenCL.
#ifndef ACCEL_OPENCL_OPENCL_BACKEND_H_
#define ACCEL_OPENCL_OPENCL_BACKEND_H_

#include <accel_backend.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/backend_support.h"
#include "symbols.h"

namespace accel::opencl {

inline constexpr const char* kBackendName = "opencl";  // the manifest's name
inline constexpr const char* kBackendVersion = "1.0.0";

// The core's host services, the guard, status names and struct-prefix helpers are backends/common's.
using Host = backend::HostServices;
using backend::Guard;
using backend::StatusName;
using backend::WritePrefix;

// "clCreateBuffer failed with CL_OUT_OF_RESOURCES (-5)".
std::string ClFailure(const char* call, cl_int code);
// The Accel status an OpenCL error maps to: allocation failures are RESOURCE_EXHAUSTED, everything else INTERNAL
// (the core validated the arguments, so an OpenCL refusal is the backend's or the driver's fault).
accel_status_t StatusFromCl(cl_int code);

// --- The runtime and owning wrappers -----------------------------------------------------------------------------

// The ICD loader of one context and its entry points, with a count of the OpenCL objects the backend holds (every
// wrapper below counts itself; ContextDestroy reports a non-zero count: a leak of the backend's own).
// Thread-safe: the table is immutable after loading, the count atomic.
struct Runtime {
  void* library = nullptr;  // dlopen handle of libOpenCL.so.1 (RTLD_NODELETE: never unloaded)
  ClApi cl;
  std::atomic<int64_t> live_objects{0};
};

// Sole ownership of one OpenCL object, released with the entry point `kRelease` names.
// Not thread-safe itself; the OpenCL object it holds is (OpenCL 1.2 objects are, but for cl_kernel's arguments).
template <typename T, auto ClApi::*kRelease>
class ClObject {
 public:
  ClObject() = default;
  // Adopts `handle` (a reference the caller owned); a NULL handle makes an empty wrapper.
  ClObject(Runtime* runtime, T handle) : runtime_(handle != nullptr ? runtime : nullptr), handle_(handle) {
    if (handle_ != nullptr) runtime_->live_objects.fetch_add(1, std::memory_order_relaxed);
  }
  ~ClObject() { reset(); }
  ClObject(ClObject&& other) noexcept : runtime_(other.runtime_), handle_(std::exchange(other.handle_, nullptr)) {}
  ClObject& operator=(ClObject&& other) noexcept {
    if (this != &other) {
      reset();
      runtime_ = other.runtime_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ClObject(const ClObject&) = delete;
  ClObject& operator=(const ClObject&) = delete;

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void reset() {
    if (handle_ == nullptr) return;
    (runtime_->cl.*kRelease)(handle_);
    runtime_->live_objects.fetch_sub(1, std::memory_order_relaxed);
    handle_ = nullptr;
  }

 private:
  Runtime* runtime_ = nullptr;
  T handle_ = nullptr;
};

using ClContext = ClObject<cl_context, &ClApi::ReleaseContext>;
using ClQueue = ClObject<cl_command_queue, &ClApi::ReleaseCommandQueue>;
using ClMem = ClObject<cl_mem, &ClApi::ReleaseMemObject>;
using ClEvent = ClObject<cl_event, &ClApi::ReleaseEvent>;
using ClProgram = ClObject<cl_program, &ClApi::ReleaseProgram>;
using ClKernel = ClObject<cl_kernel, &ClApi::ReleaseKernel>;

// --- Device properties to descriptors (device.cc; pure functions) ------------------------------------------------

// `value`, or UINT32_MAX when it does not fit (OpenCL's size_t limits into the descriptors' uint32 fields).
inline uint32_t Clamp32(uint64_t value) { return value > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(value); }

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;
};

// What the backend reads from clGetPlatformInfo and clGetDeviceInfo for one device: plain data, so that the mapping to
// Accel's descriptor is a pure function.
struct ClDeviceProperties {
  std::string platform_name;
  std::string platform_version;  // "OpenCL 3.0 PoCL 3.1+debian ..."
  std::string name;              // CL_DEVICE_NAME
  std::string vendor;            // CL_DEVICE_VENDOR
  std::string driver_version;    // CL_DRIVER_VERSION
  std::string device_version;    // CL_DEVICE_VERSION: "OpenCL 3.0 PoCL HSTR: ..."
  std::string opencl_c_version;  // CL_DEVICE_OPENCL_C_VERSION: "OpenCL C 1.2 PoCL"
  std::string profile;           // CL_DEVICE_PROFILE: FULL_PROFILE or EMBEDDED_PROFILE
  std::string extensions;        // CL_DEVICE_EXTENSIONS, space-separated
  std::string il_version;        // CL_DEVICE_IL_VERSION: "SPIR-V_1.2 ..."; "" none
  std::string spir_versions;     // CL_DEVICE_SPIR_VERSIONS: "1.2"; "" none
  cl_device_type type = 0;
  uint32_t vendor_id = 0;
  uint64_t global_mem_size = 0;
  uint64_t max_mem_alloc_size = 0;
  uint64_t local_mem_size = 0;
  uint32_t compute_units = 0;
  uint32_t clock_mhz = 0;
  uint32_t address_bits = 64;
  uint32_t mem_base_addr_align_bits = 0;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN: a sub-buffer's origin alignment, in bits
  uint64_t max_work_group_size = 0;
  uint32_t max_work_item_dimensions = 3;
  uint64_t max_work_item_sizes[3] = {1, 1, 1};
  uint64_t max_parameter_size = 0;
  bool available = true;
  bool compiler_available = true;
  bool profiling = true;  // CL_DEVICE_QUEUE_PROPERTIES has CL_QUEUE_PROFILING_ENABLE
  uint64_t double_fp_config = 0;
  uint64_t half_fp_config = 0;
  std::optional<PciAddress> pci;                  // cl_khr_pci_bus_info, or the NVIDIA / AMD attribute queries
  std::optional<std::array<uint8_t, 16>> uuid;    // cl_khr_device_uuid
  std::optional<std::pair<int, int>> nv_compute;  // cl_nv_device_attribute_query's compute capability
};

struct ClVersion {
  int major = 0;
  int minor = 0;
  bool AtLeast(int wanted_major, int wanted_minor) const {
    return major > wanted_major || (major == wanted_major && minor >= wanted_minor);
  }
};
// The "<major>.<minor>" after `prefix` at the start of `text` ("OpenCL " in "OpenCL 3.0 PoCL", "OpenCL C " in
// "OpenCL C 1.2 PoCL"); {0, 0} when `text` does not start so.
ClVersion ParseVersion(std::string_view text, std::string_view prefix);
// Whether the space-separated `extensions` list holds `name` as a whole word.
bool HasExtension(std::string_view extensions, std::string_view name);
// Lowercase letters and digits, every other run one '-', none leading or trailing ("pthread-skylake-avx512-amd-epyc").
std::string NormaliseSku(std::string_view name);
// "DDDD:BB:DD.F" in lowercase hex.
std::string FormatPciBusId(const PciAddress& address);
// Why the backend cannot use the device ("OpenCL 1.1 device; the backend needs OpenCL 1.2"), or "" when it can.
std::string UnusableReason(const ClDeviceProperties& properties);
accel_device_kind_t KindOf(const ClDeviceProperties& properties);
std::string ArchitectureOf(const ClDeviceProperties& properties);
accel_kernel_formats_t KernelFormatsOf(const ClDeviceProperties& properties);
// The whole descriptor but stable_id and backend_name (the core's).
accel_device_capabilities_t Describe(const ClDeviceProperties& properties);

// --- Kernel arguments (module.cc; pure functions) ----------------------------------------------------------------

// The size in bytes of an OpenCL C scalar or vector type named as CL_KERNEL_ARG_TYPE_NAME names it ("uint", "float4",
// "size_t"); 0 for a type it does not know (a struct: any size is accepted).
uint32_t ScalarSize(std::string_view type_name, uint32_t address_bits);

// One kernel argument as clGetKernelArgInfo describes it, mapped to Accel's declaration (docs/kernels.md).
struct ArgumentDeclaration {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  accel_access_t access = ACCEL_ACCESS_READ;
  uint32_t size = 0;
  std::string name;
  std::string type_name;
  std::string unusable;  // why Accel cannot pass it (an image, a sampler, a pipe); "" usable
};
ArgumentDeclaration DeclareArgument(cl_kernel_arg_address_qualifier address, cl_kernel_arg_type_qualifier type,
                                    std::string type_name, std::string name, uint32_t address_bits);
// The lines of a build log that say what failed (errors first), shortened to at most `limit` characters.
std::string BuildLogGist(std::string_view log, size_t limit = 600);
// CL_PROGRAM_KERNEL_NAMES ("a;b;c") as a list.
std::vector<std::string> SplitKernelNames(std::string_view names);

// --- Devices and buffers -----------------------------------------------------------------------------------------

// One OpenCL platform the context opened: a cl_context over its usable devices, so that buffers and events are
// shared by all of them. Immutable after context_create.
struct Platform {
  cl_platform_id id = nullptr;
  std::string name;
  ClContext context;
};

// One OpenCL device: its properties, its descriptor, an internal queue for maps and staging, and the bytes its live
// buffers hold against memory_total. Thread-safe: everything but the byte count is immutable after context_create
// (OpenCL queues are thread-safe); the count is guarded by the device's mutex.
struct Device {
  const Host* host = nullptr;
  Runtime* runtime = nullptr;
  Platform* platform = nullptr;
  cl_device_id id = nullptr;
  uint32_t index = 0;  // among the backend's devices
  ClDeviceProperties properties;
  accel_device_capabilities_t capabilities{};
  uint64_t base_alignment = 1;  // bytes a sub-buffer's origin must be a multiple of
  ClQueue internal_queue;       // in-order, no profiling: maps, unmaps, staging reads
  // clCreateProgramWithIL (a 2.1 platform) or clCreateProgramWithILKHR (cl_khr_il_program); NULL: neither.
  ClApi::CreateProgramWithILFn create_program_with_il = nullptr;

  // Takes `size` bytes of the capacity; false when fewer are free.
  bool Reserve(uint64_t size);
  void Unreserve(uint64_t size);
  uint64_t Used();

 private:
  std::mutex mutex_;
  uint64_t used_ = 0;
};

// A buffer's cl_mem, counted against its device's capacity until the last reference goes. The handle and every
// queued operation that uses it hold a reference, which makes freeing stream-ordered.
// Thread-safe: the mapping state is guarded by its own mutex.
class Storage {
 public:
  Storage(Device* device, ClMem mem, uint64_t size) : device_(device), mem_(std::move(mem)), size_(size) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  Device* device() const { return device_; }
  cl_mem mem() const { return mem_.get(); }
  uint64_t size() const { return size_; }
  // Maps [offset, offset + size) on the device's internal queue, blocking; the core checked the range, the flags
  // and that the buffer is not mapped already.
  accel_status_t Map(uint64_t offset, uint64_t size, uint64_t flags, void** out_ptr);
  accel_status_t Unmap();

 private:
  Device* const device_;
  ClMem mem_;
  const uint64_t size_;
  std::mutex mutex_;
  void* mapped_ = nullptr;
};

// A buffer handle. Plain data; the core never uses a handle after destroying it.
struct Buffer {
  Device* device;
  std::shared_ptr<Storage> storage;
};

// --- Stream operations (stream.cc) -------------------------------------------------------------------------------

// Where a device operation enqueues its commands.
struct Submission {
  Runtime* runtime = nullptr;
  Device* device = nullptr;  // the stream's
  cl_command_queue queue = nullptr;
  std::vector<ClMem> temporaries;  // sub-buffers and bounce buffers the commands use, released once they completed
};

struct KernelState;     // a kernel handle's cl_kernel and what was last set on it (module.cc)
struct PreparedLaunch;  // a cl_kernel of its own with its arguments set once (module.cc)

// One argument of a launch, copied at enqueue. A scalar's bytes are in its Launch's `values`.
struct BoundArgument {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  accel_access_t access = ACCEL_ACCESS_READ;
  std::shared_ptr<Storage> storage;  // BUFFER
  uint64_t offset = 0;               // BUFFER
  uint64_t size = 0;                 // BUFFER: bytes bound; SCALAR: bytes at `value_offset`; LOCAL_MEMORY: bytes
  size_t value_offset = 0;           // SCALAR: where its bytes start in `values`
  cl_mem mem = nullptr;              // BUFFER: what SubmitLaunch passes (the buffer, a sub-buffer or a bounce buffer)
};

// A kernel launch copied at enqueue (module.cc's StreamLaunchKernel) and enqueued by SubmitLaunch. A stream recycles
// its launches (EnqueueLaunch; Release once the launch completed), so that a launch allocates nothing once the
// vectors have grown to the kernel's arguments. Owned by one operation at a time.
struct Launch {
  std::shared_ptr<const PreparedLaunch> prepared;  // set for stream_launch_prepared: the rest is unused
  // Prepared launches enqueued right behind `prepared`, run on its operation (EnqueuePrepared): kept alive with it,
  // each listed once per change (a run of the same one adds nothing).
  std::vector<std::shared_ptr<const PreparedLaunch>> prepared_after;
  std::shared_ptr<KernelState> kernel;
  std::array<size_t, 3> global{};
  std::array<size_t, 3> local{};
  std::vector<BoundArgument> args;
  std::vector<std::byte> values;  // every scalar's bytes

  // Drops the references to the kernel and the buffers' storage, keeping the vectors' memory (and `args`' size, so
  // that the next launch of as many arguments constructs none) for the next launch.
  void Release() {
    prepared.reset();
    prepared_after.clear();
    kernel.reset();
    for (BoundArgument& a : args) a.storage.reset();
    values.clear();
  }
};

// Sets the launch's changed arguments and enqueues it on the submission's queue (module.cc).
accel_status_t SubmitLaunch(Launch& launch, Submission& s, std::string* message);
// Enqueues a prepared launch (its arguments are set) on the submission's queue (module.cc).
accel_status_t SubmitPrepared(const PreparedLaunch& prepared, Submission& s, std::string* message);

// A host copy, a buffer copy within one platform or a fill: one OpenCL command on the stream's queue, held by the
// operation itself (no std::function per copy) and enqueued by the stream as a `submit` would be.
struct Transfer {
  enum class Kind { kNone, kWrite, kRead, kCopy, kFill };
  Kind kind = Kind::kNone;
  std::shared_ptr<Storage> from;  // kRead, kCopy
  std::shared_ptr<Storage> to;    // kWrite, kCopy, kFill
  const void* src = nullptr;      // kWrite: the caller's bytes (valid until the copy completes)
  void* dst = nullptr;            // kRead
  uint64_t src_offset = 0;
  uint64_t dst_offset = 0;
  uint64_t size = 0;
  std::array<std::byte, 4> pattern{};  // kFill, copied at enqueue
  uint32_t pattern_size = 0;
};

// One queued operation of a stream. Exactly one of `submit` (device work), `launch` (device work), `transfer`
// (device work) and `host` (host work) is set.
//   - `launch` is a kernel launch, enqueued by SubmitLaunch as a `submit` would be (no std::function per launch);
//     `transfer` likewise a copy or fill.
//   - `submit` enqueues OpenCL commands on the stream's in-order queue without waiting and without events (the
//     stream learns that they completed when it waits for the queue); it runs on the calling thread, or on the
//     stream's worker when host work is queued ahead of it, when the stream holds no error, else it is skipped.
//   - `host` runs on the worker once every earlier operation completed, always: told `prior`, the stream's error
//     (ACCEL_SUCCESS when none), it does its work or, given an error, only releases what it holds.
//   - `would_block`, when set and true, says `submit` may wait for something outside the stream (another stream's
//     event not yet enqueued): it then runs on the worker, once every earlier operation completed.
//   - `complete`, when set, runs once the operation completed, in stream order, with its status (its own, or the
//     stream's error that skipped it), the stream's error message when that status is an error, and its submission;
//     it returns the final status (an event waited on may turn a success into that event's error) and sets
//     `*message` when it turns a success into a failure.
// What the functions capture (buffer storage, kernels, event records) lives as long as the operation.
struct Operation {
  const char* what = "";
  std::function<accel_status_t(Submission& submission, std::string* message)> submit;
  std::function<accel_status_t(accel_status_t prior, std::string* message)> host;
  std::unique_ptr<Launch> launch;
  Transfer transfer;
  std::function<bool()> would_block;
  std::function<accel_status_t(accel_status_t status, const std::string& error, const Submission& submission,
                               std::string* message)>
      complete;
  accel_copy_statistics_t copies{};  // added to the stream's statistics when it completes successfully
  uint64_t number = 0;               // set by Enqueue: 1 for the stream's first operation
};

class Stream;
// Queues `op` on `stream`, in order (stream.cc says where it runs). Thread-safe.
accel_status_t EnqueueOperation(Stream* stream, Operation&& op);
// Queues a kernel launch on `stream`, in order: `fill(context, launch)` copies it into a released launch of the
// stream's (its vectors keep their memory) or a new one, under the stream's mutex, in the enqueue's own lock round
// trip; a fill that fails enqueues nothing and its status is returned. Thread-safe.
accel_status_t EnqueueLaunch(Stream* stream, accel_status_t (*fill)(void* context, Launch& launch), void* context);
// Queues a prepared launch on `stream`, in order: as EnqueueLaunch would a launch holding it, except that right behind
// a prepared launch's operation still submitted (an idle worker, no error) it is enqueued on that operation, which
// then keeps it alive and completes it: no operation of its own. Thread-safe.
accel_status_t EnqueuePrepared(Stream* stream, const std::shared_ptr<const PreparedLaunch>& prepared);

// --- Handles -----------------------------------------------------------------------------------------------------

struct Context;
class Event;
struct Module;
struct Kernel;
struct Prepared;

ACCEL_BACKEND_HANDLES(Context, Device, Buffer, Stream, Event, Module, Kernel)
ACCEL_BACKEND_HANDLE(accel_bk_prepared_launch_t, Prepared)

// --- Slots (abi/accel_backend.h documents each) ------------------------------------------------------------------

// device.cc
accel_status_t DeviceGetCapabilities(accel_bk_device_t device, accel_device_capabilities_t* out) noexcept;
accel_status_t DeviceGetMemoryInfo(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total) noexcept;

// memory.cc
accel_status_t BufferCreate(accel_bk_device_t device, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept;
void BufferDestroy(accel_bk_buffer_t buffer) noexcept;
accel_status_t BufferMap(accel_bk_buffer_t buffer, uint64_t offset, uint64_t size, uint64_t flags,
                         void** out_ptr) noexcept;
accel_status_t BufferUnmap(accel_bk_buffer_t buffer) noexcept;

// stream.cc
accel_status_t StreamCreate(accel_bk_device_t device, const accel_stream_desc_t* desc,
                            accel_bk_stream_t* out_stream) noexcept;
void StreamDestroy(accel_bk_stream_t stream) noexcept;
accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamCopyBufferToHost(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept;
accel_status_t StreamCopyBuffer(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamFillBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept;
accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t stream, accel_host_callback_t callback,
                                         void* user_data) noexcept;
accel_status_t StreamFreeBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer) noexcept;
accel_status_t StreamRecordEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamWaitEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamQuery(accel_bk_stream_t stream) noexcept;
accel_status_t StreamSynchronize(accel_bk_stream_t stream, uint64_t timeout_ns) noexcept;
accel_status_t StreamClearError(accel_bk_stream_t stream) noexcept;
accel_status_t StreamGetCopyStatistics(accel_bk_stream_t stream, accel_copy_statistics_t* out_statistics) noexcept;
accel_status_t EventCreate(accel_bk_device_t device, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept;
void EventDestroy(accel_bk_event_t event) noexcept;
accel_status_t EventQuery(accel_bk_event_t event) noexcept;
accel_status_t EventSynchronize(accel_bk_event_t event, uint64_t timeout_ns) noexcept;
accel_status_t EventElapsedTime(accel_bk_event_t start, accel_bk_event_t end, uint64_t* out_nanoseconds) noexcept;

// module.cc
accel_status_t ModuleCreate(accel_bk_device_t device, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept;
void ModuleDestroy(accel_bk_module_t module) noexcept;
accel_status_t ModuleEnumerateKernels(accel_bk_module_t module, uint32_t* inout_count, const char** out_names) noexcept;
accel_status_t ModuleGetKernel(accel_bk_module_t module, const char* name, accel_bk_kernel_t* out_kernel) noexcept;
void KernelDestroy(accel_bk_kernel_t kernel) noexcept;
accel_status_t KernelGetProperties(accel_bk_kernel_t kernel, accel_kernel_properties_t* out_properties) noexcept;
accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t kernel, uint32_t index,
                                     accel_kernel_argument_info_t* out_info) noexcept;
accel_status_t StreamLaunchKernel(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept;
accel_status_t KernelPrepareLaunch(accel_bk_kernel_t kernel, const accel_bk_launch_t* launch,
                                   accel_bk_prepared_launch_t* out_prepared) noexcept;
void PreparedLaunchDestroy(accel_bk_prepared_launch_t prepared) noexcept;
accel_status_t StreamLaunchPrepared(accel_bk_stream_t stream, accel_bk_prepared_launch_t prepared) noexcept;

// topology.cc
accel_status_t DeviceGetTopology(accel_bk_device_t device, accel_device_topology_t* out_topology) noexcept;
accel_status_t DeviceGetLink(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept;

}  // namespace accel::opencl

#endif  // ACCEL_OPENCL_OPENCL_BACKEND_H_
