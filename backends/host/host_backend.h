// What every file of the host engine shares: the core's host services, the
// guard that keeps exceptions from crossing the C ABI, timeouts, handle
// conversions and the slot functions that backend.cc puts into its table.
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

namespace accel::host {

inline constexpr const char* kBackendName = "host";
inline constexpr const char* kBackendVersion = "1.0.0";

// "ACCEL_ERROR_INTERNAL"; "ACCEL_STATUS_UNKNOWN" for a value this build does not know.
const char* StatusName(accel_status_t status) noexcept;

// "1.0.0" for a packed ACCEL_MAKE_VERSION value.
std::string VersionString(uint32_t version);

// Whether a struct whose struct_size is `struct_size` holds the member at [offset, offset + size).
constexpr bool Covers(uint32_t struct_size, size_t offset, size_t size) { return offset + size <= struct_size; }

// Whether `*pointer` (a struct of type `type` from a peer of any version) holds `member`.
#define ACCEL_HOST_HAS_FIELD(pointer, type, member) \
  (::accel::host::Covers((pointer)->struct_size, offsetof(type, member), sizeof(static_cast<type*>(nullptr)->member)))

// A peer's struct of type T, read into a zeroed T as far as its `struct_size` reaches (a smaller struct from an older
// peer leaves the newer fields 0; a larger one from a newer peer has its unknown tail ignored). `source` holds at
// least `struct_size` bytes; it need not be aligned.
template <typename T>
T ReadPrefix(const void* source, uint32_t struct_size) {
  T value{};
  std::memcpy(&value, source, struct_size < sizeof(T) ? struct_size : sizeof(T));
  return value;
}

// Copies what follows the struct header of `from` into `*to`, never past to->struct_size (an output struct of an
// older peer gets its known prefix). The header of `*to` stays as the caller set it.
template <typename T>
void WritePrefix(const T& from, T* to) {
  constexpr size_t kHeader = sizeof(accel_struct_header_t);
  const size_t end = to->struct_size < sizeof(T) ? to->struct_size : sizeof(T);
  if (end <= kHeader) return;
  std::memcpy(reinterpret_cast<char*>(to) + kHeader, reinterpret_cast<const char*>(&from) + kHeader, end - kHeader);
}

// The core's services, read field by field as far as the core's struct_size reaches; a missing service is a no-op.
// Immutable after construction; the core's services may be called from any thread.
class HostServices {
 public:
  HostServices() = default;
  // `backend_name` is static; messages say "the <name> backend".
  explicit HostServices(const accel_host_services_t* services, const char* backend_name = kBackendName) noexcept;

  const char* backend_name() const noexcept { return backend_name_; }
  // The instance's value of an ACCEL_* setting, or NULL (accel_host_services_t::get_setting).
  const char* Setting(const char* name) const noexcept;

  void Log(accel_log_level_t level, const char* message) const noexcept;
  void Log(accel_log_level_t level, const std::string& message) const noexcept { Log(level, message.c_str()); }

  // Hands `message` to the core as the calling thread's error for the slot in progress and returns `status`.
  accel_status_t Fail(accel_status_t status, const char* message) const noexcept;
  accel_status_t Fail(accel_status_t status, const std::string& message) const noexcept {
    return Fail(status, message.c_str());
  }

 private:
  const char* backend_name_ = kBackendName;
  void* context_ = nullptr;
  void (*log_)(void*, accel_log_level_t, const char*) = nullptr;
  void (*set_error_)(void*, accel_status_t, const char*) = nullptr;
  const char* (*get_setting_)(void*, const char*) = nullptr;
};

// Runs a slot's body and turns an escaping exception into a status with a message, so none crosses the C ABI.
template <typename Body>
accel_status_t Guard(const HostServices& host, const char* slot, Body&& body) noexcept {
  char message[512];
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::snprintf(message, sizeof(message), "%s: out of host memory", slot);
    return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, message);
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: %s", slot, host.backend_name(),
                  e.what());
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: unknown exception", slot,
                  host.backend_name());
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  }
}

// Guard for the slots that return nothing (the destroy slots): an escaping exception is logged as an error.
template <typename Body>
void GuardVoid(const HostServices& host, const char* slot, Body&& body) noexcept {
  char message[512];
  try {
    body();
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: %s", slot, host.backend_name(),
                  e.what());
    host.Log(ACCEL_LOG_LEVEL_ERROR, message);
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: internal error in the %s backend: unknown exception", slot,
                  host.backend_name());
    host.Log(ACCEL_LOG_LEVEL_ERROR, message);
  }
}

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

// The body of accel_backend_get_api: the major of the core's newest version must be ours; the answer is the older
// of the two newest, and `api` (a static table). Messages name `backend_name`.
accel_status_t NegotiateApi(accel_backend_get_api_args_t* args, const accel_backend_api_t* api,
                            const char* backend_name) noexcept;

// Backend objects behind the opaque handles; each is defined in the file named after it.
class Context;
struct Device;
struct Buffer;
class Stream;
class Event;
struct Module;
struct Kernel;

inline Context* Unwrap(accel_bk_context_t handle) { return reinterpret_cast<Context*>(handle); }
inline Device* Unwrap(accel_bk_device_t handle) { return reinterpret_cast<Device*>(handle); }
inline Buffer* Unwrap(accel_bk_buffer_t handle) { return reinterpret_cast<Buffer*>(handle); }
inline Stream* Unwrap(accel_bk_stream_t handle) { return reinterpret_cast<Stream*>(handle); }
inline Event* Unwrap(accel_bk_event_t handle) { return reinterpret_cast<Event*>(handle); }
inline Module* Unwrap(accel_bk_module_t handle) { return reinterpret_cast<Module*>(handle); }
inline Kernel* Unwrap(accel_bk_kernel_t handle) { return reinterpret_cast<Kernel*>(handle); }
inline accel_bk_context_t Wrap(Context* object) { return reinterpret_cast<accel_bk_context_t>(object); }
inline accel_bk_device_t Wrap(Device* object) { return reinterpret_cast<accel_bk_device_t>(object); }
inline accel_bk_buffer_t Wrap(Buffer* object) { return reinterpret_cast<accel_bk_buffer_t>(object); }
inline accel_bk_stream_t Wrap(Stream* object) { return reinterpret_cast<accel_bk_stream_t>(object); }
inline accel_bk_event_t Wrap(Event* object) { return reinterpret_cast<accel_bk_event_t>(object); }
inline accel_bk_module_t Wrap(Module* object) { return reinterpret_cast<accel_bk_module_t>(object); }
inline accel_bk_kernel_t Wrap(Kernel* object) { return reinterpret_cast<accel_bk_kernel_t>(object); }

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
