// What every file of the host engine shares: the core's host services, the
// guard that keeps exceptions from crossing the C ABI and handle conversions
// (from backends/common), timeouts, and the slot functions that backend.cc
// puts into its table.
// The engine (everything here but backend.cc) is also the sim backend's
// (backends/host/README.md, "The host engine").
#ifndef ACCEL_BACKENDS_HOST_HOST_BACKEND_H_
#define ACCEL_BACKENDS_HOST_HOST_BACKEND_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "accel_backend.h"
#include "common/backend_support.h"

namespace accel::host {

inline constexpr const char* kBackendName = "host";
inline constexpr const char* kBackendVersion = "1.0.0";

// Shared with the other in-tree backends (backends/common).
using backend::Covers;
using backend::Guard;
using backend::GuardVoid;
using backend::HostServices;
using backend::ReadPrefix;
using backend::StatusName;
using backend::VersionString;
using backend::WritePrefix;

// The end of a wait given as a timeout in nanoseconds. ACCEL_TIMEOUT_INFINITE, and any timeout too long for the
// steady clock to represent, never ends. Plain value.
class Deadline {
 public:
  explicit Deadline(uint64_t timeout_ns);

  // Waits on `cv` (with `lock` held) until `done()` or the deadline; returns done().
  template <typename Lock, typename Predicate>
  bool Wait(std::condition_variable& cv, Lock& lock, Predicate done) const {
    if (!end_) {
      cv.wait(lock, done);
      return true;
    }
    return cv.wait_until(lock, *end_, done);
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> end_;
};

// Backend objects behind the opaque handles; each is defined in the file named after it.
class Context;
struct Device;
struct Buffer;
class Stream;
class Event;
struct Module;
struct Kernel;

ACCEL_BACKEND_HANDLES(Context, Device, Buffer, Stream, Event, Module, Kernel)

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
accel_status_t BufferImport(accel_bk_device_t device, const accel_buffer_import_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept;
accel_status_t BufferExport(accel_bk_buffer_t buffer, accel_external_memory_type_t type,
                            accel_external_memory_t* out_memory) noexcept;
accel_status_t BufferGetHostAddress(accel_bk_buffer_t buffer, void** out_address) noexcept;
accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t buffer, uint64_t* out_address) noexcept;

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
// Not a slot: queues an operation that fails with `status` and `message` when the worker reaches it, as if the device
// had reported an error there (the sim backend's injected stream faults).
accel_status_t StreamEnqueueFailure(accel_bk_stream_t stream, accel_status_t status, const std::string& message);
accel_status_t StreamLaunchKernel(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept;

// event.cc
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

// topology.cc
accel_status_t DeviceGetTopology(accel_bk_device_t device, accel_device_topology_t* out_topology) noexcept;
accel_status_t DeviceGetClique(accel_bk_device_t device, accel_domain_t* out_domain) noexcept;

}  // namespace accel::host

#endif  // ACCEL_BACKENDS_HOST_HOST_BACKEND_H_
