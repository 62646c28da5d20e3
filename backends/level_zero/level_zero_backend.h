// What the files of the Level Zero backend share: the loader's entry points and their error names, the device, buffer
// storage and stream-operation types, the SPIR-V kernel reflection (pure functions, unit-tested in
// tests/level_zero), and the slot functions backend.cc puts into its table. attributes.h holds the
// property-to-descriptor mapping.
//
// Objects and their owners: a Context (backend.cc) owns the Runtime (libze_loader and its entry points), one Level
// Zero context per driver, and the Devices, each naming its ze_device_handle_t and its driver's context. Level Zero
// has no current device: every call names its context and device, so the Scope of the shared GPU code does nothing.
// Buffers, streams, events, modules and kernels are the core's handles; what queued work needs (buffer storage,
// modules, kernels, event records) is reference-counted, so destroying a handle never cuts queued work short.
//
// Lock order, outermost first: Stream::mutex_ (common/gpu_stream.h) > a kernel's argument mutex (module.cc) > a
// ZeStream's list mutex; Record::mutex_, Storage's map mutex and a device's synchronous-list mutex are leaves. No lock
// is held while a host callback runs, and no list mutex while a thread waits for the device.
#ifndef ACCEL_LEVEL_ZERO_LEVEL_ZERO_BACKEND_H_
#define ACCEL_LEVEL_ZERO_LEVEL_ZERO_BACKEND_H_

#include <accel_backend.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "attributes.h"
#include "common/backend_support.h"
#include "common/gpu_storage.h"
#include "common/gpu_stream.h"
#include "symbols.h"

namespace accel::level_zero {

inline constexpr const char* kBackendName = "level_zero";  // the manifest's name
inline constexpr const char* kBackendVersion = "1.0.0";

using Host = backend::HostServices;
using backend::Guard;
using backend::StatusName;
using backend::WritePrefix;

// A device address as Accel keeps it (arithmetic on integers), and the pointer Level Zero takes.
using DeviceAddress = uint64_t;
inline void* Ptr(DeviceAddress address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }
inline DeviceAddress Address(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

// libze_loader of one context and its entry points. Immutable after loading.
struct Runtime {
  void* library = nullptr;  // dlopen handle (RTLD_NODELETE: the drivers' threads outlive it)
  std::string library_name;
  ZeApi ze;
};

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)": the spec's name, or the code alone for one it does not know.
std::string ZeResultName(ze_result_t code);
// "zeMemAllocDevice failed with ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)".
std::string ZeFailure(std::string_view call, ze_result_t code);
// The Accel status a result maps to: out of memory RESOURCE_EXHAUSTED; a module that does not build, an invalid
// argument or size INVALID_ARGUMENT; device lost or needing a reset DEVICE_LOST; unsupported features, sizes and
// versions UNSUPPORTED; an unknown kernel name NOT_FOUND; everything else INTERNAL (the core validated the arguments).
accel_status_t StatusFromZe(ze_result_t code);

// --- Devices and buffers -------------------------------------------------------------------------------------------

struct Context;

// One Level Zero device: its handles, properties and descriptor, and a synchronous immediate command list for the
// blocking copies of maps. Immutable after context_create but for the list, which `sync_mutex` guards.
struct Device {
  const Host* host = nullptr;
  Runtime* runtime = nullptr;
  Context* context = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t ze_context = nullptr;  // its driver's context, shared by the driver's devices
  uint32_t index = 0;                        // among the backend's devices
  DeviceAttributes attributes;
  accel_device_capabilities_t capabilities{};
  std::string label;                             // "device 0 (Intel(R) Data Center GPU Max 1550)"
  mutable std::mutex sync_mutex;                 // guards appends to `sync_list`
  ze_command_list_handle_t sync_list = nullptr;  // ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS
  // Device memory this backend holds on the device: Level Zero 1.0 has no free-memory query (device_get_memory_info
  // reports the total less this).
  std::atomic<uint64_t> allocated{0};
};

// Level Zero has no current device: the shared code's Scope does nothing.
class NoScope {
 public:
  explicit NoScope(const Device*) {}
  ze_result_t result() const { return ZE_RESULT_SUCCESS; }
};

// An event of its own pool (one event a pool: records come and go one at a time), host-visible, with kernel
// timestamps when it times.
struct ZeEvent {
  ze_event_pool_handle_t pool = nullptr;  // for every device of `context`
  ze_event_handle_t event = nullptr;
  ze_context_handle_t context = nullptr;  // its driver's context
  // A stream's marker only, under the stream's mutex: the stream's `appended` when it was appended (it covers
  // everything up to there), and the callers still asking it (a marker in use is never reset for reuse).
  uint64_t after = 0;
  uint32_t users = 0;
};

// A stream's immediate command list (asynchronous) and the marker events that tell how far it ran: Level Zero 1.0
// cannot ask a command list whether it is idle. Commands of a Level Zero command list may overlap: each command is
// followed by a barrier, so the stream runs in order. Thread-safe: every append and the markers are guarded by
// `mutex` (the shared code calls stream query and synchronize without its own lock); nothing waits under it.
struct ZeStream {
  std::mutex mutex;
  ze_command_list_handle_t list = nullptr;
  uint64_t appended = 0;         // commands appended to `list` so far (under `mutex`, as every append is)
  std::deque<ZeEvent*> pending;  // markers appended, oldest first, not yet seen signalled
  std::vector<ZeEvent*> spare;   // markers seen signalled, for reuse (a few at most)
};

// The vendor calls the shared buffer storage, streams and events make (common/gpu_storage.h and gpu_stream.h list
// what each member is); the storage's are defined in memory.cc, the others in stream.cc.
struct GpuTraits {
  using Device = level_zero::Device;
  using Buffer = backend::GpuBuffer<GpuTraits>;
  using Address = DeviceAddress;
  using Result = ze_result_t;
  using StreamHandle = ZeStream*;
  using EventHandle = ZeEvent*;
  using Scope = NoScope;
  static constexpr Result kSuccess = ZE_RESULT_SUCCESS;
  static constexpr Result kNotReady = ZE_RESULT_NOT_READY;
  static constexpr Result kOutOfMemory = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  static constexpr const char* kMakeCurrent = "(no current device)";
  static constexpr const char* kEventCreate = "zeEventCreate";
  static constexpr const char* kEventQuery = "zeEventQueryStatus";
  static constexpr const char* kEventSynchronize = "zeEventHostSynchronize";
  static constexpr const char* kEventRecord = "zeCommandListAppendBarrier (signalling the event)";
  static constexpr const char* kEventElapsedTime = "zeEventQueryKernelTimestamp";
  static constexpr const char* kStreamCreate = "zeCommandListCreateImmediate";
  static constexpr const char* kStreamQuery = "zeEventQueryStatus (the stream's marker)";
  static constexpr const char* kStreamSynchronize = "zeEventHostSynchronize (the stream's marker)";
  static constexpr const char* kStreamWaitEvent = "zeCommandListAppendWaitOnEvents";
  static constexpr const char* kCopyToHost = "zeCommandListAppendMemoryCopy (synchronous, to the host)";
  static constexpr const char* kCopyFromHost = "zeCommandListAppendMemoryCopy (synchronous, from the host)";
  static Result FreeStorage(const Device* device, Address address, void* host, const char** out_call);
  static Result CopyToHost(const Device* device, void* dst, Address src, size_t size);
  static Result CopyFromHost(const Device* device, Address dst, const void* src, size_t size);
  static Result EventCreate(const Device* device, EventHandle* out, bool timing, bool blocking_sync);
  static Result EventDestroy(const Device* device, EventHandle event);
  static Result EventQuery(const Device* device, EventHandle event);
  static Result EventSynchronize(const Device* device, EventHandle event);
  static Result EventRecord(const Device* device, EventHandle event, StreamHandle stream);
  static Result EventElapsedTime(const Device* device, float* out_ms, EventHandle start, EventHandle end);
  static Result StreamCreate(const Device* device, StreamHandle* out);
  static Result StreamDestroy(const Device* device, StreamHandle stream);
  static Result StreamQuery(const Device* device, StreamHandle stream);
  static Result StreamSynchronize(const Device* device, StreamHandle stream);
  static Result StreamWaitEvent(const Device* device, StreamHandle stream, EventHandle event);
  static accel_status_t StatusFrom(Result code);
  static std::string Failure(const Device* device, const char* call, Result code);
  static void DestroyBuffer(accel_bk_buffer_t buffer);
};

// A buffer's memory, freed when the last reference goes, and a buffer handle (common/gpu_storage.h).
using Storage = backend::GpuStorage<GpuTraits>;
using Buffer = backend::GpuBuffer<GpuTraits>;

// --- Stream operations (stream.cc) -------------------------------------------------------------------------------

// A stream, an event, one recording of an event, and one queued operation of a stream (common/gpu_stream.h).
using Record = backend::GpuRecord<GpuTraits>;
using Event = backend::GpuEvent<GpuTraits>;
using Stream = backend::GpuStream<GpuTraits>;
using Operation = backend::GpuOperation<ZeStream*, Record>;

// Queues `op` on `stream`, in order. Thread-safe.
accel_status_t EnqueueOperation(Stream* stream, Operation op);
// Appends a command to the stream's command list with `append(list)`, then a barrier; under the list's mutex.
template <typename Append>
ze_result_t AppendInOrder(const Device* device, ZeStream* stream, Append&& append) {
  std::lock_guard lock(stream->mutex);
  ++stream->appended;  // counted whether or not it succeeds: a marker must never stand for a half-appended command
  const ze_result_t r = append(stream->list);
  if (r != ZE_RESULT_SUCCESS) return r;
  return device->runtime->ze.zeCommandListAppendBarrier(stream->list, nullptr, 0, nullptr);
}

// --- SPIR-V kernel reflection (reflect.cc; pure functions) --------------------------------------------------------

// One kernel argument as the backend declares it (docs/kernels.md).
struct ArgumentDeclaration {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  accel_access_t access = ACCEL_ACCESS_READ;
  uint32_t size = 0;  // SCALAR: bytes of the parameter
  std::string name;
};

// A kernel of an OpenCL SPIR-V module (an OpEntryPoint of the Kernel execution model) and its parameters in order:
// a CrossWorkgroup, Generic or UniformConstant pointer a BUFFER (READ when the parameter is decorated
// FuncParamAttr NoWrite or is a UniformConstant (`__constant`) pointer, else READ_WRITE), a Workgroup pointer a
// LOCAL_MEMORY argument, an integer, float or vector of them a SCALAR of its size. Names come from OpName ("arg_<k>"
// when there is none); the required work-group size from OpExecutionMode LocalSize (0s when none).
struct SpirvKernel {
  std::string name;
  uint32_t required_size[3] = {0, 0, 0};
  std::vector<ArgumentDeclaration> arguments;
};
// The kernels of a SPIR-V module; false with `*why` when it is not one (magic, size, a truncated instruction), has
// no Kernel entry point, or a parameter Accel cannot bind (named).
bool ReflectSpirv(std::string_view module, std::vector<SpirvKernel>* out, std::string* why);

// --- Handles -----------------------------------------------------------------------------------------------------

struct Module;
struct Kernel;

ACCEL_BACKEND_HANDLES(Context, Device, Buffer, Stream, Event, Module, Kernel)

// --- Slots (abi/accel_backend.h documents each) ------------------------------------------------------------------

// device.cc
accel_status_t DeviceGetMemoryInfo(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total) noexcept;

// memory.cc
accel_status_t BufferCreate(accel_bk_device_t device, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept;

// stream.cc
accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamCopyBufferToHost(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept;
accel_status_t StreamCopyBuffer(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamFillBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept;

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

// topology.cc
accel_status_t DeviceGetLink(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept;

// backend.cc: what topology.cc and stream.cc read of the context.
bool PeerAccess(const Device& a, const Device& b);

}  // namespace accel::level_zero

#endif  // ACCEL_LEVEL_ZERO_LEVEL_ZERO_BACKEND_H_
