// Buffer storage of the GPU backends whose runtimes share one model, CUDA's driver API, HIP and Level Zero: what
// backends/cuda/memory.cc, backends/hip/memory.cc and backends/level_zero/memory.cc share, over the traits struct of
// vendor calls that common/gpu_stream.h also takes. Part of accel_backend_support (backend_support.h); header-only,
// since it is templates.
//
// What the traits struct T supplies beyond gpu_stream.h's list:
//   types     Address (a device address, integer arithmetic on it gives addresses inside an allocation)
//   values    kCopyToHost, kCopyFromHost: the names of the synchronous copies, for messages
//   calls     FreeStorage(device, address, host, const char** out_call): frees device memory (host NULL) or pinned
//             host memory, and names the call; CopyToHost(device, void* dst, Address src, size_t size),
//             CopyFromHost(device, Address dst, const void* src, size_t size): synchronous copies
#ifndef ACCEL_BACKENDS_COMMON_GPU_STORAGE_H_
#define ACCEL_BACKENDS_COMMON_GPU_STORAGE_H_

#include <accel_backend.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/services.h"

namespace accel::backend {

// A buffer's memory: device memory or pinned host memory (portable and mapped), freed when the last reference goes.
// The handle and every queued operation that uses it hold a reference, which makes freeing stream-ordered.
// Thread-safe: the mapping state is guarded by its own mutex.
template <typename T>
class GpuStorage {
 public:
  using Device = typename T::Device;
  using Address = typename T::Address;

  GpuStorage(Device* device, Address address, void* host, uint64_t size)
      : device_(device), address_(address), host_(host), size_(size) {}
  ~GpuStorage() {
    typename T::Scope scope(device_);
    const char* call = "";
    const typename T::Result r = T::FreeStorage(device_, address_, host_, &call);
    if (r == T::kSuccess) return;
    try {  // a destructor, run on a stream's worker too: without memory for the message, nothing is logged
      device_->host->Log(ACCEL_LOG_LEVEL_WARN, device_->label + ": " + T::Failure(device_, call, r));
    } catch (...) {
    }
  }
  GpuStorage(const GpuStorage&) = delete;
  GpuStorage& operator=(const GpuStorage&) = delete;

  Device* device() const { return device_; }
  Address address() const { return address_; }  // the device address of byte 0
  void* host() const { return host_; }          // pinned memory's host address; NULL for device memory
  uint64_t size() const { return size_; }

  // Pinned memory maps in place; device memory through a host copy, read at map and written back at unmap.
  accel_status_t Map(uint64_t offset, uint64_t size, uint64_t flags, void** out_ptr) {
    std::lock_guard lock(mutex_);
    if (mapped_) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is mapped already");
    if (host_ != nullptr) {
      *out_ptr = static_cast<unsigned char*>(host_) + offset;
    } else {
      // The application completed the buffer's work first (the slot's contract): a synchronous copy sees it all.
      // The range is read whatever the flags, so that a write-only map that writes part of it writes back the rest
      // as is.
      shadow_.resize(static_cast<size_t>(size));
      typename T::Scope scope(device_);
      const typename T::Result r = scope.result() != T::kSuccess
                                       ? scope.result()
                                       : T::CopyToHost(device_, shadow_.data(), address_ + offset, shadow_.size());
      if (r != T::kSuccess) {
        shadow_.clear();
        return device_->host->Fail(T::StatusFrom(r),
                                   T::Failure(device_, T::kCopyToHost, r) + " reading the mapped range");
      }
      *out_ptr = shadow_.data();
    }
    mapped_ = true;
    map_offset_ = offset;
    map_flags_ = flags;
    return ACCEL_SUCCESS;
  }

  accel_status_t Unmap() {
    std::lock_guard lock(mutex_);
    if (!mapped_) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is not mapped");
    mapped_ = false;
    if (host_ != nullptr) return ACCEL_SUCCESS;
    std::vector<unsigned char> shadow;
    shadow.swap(shadow_);
    if ((map_flags_ & ACCEL_MAP_WRITE) == 0) return ACCEL_SUCCESS;
    typename T::Scope scope(device_);
    const typename T::Result r = scope.result() != T::kSuccess
                                     ? scope.result()
                                     : T::CopyFromHost(device_, address_ + map_offset_, shadow.data(), shadow.size());
    if (r != T::kSuccess) {
      return device_->host->Fail(T::StatusFrom(r),
                                 T::Failure(device_, T::kCopyFromHost, r) + " writing the mapped range back");
    }
    return ACCEL_SUCCESS;
  }

 private:
  Device* const device_;
  const Address address_;
  void* const host_;
  const uint64_t size_;
  std::mutex mutex_;
  bool mapped_ = false;
  uint64_t map_offset_ = 0;
  uint64_t map_flags_ = 0;
  std::vector<unsigned char> shadow_;
};

// A buffer handle. Plain data; the core never uses a handle after destroying it.
template <typename T>
struct GpuBuffer {
  typename T::Device* device;
  std::shared_ptr<GpuStorage<T>> storage;
};

// The buffer slots that make no vendor call of their own (abi/accel_backend.h documents each); a backend's slot
// functions forward to these.
template <typename T>
struct GpuBufferSlots {
  using Buffer = GpuBuffer<T>;
  static Buffer* ToBuffer(accel_bk_buffer_t handle) { return reinterpret_cast<Buffer*>(handle); }

  static void BufferDestroy(accel_bk_buffer_t buffer) noexcept {
    // Queued work holds its own references to the storage: the memory goes once that work completed.
    std::unique_ptr<Buffer> owned(ToBuffer(buffer));
  }

  static accel_status_t BufferMap(accel_bk_buffer_t handle, uint64_t offset, uint64_t size, uint64_t flags,
                                  void** out_ptr) noexcept {
    Buffer* buffer = ToBuffer(handle);
    return Guard(*buffer->device->host, "buffer_map",
                 [&] { return buffer->storage->Map(offset, size, flags, out_ptr); });
  }

  static accel_status_t BufferUnmap(accel_bk_buffer_t handle) noexcept {
    Buffer* buffer = ToBuffer(handle);
    return Guard(*buffer->device->host, "buffer_unmap", [&] { return buffer->storage->Unmap(); });
  }

  static accel_status_t BufferGetHostAddress(accel_bk_buffer_t handle, void** out_address) noexcept {
    Buffer* buffer = ToBuffer(handle);
    if (buffer->storage->host() == nullptr) {
      return buffer->device->host->Fail(ACCEL_ERROR_UNSUPPORTED,
                                        "device memory has no host address (map it, or create it HOST_PINNED)");
    }
    *out_address = buffer->storage->host();
    return ACCEL_SUCCESS;
  }

  static accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t handle, uint64_t* out_address) noexcept {
    *out_address = ToBuffer(handle)->storage->address();
    return ACCEL_SUCCESS;
  }
};

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_GPU_STORAGE_H_
