// What the files of the CUDA backend share: the driver's entry points and their error names, the device, buffer
// storage and stream-operation types, the PTX reflection (ptx.h: pure functions, unit-tested in tests/cuda), and the
// slot functions backend.cc puts into its table. attributes.h holds the attribute-to-descriptor mapping.
//
// Objects and their owners: a Context (backend.cc) owns the Runtime (libcuda and its entry points, NVML's link
// table) and the Devices, each holding its device's retained primary context. Buffers, streams, events, modules and
// kernels are the core's handles; what queued work needs (buffer storage, modules, event records) is
// reference-counted, so destroying a handle never cuts queued work short.
//
// Lock order, outermost first: Stream::mutex_ > Record::mutex_ (common/gpu_stream.h); Storage's map mutex is a leaf. No
// lock is held while a host callback runs or while a thread waits for the device.
#ifndef ACCEL_CUDA_CUDA_BACKEND_H_
#define ACCEL_CUDA_CUDA_BACKEND_H_

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
#include "ptx.h"
#include "symbols.h"

namespace accel::cuda {

inline constexpr const char* kBackendName = "cuda";  // the manifest's name
inline constexpr const char* kBackendVersion = "1.0.0";

using Host = backend::HostServices;
using backend::Guard;
using backend::StatusName;
using backend::WritePrefix;

// libcuda of one context and its entry points. Immutable after loading.
struct Runtime {
  void* library = nullptr;  // dlopen handle of libcuda.so.1 (RTLD_NODELETE: the driver's threads outlive it)
  std::string library_name;
  CuApi cu;
};

// "CUDA_ERROR_OUT_OF_MEMORY (2)": cuGetErrorName's name when the driver gives one, else the backend's own.
std::string CuErrorName(const CuApi& cu, CUresult code);
// "cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
std::string CuFailure(const CuApi& cu, std::string_view call, CUresult code);
// The Accel status a CUDA error maps to: out of memory RESOURCE_EXHAUSTED; a broken image INVALID_ARGUMENT; an
// error that leaves the context unusable (illegal address, launch failure, ECC) DEVICE_LOST; NOT_SUPPORTED
// UNSUPPORTED; NOT_FOUND NOT_FOUND; everything else INTERNAL (the core validated the arguments).
accel_status_t StatusFromCu(CUresult code);

// --- Devices and buffers -------------------------------------------------------------------------------------------

struct Context;

// One CUDA device: its attributes, its descriptor, its retained primary context and its NVLink table. Immutable
// after context_create; thread-safe.
struct Device {
  const Host* host = nullptr;
  Runtime* runtime = nullptr;
  Context* context = nullptr;
  CUdevice device = 0;
  CUcontext primary = nullptr;  // retained in context_create, released in context_destroy
  uint32_t index = 0;           // among the backend's devices
  DeviceAttributes attributes;
  accel_device_capabilities_t capabilities{};
  std::string label;  // "device 0 (NVIDIA H200)"
};

// Makes `device`'s primary context current on the calling thread for the scope, restoring the one before (nothing
// is pushed when it is current already).
class ScopedContext {
 public:
  explicit ScopedContext(const Device* device);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
  // CUDA_SUCCESS, or why the context could not be made current.
  CUresult result() const { return result_; }

 private:
  const CuApi* cu_ = nullptr;
  bool pushed_ = false;
  CUresult result_ = CUDA_SUCCESS;
};

// The vendor calls the shared buffer storage, streams and events make (common/gpu_storage.h and gpu_stream.h list
// what each member is); the storage's are defined in memory.cc, the others in stream.cc.
struct GpuTraits {
  using Device = cuda::Device;
  using Buffer = backend::GpuBuffer<GpuTraits>;
  using Address = CUdeviceptr;
  using Result = CUresult;
  using StreamHandle = CUstream;
  using EventHandle = CUevent;
  using Scope = ScopedContext;
  static constexpr Result kSuccess = CUDA_SUCCESS;
  static constexpr Result kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr Result kOutOfMemory = CUDA_ERROR_OUT_OF_MEMORY;
  static constexpr const char* kMakeCurrent = "cuCtxPushCurrent";
  static constexpr const char* kEventCreate = "cuEventCreate";
  static constexpr const char* kEventQuery = "cuEventQuery";
  static constexpr const char* kEventSynchronize = "cuEventSynchronize";
  static constexpr const char* kEventRecord = "cuEventRecord";
  static constexpr const char* kEventElapsedTime = "cuEventElapsedTime";
  static constexpr const char* kStreamCreate = "cuStreamCreate";
  static constexpr const char* kStreamQuery = "cuStreamQuery";
  static constexpr const char* kStreamSynchronize = "cuStreamSynchronize";
  static constexpr const char* kStreamWaitEvent = "cuStreamWaitEvent";
  static constexpr const char* kCopyToHost = "cuMemcpyDtoH";
  static constexpr const char* kCopyFromHost = "cuMemcpyHtoD";
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
using Operation = backend::GpuOperation<CUstream, Record>;

// Queues `op` on `stream`, in order. Thread-safe.
accel_status_t EnqueueOperation(Stream* stream, Operation op);
Device* StreamDevice(Stream* stream);

// --- Modules (module.cc) -------------------------------------------------------------------------------------------

// The lines of a JIT log that say what failed, shortened to at most `limit` characters.
std::string LogGist(std::string_view log, size_t limit = 600);

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

// backend.cc: what topology.cc reads of the context.
accel_device_link_t LinkBetween(const Device& a, const Device& b);
std::string CliqueOf(const Device& device);

}  // namespace accel::cuda

#endif  // ACCEL_CUDA_CUDA_BACKEND_H_
