// What the files of the HIP backend share: the runtime's entry points and their error names, the device, buffer
// storage and stream-operation types, the code-object (hsaco) reflection (pure functions, unit-tested in tests/hip),
// and the slot functions backend.cc puts into its table. attributes.h holds the attribute-to-descriptor mapping.
//
// Objects and their owners: a Context (backend.cc) owns the Runtime (libamdhip64 and its entry points) and the
// Devices, each naming its HIP device ordinal. HIP has no contexts to retain: a thread selects a device with
// hipSetDevice (ScopedDevice). Buffers, streams, events, modules and kernels are the core's handles; what queued work
// needs (buffer storage, modules, event records) is reference-counted, so destroying a handle never cuts queued work
// short.
//
// Lock order, outermost first: Stream::mutex_ > Record::mutex_ (common/gpu_stream.h); Storage's map mutex is a leaf. No
// lock is held while a host callback runs or while a thread waits for the device.
#ifndef ACCEL_HIP_HIP_BACKEND_H_
#define ACCEL_HIP_HIP_BACKEND_H_

#include <accel_backend.h>

#include <cstdint>
#include <functional>
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

namespace accel::hip {

inline constexpr const char* kBackendName = "hip";  // the manifest's name
inline constexpr const char* kBackendVersion = "1.0.0";

using Host = backend::HostServices;
using backend::Guard;
using backend::StatusName;
using backend::WritePrefix;

// A device address as Accel keeps it (arithmetic on integers), and the pointer HIP takes.
using DeviceAddress = uint64_t;
inline void* Ptr(DeviceAddress address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }
inline DeviceAddress Address(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

// libamdhip64 of one context and its entry points. Immutable after loading.
struct Runtime {
  void* library = nullptr;  // dlopen handle of libamdhip64 (RTLD_NODELETE: the runtime's threads outlive it)
  std::string library_name;
  HipApi hip;
};

// "hipErrorOutOfMemory (2)": hipGetErrorName's name when the runtime gives one, else the backend's own.
std::string HipErrorName(const HipApi& cu, hipError_t code);
// "hipMalloc failed with hipErrorOutOfMemory (2): out of memory".
std::string HipFailure(const HipApi& cu, std::string_view call, hipError_t code);
// The Accel status a HIP error maps to: out of memory RESOURCE_EXHAUSTED; a broken image INVALID_ARGUMENT; an
// error that leaves the context unusable (illegal address, launch failure, ECC) DEVICE_LOST; NOT_SUPPORTED
// UNSUPPORTED; NOT_FOUND NOT_FOUND; everything else INTERNAL (the core validated the arguments).
accel_status_t StatusFromHip(hipError_t code);

// --- Devices and buffers -------------------------------------------------------------------------------------------

struct Context;

// One HIP device: its ordinal, its attributes and its descriptor. Immutable after context_create; thread-safe.
struct Device {
  const Host* host = nullptr;
  Runtime* runtime = nullptr;
  Context* context = nullptr;
  int ordinal = 0;     // the HIP device ordinal (hipSetDevice's)
  uint32_t index = 0;  // among the backend's devices
  DeviceAttributes attributes;
  accel_device_capabilities_t capabilities{};
  std::string label;  // "device 0 (AMD Instinct MI300X)"
};

// Makes `device` the calling thread's current HIP device for the scope, restoring the one before (nothing is set
// when it is current already).
class ScopedDevice {
 public:
  explicit ScopedDevice(const Device* device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  // hipSuccess, or why the device could not be made current.
  hipError_t result() const { return result_; }

 private:
  const HipApi* hip_ = nullptr;
  int previous_ = -1;
  hipError_t result_ = hipSuccess;
};

// The vendor calls the shared buffer storage, streams and events make (common/gpu_storage.h and gpu_stream.h list
// what each member is); the storage's are defined in memory.cc, the others in stream.cc.
struct GpuTraits {
  using Device = hip::Device;
  using Buffer = backend::GpuBuffer<GpuTraits>;
  using Address = DeviceAddress;
  using Result = hipError_t;
  using StreamHandle = hipStream_t;
  using EventHandle = hipEvent_t;
  using Scope = ScopedDevice;
  static constexpr Result kSuccess = hipSuccess;
  static constexpr Result kNotReady = hipErrorNotReady;
  static constexpr Result kOutOfMemory = hipErrorOutOfMemory;
  static constexpr const char* kMakeCurrent = "hipSetDevice";
  static constexpr const char* kEventCreate = "hipEventCreateWithFlags";
  static constexpr const char* kEventQuery = "hipEventQuery";
  static constexpr const char* kEventSynchronize = "hipEventSynchronize";
  static constexpr const char* kEventRecord = "hipEventRecord";
  static constexpr const char* kEventElapsedTime = "hipEventElapsedTime";
  static constexpr const char* kStreamCreate = "hipStreamCreateWithFlags";
  static constexpr const char* kStreamQuery = "hipStreamQuery";
  static constexpr const char* kStreamSynchronize = "hipStreamSynchronize";
  static constexpr const char* kStreamWaitEvent = "hipStreamWaitEvent";
  static constexpr const char* kCopyToHost = "hipMemcpyDtoH";
  static constexpr const char* kCopyFromHost = "hipMemcpyHtoD";
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
using Operation = backend::GpuOperation<hipStream_t, Record>;

// Queues `op` on `stream`, in order. Thread-safe.
accel_status_t EnqueueOperation(Stream* stream, Operation op);
Device* StreamDevice(Stream* stream);

// --- Code-object (hsaco) reflection (module.cc; pure functions) ---------------------------------------------------

// One kernel argument as the backend declares it (docs/kernels.md), and the kernel parameter it fills.
struct ArgumentDeclaration {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  accel_access_t access = ACCEL_ACCESS_READ;
  uint32_t size = 0;  // SCALAR: bytes of the parameter
  std::string name;
};

// A kernel of an AMDGPU code object, from its metadata note (NT_AMDGPU_METADATA, code object v3 and newer: the
// msgpack map "amdhsa.kernels"): its `.name`, its `.max_flat_workgroup_size`, `.group_segment_fixed_size` (static
// LDS) and its explicit arguments in order: `global_buffer` a BUFFER (READ for `.is_const` or `.access: read_only`,
// else READ_WRITE), `by_value` a SCALAR of its `.size`, `dynamic_shared_pointer` a LOCAL_MEMORY argument (the launch's
// dynamic LDS); `hidden_*` arguments, which the runtime fills, are left out.
struct CodeObjectKernel {
  std::string name;
  uint32_t max_flat_workgroup_size = 0;
  uint32_t group_segment_fixed_size = 0;
  std::vector<ArgumentDeclaration> arguments;
};
// The kernels of an ELF code object (a hsaco); false with `*why` when it is not one or has no readable metadata.
bool ParseCodeObject(std::string_view image, std::vector<CodeObjectKernel>* out, std::string* why);
// The kernels described by a code-object metadata blob (msgpack), as ParseCodeObject reads it from the note.
bool ParseCodeObjectMetadata(std::string_view msgpack, std::vector<CodeObjectKernel>* out, std::string* why);

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
accel_status_t DeviceGetClique(accel_bk_device_t device, accel_domain_t* out_domain) noexcept;

// backend.cc: what topology.cc and stream.cc read of the context.
accel_device_link_t LinkBetween(const Device& a, const Device& b);
std::string CliqueOf(const Device& device);

}  // namespace accel::hip

#endif  // ACCEL_HIP_HIP_BACKEND_H_
