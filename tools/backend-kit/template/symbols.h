// What the files of the template backend share: the core's host services, the
// guard that keeps exceptions from crossing the C ABI, the device and buffer
// objects, handle conversions and the slot functions that backend.cc puts into
// its table. A backend over a vendor runtime also declares here the runtime's
// entry points it resolves at load time (dlopen + dlsym, docs/backend-abi.md).
#ifndef ACCEL_TEMPLATE_SYMBOLS_H_
#define ACCEL_TEMPLATE_SYMBOLS_H_

#include <accel_backend.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

namespace accel::template_backend {

inline constexpr const char* kBackendName = "template";  // the manifest's name
inline constexpr const char* kBackendVersion = "0.1.0";

// Whether `*pointer`, a struct of type `type` from a peer of any version, holds `member`: an older peer's struct is
// smaller (read only the fields it has), a newer peer's larger (ignore the tail).
#define ACCEL_TEMPLATE_HAS_FIELD(pointer, type, member) \
  ((pointer)->struct_size >= offsetof(type, member) + sizeof((pointer)->member))

// Copies the bytes of `from` after the struct header into `to`, up to `end` and never past `to_struct_size` (an
// older core's output struct gets its known prefix only). The header of `to` stays as the core set it.
inline void WritePrefix(const void* from, void* to, uint32_t to_struct_size, size_t end) {
  constexpr size_t kHeader = sizeof(accel_struct_header_t);
  if (to_struct_size < end) end = to_struct_size;
  if (end <= kHeader) return;
  std::memcpy(static_cast<char*>(to) + kHeader, static_cast<const char*>(from) + kHeader, end - kHeader);
}

// The core's services, read as far as the core's struct_size reaches; a missing service is a no-op.
// Immutable after construction; the core's services may be called from any thread.
class Host {
 public:
  explicit Host(const accel_host_services_t* services) noexcept {
    if (services == nullptr) return;
    if (ACCEL_TEMPLATE_HAS_FIELD(services, accel_host_services_t, context)) context_ = services->context;
    if (ACCEL_TEMPLATE_HAS_FIELD(services, accel_host_services_t, log)) log_ = services->log;
    if (ACCEL_TEMPLATE_HAS_FIELD(services, accel_host_services_t, set_error)) set_error_ = services->set_error;
  }

  void Log(accel_log_level_t level, const std::string& message) const noexcept {
    if (log_ != nullptr) log_(context_, level, message.c_str());
  }
  // Hands `message` to the core as the calling thread's error for the slot in progress; returns `status`.
  accel_status_t Fail(accel_status_t status, const char* message) const noexcept {
    if (set_error_ != nullptr) set_error_(context_, status, message);
    return status;
  }
  accel_status_t Fail(accel_status_t status, const std::string& message) const noexcept {
    return Fail(status, message.c_str());
  }

 private:
  void* context_ = nullptr;
  void (*log_)(void*, accel_log_level_t, const char*) = nullptr;
  void (*set_error_)(void*, accel_status_t, const char*) = nullptr;
};

// Runs a slot's body; an escaping exception becomes a status with a message, since none may cross the C ABI.
inline accel_status_t Guard(const Host& host, const char* slot, auto&& body) noexcept {
  char message[512];
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::snprintf(message, sizeof(message), "%s: out of host memory", slot);
    return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, message);
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof(message), "%s: internal error: %s", slot, e.what());
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  } catch (...) {
    std::snprintf(message, sizeof(message), "%s: internal error: unknown exception", slot);
    return host.Fail(ACCEL_ERROR_INTERNAL, message);
  }
}

// The backend's one device: its fixed capabilities and the bytes its live buffers hold against its capacity.
// Thread-safe: `capabilities` is immutable after context_create; `used` is guarded by the device's mutex.
struct Device {
  const Host* host = nullptr;
  accel_device_capabilities_t capabilities{};

  // Takes `size` bytes of the capacity; false when fewer are free.
  bool Reserve(uint64_t size);
  void Unreserve(uint64_t size);
  uint64_t Used();

 private:
  std::mutex mutex_;
  uint64_t used_ = 0;
};

// A buffer's bytes: host memory, counted against its device's capacity until the last reference goes. The handle
// and every queued operation that uses the bytes hold a reference, which makes freeing stream-ordered.
// Thread-safe to share; the bytes themselves are ordered by the streams that use them.
class Storage {
 public:
  // `data` came from std::aligned_alloc; `size` bytes of the device's capacity are reserved for it.
  Storage(Device* device, std::byte* data, uint64_t size) : device_(device), data_(data), size_(size) {}
  ~Storage() {
    std::free(data_);
    device_->Unreserve(size_);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() const { return data_; }

 private:
  Device* const device_;
  std::byte* const data_;
  const uint64_t size_;
};

// A buffer handle. Plain data; the core never uses a handle after destroying it.
struct Buffer {
  Device* device;
  std::shared_ptr<Storage> storage;
};

// Backend objects behind the opaque handles; each is defined in the file named after it.
struct Context;
class Stream;
class Event;

inline Context* Unwrap(accel_bk_context_t handle) { return reinterpret_cast<Context*>(handle); }
inline Device* Unwrap(accel_bk_device_t handle) { return reinterpret_cast<Device*>(handle); }
inline Buffer* Unwrap(accel_bk_buffer_t handle) { return reinterpret_cast<Buffer*>(handle); }
inline Stream* Unwrap(accel_bk_stream_t handle) { return reinterpret_cast<Stream*>(handle); }
inline Event* Unwrap(accel_bk_event_t handle) { return reinterpret_cast<Event*>(handle); }
inline accel_bk_context_t Wrap(Context* object) { return reinterpret_cast<accel_bk_context_t>(object); }
inline accel_bk_device_t Wrap(Device* object) { return reinterpret_cast<accel_bk_device_t>(object); }
inline accel_bk_buffer_t Wrap(Buffer* object) { return reinterpret_cast<accel_bk_buffer_t>(object); }
inline accel_bk_stream_t Wrap(Stream* object) { return reinterpret_cast<accel_bk_stream_t>(object); }
inline accel_bk_event_t Wrap(Event* object) { return reinterpret_cast<accel_bk_event_t>(object); }

// --- Slots (abi/accel_backend.h documents each) ------------------------------------------------------------------

// device.cc
void DescribeDevice(accel_device_capabilities_t* out);
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
accel_kernel_formats_t KernelFormats();

// topology.cc
accel_status_t DeviceGetTopology(accel_bk_device_t device, accel_device_topology_t* out_topology) noexcept;

}  // namespace accel::template_backend

#endif  // ACCEL_TEMPLATE_SYMBOLS_H_
