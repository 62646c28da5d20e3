// Buffers: device memory from hipMalloc, pinned host memory from hipHostMalloc (portable and mapped, so every
// device of the backend reaches it at its device address), each with its device current; maps of pinned
// memory in place, of device memory through a host copy (common/gpu_storage.h, shared with the cuda backend); the
// host and device addresses.
#include <cstring>
#include <memory>
#include <string>

#include "hip_backend.h"

namespace accel::hip {

// --- The vendor calls of the shared buffer storage ----------------------------------------------------------------

GpuTraits::Result GpuTraits::FreeStorage(const Device* device, Address address, void* host, const char** out_call) {
  *out_call = host != nullptr ? "hipHostFree" : "hipFree";
  const HipApi& hip = device->runtime->hip;
  return host != nullptr ? hip.hipHostFree(host) : hip.hipFree(Ptr(address));
}

GpuTraits::Result GpuTraits::CopyToHost(const Device* device, void* dst, Address src, size_t size) {
  return device->runtime->hip.hipMemcpyDtoH(dst, Ptr(src), size);
}

GpuTraits::Result GpuTraits::CopyFromHost(const Device* device, Address dst, const void* src, size_t size) {
  // hipMemcpyHtoD takes a non-const source; it only reads it.
  return device->runtime->hip.hipMemcpyHtoD(Ptr(dst), const_cast<void*>(src), size);
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

}  // namespace accel::hip
