// Buffers: device memory from hipMalloc, pinned host memory from hipHostMalloc (portable and mapped, so every
// device of the backend reaches it at its device address), each with its device current; maps of pinned
// memory in place, of device memory through a host copy; the host and device addresses.
#include <cstring>
#include <memory>
#include <string>

#include "hip_backend.h"

namespace accel::hip {

Storage::~Storage() {
  const HipApi& hip = device_->runtime->hip;
  ScopedDevice scope(device_);
  const hipError_t r = host_ != nullptr ? hip.hipHostFree(host_) : hip.hipFree(Ptr(address_));
  if (r != hipSuccess) {
    device_->host->Log(ACCEL_LOG_LEVEL_WARN,
                       device_->label + ": " + HipFailure(hip, host_ != nullptr ? "hipHostFree" : "hipFree", r));
  }
}

accel_status_t Storage::Map(uint64_t offset, uint64_t size, uint64_t flags, void** out_ptr) {
  std::lock_guard lock(mutex_);
  if (mapped_) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is mapped already");
  if (host_ != nullptr) {
    *out_ptr = static_cast<unsigned char*>(host_) + offset;
  } else {
    // The application completed the buffer's work first (the slot's contract): a synchronous copy sees it all. The
    // range is read whatever the flags, so that a write-only map that writes part of it writes back the rest as is.
    shadow_.resize(static_cast<size_t>(size));
    const HipApi& hip = device_->runtime->hip;
    ScopedDevice scope(device_);
    const hipError_t r = scope.result() != hipSuccess
                             ? scope.result()
                             : hip.hipMemcpyDtoH(shadow_.data(), Ptr(address_ + offset), shadow_.size());
    if (r != hipSuccess) {
      shadow_.clear();
      return device_->host->Fail(StatusFromHip(r), HipFailure(hip, "hipMemcpyDtoH", r) + " reading the mapped range");
    }
    *out_ptr = shadow_.data();
  }
  mapped_ = true;
  map_offset_ = offset;
  map_flags_ = flags;
  return ACCEL_SUCCESS;
}

accel_status_t Storage::Unmap() {
  std::lock_guard lock(mutex_);
  if (!mapped_) return device_->host->Fail(ACCEL_ERROR_FAILED_PRECONDITION, "the buffer is not mapped");
  mapped_ = false;
  if (host_ != nullptr) return ACCEL_SUCCESS;
  std::vector<unsigned char> shadow;
  shadow.swap(shadow_);
  if ((map_flags_ & ACCEL_MAP_WRITE) == 0) return ACCEL_SUCCESS;
  const HipApi& hip = device_->runtime->hip;
  ScopedDevice scope(device_);
  const hipError_t r = scope.result() != hipSuccess
                           ? scope.result()
                           : hip.hipMemcpyHtoD(Ptr(address_ + map_offset_), shadow.data(), shadow.size());
  if (r != hipSuccess) {
    return device_->host->Fail(StatusFromHip(r),
                               HipFailure(hip, "hipMemcpyHtoD", r) + " writing the mapped range back");
  }
  return ACCEL_SUCCESS;
}

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    const HipApi& hip = device->runtime->hip;
    ScopedDevice scope(device);
    if (scope.result() != hipSuccess) {
      return host.Fail(StatusFromHip(scope.result()), HipFailure(hip, "hipSetDevice", scope.result()));
    }
    const auto size = static_cast<size_t>(desc->size);
    void* address = nullptr;
    void* pinned = nullptr;
    if (desc->memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED) {
      hipError_t r = hip.hipHostMalloc(&pinned, size, hipHostMallocPortable | hipHostMallocMapped);
      if (r != hipSuccess) {
        return host.Fail(StatusFromHip(r), HipFailure(hip, "hipHostMalloc", r) + ": the request was " +
                                               std::to_string(desc->size) + " bytes of pinned host memory");
      }
      r = hip.hipHostGetDevicePointer(&address, pinned, 0);
      if (r != hipSuccess) {
        hip.hipHostFree(pinned);
        return host.Fail(StatusFromHip(r), HipFailure(hip, "hipHostGetDevicePointer", r));
      }
    } else {
      const hipError_t r = hip.hipMalloc(&address, size);
      if (r != hipSuccess) {
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        hip.hipMemGetInfo(&free_bytes, &total_bytes);
        return host.Fail(StatusFromHip(r), HipFailure(hip, "hipMalloc", r) + ": the request was " +
                                               std::to_string(desc->size) + " bytes; " + std::to_string(free_bytes) +
                                               " of " + std::to_string(total_bytes) + " bytes are free");
      }
    }
    auto buffer = std::make_unique<Buffer>();
    buffer->device = device;
    buffer->storage = std::make_shared<Storage>(device, Address(address), pinned, desc->size);
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

void BufferDestroy(accel_bk_buffer_t buffer) noexcept {
  // Queued work holds its own references to the storage: the memory goes once that work completed.
  std::unique_ptr<Buffer> owned(Unwrap(buffer));
}

accel_status_t BufferMap(accel_bk_buffer_t handle, uint64_t offset, uint64_t size, uint64_t flags,
                         void** out_ptr) noexcept {
  Buffer* buffer = Unwrap(handle);
  return Guard(*buffer->device->host, "buffer_map", [&] { return buffer->storage->Map(offset, size, flags, out_ptr); });
}

accel_status_t BufferUnmap(accel_bk_buffer_t handle) noexcept {
  Buffer* buffer = Unwrap(handle);
  return Guard(*buffer->device->host, "buffer_unmap", [&] { return buffer->storage->Unmap(); });
}

accel_status_t BufferGetHostAddress(accel_bk_buffer_t handle, void** out_address) noexcept {
  Buffer* buffer = Unwrap(handle);
  if (buffer->storage->host() == nullptr) {
    return buffer->device->host->Fail(ACCEL_ERROR_UNSUPPORTED,
                                      "device memory has no host address (map it, or create it HOST_PINNED)");
  }
  *out_address = buffer->storage->host();
  return ACCEL_SUCCESS;
}

accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t handle, uint64_t* out_address) noexcept {
  *out_address = Unwrap(handle)->storage->address();
  return ACCEL_SUCCESS;
}

}  // namespace accel::hip
