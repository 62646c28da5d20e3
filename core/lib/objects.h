// Buffers, streams and events: the per-device objects an application
// creates. Each wraps one backend object and releases it exactly once.
#ifndef ACCEL_CORE_OBJECTS_H_
#define ACCEL_CORE_OBJECTS_H_

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.h"
#include "memory_account.h"

namespace accel::core {

// The part every per-device object shares: its device, its backend object,
// and a release that calls the backend's destroy slot exactly once.
// Thread-safe: Release may race itself; only one call destroys.
template <typename BkHandle, void (*accel_backend_api_t::*Destroy)(BkHandle)>
class DeviceObject : public Object {
 public:
  ~DeviceObject() override { Release(); }

  void Release() {
    if (released.exchange(true) || bk == nullptr) return;
    auto destroy = device->backend->api().*Destroy;
    if (destroy != nullptr) destroy(bk);
  }

  std::shared_ptr<Device> device;
  BkHandle bk = nullptr;
  // Set once the backend object is gone or handed over (stream-ordered free).
  std::atomic<bool> released{false};
};

// An in-order stream; releasing it waits for its work. Thread-safe: the
// backend serialises enqueues.
class Stream : public DeviceObject<accel_bk_stream_t, &accel_backend_api_t::stream_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kStream;

  // Released on one of its own host callbacks (that callback's call held the last reference while another thread
  // destroyed the handle), the backend stream is destroyed by a helper thread: its destroy waits for the stream's
  // work, which includes the callback it would run on (host_callback.cc).
  ~Stream() override;
};

// A device buffer; the backend defers its release past queued work.
// Thread-safe: the mapping state is under `mutex`.
class Buffer : public DeviceObject<accel_bk_buffer_t, &accel_backend_api_t::buffer_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kBuffer;

  // Released by the last reference: freed on `free_on` when accel_stream_free_buffer found another thread's call
  // still using it (docs/threading.md), else destroyed (the backend defers that past queued work).
  ~Buffer() override {
    if (free_on == nullptr || bk == nullptr || released.exchange(true)) return;
    const accel_backend_api_t& api = device->backend->api();
    if (free_on->released.load()) {  // the stream went first (instance teardown): nothing left to order after
      if (api.buffer_destroy != nullptr) api.buffer_destroy(bk);
      return;
    }
    if (api.stream_free_buffer(free_on->bk, bk) != ACCEL_SUCCESS && api.buffer_destroy != nullptr) {
      api.buffer_destroy(bk);  // as accel_stream_free_buffer falls back: nothing leaks
    }
  }

  // Set by accel_stream_free_buffer, once the handle is stale, when another call still holds the buffer.
  std::shared_ptr<Stream> free_on;

  uint64_t size = 0;
  accel_memory_kind_t memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  bool imported = false;
  bool read_only = false;  // imported with ACCEL_IMPORT_FLAG_READ_ONLY
  std::mutex mutex;
  bool mapped = false;
  // Gives the bytes back to the process's and the tenant's accounts when the
  // buffer goes (docs/memory-limits.md); null for imports and pinned host memory.
  std::unique_ptr<MemoryCharge> charge;
};

// A completion marker recorded on streams. Thread-safe.
class Event : public DeviceObject<accel_bk_event_t, &accel_backend_api_t::event_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kEvent;

  uint64_t flags = 0;
};

class Kernel;

// A loaded module: the backend module, the source it came from and its
// kernel names. Thread-safe: the kernel cache is under `mutex`.
class Module : public DeviceObject<accel_bk_module_t, &accel_backend_api_t::module_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kModule;

  std::string name;
  accel_kernel_formats_t format = 0;
  accel_kernel_formats_t available_formats = 0;
  uint32_t source_index = 0;
  std::vector<std::string> kernel_names;
  std::mutex mutex;
  bool destroyed = false;                   // accel_module_destroy ran: no new kernels
  std::map<std::string, uint64_t> kernels;  // name -> live kernel handle
};

// A kernel of a module, with its declaration cached at lookup. Immutable
// after creation, so thread-safe. Keeps its module alive.
class Kernel : public DeviceObject<accel_bk_kernel_t, &accel_backend_api_t::kernel_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kKernel;

  ~Kernel() override { Release(); }  // before `module` goes

  std::shared_ptr<Module> module;
  std::string name;
  accel_kernel_properties_t properties{};  // full size; name and module filled
  std::vector<accel_kernel_argument_info_t> arguments;
  std::vector<std::string> argument_names;
};

// A launch checked once (accel_kernel_prepare_launch): the backend's prepared
// launch where the backend prepares it (`bk`), else the checked launch itself
// (`launch`, with its arguments and scalars' bytes), which each enqueue passes
// to stream_launch_kernel. Keeps the kernel and the bound buffers alive.
// Immutable after creation, so thread-safe.
class PreparedLaunch : public DeviceObject<accel_bk_prepared_launch_t, &accel_backend_api_t::prepared_launch_destroy> {
 public:
  static constexpr HandleType kHandleType = HandleType::kPreparedLaunch;

  ~PreparedLaunch() override { Release(); }  // before the kernel and buffers go
  // Release, and drops the kernel and buffers it kept (instance teardown; nothing else may use it then).
  void ReleaseAll() {
    Release();
    buffers.clear();
    kernel.reset();
  }

  std::shared_ptr<Kernel> kernel;
  std::vector<std::shared_ptr<Buffer>> buffers;
  accel_bk_launch_t launch{};               // when `bk` is null; `args` points into `args`
  std::vector<accel_bk_kernel_arg_t> args;  // scalar values point into `values`
  std::vector<std::byte> values;
};

}  // namespace accel::core

#endif  // ACCEL_CORE_OBJECTS_H_
