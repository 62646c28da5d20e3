// Buffers: device memory from cuMemAlloc, pinned host memory from cuMemHostAlloc (portable and mapped, so every
// device of the backend reaches it at its device address), each in its device's primary context; maps of pinned
// memory in place, of device memory through a host copy (common/gpu_storage.h, shared with the hip backend); the
// host and device addresses.
#include <cstring>
#include <memory>
#include <string>

#include "cuda_backend.h"

namespace accel::cuda {

// --- The vendor calls of the shared buffer storage ----------------------------------------------------------------

GpuTraits::Result GpuTraits::FreeStorage(const Device* device, Address address, void* host, const char** out_call) {
  *out_call = host != nullptr ? "cuMemFreeHost" : "cuMemFree";
  const CuApi& cu = device->runtime->cu;
  return host != nullptr ? cu.cuMemFreeHost(host) : cu.cuMemFree(address);
}

GpuTraits::Result GpuTraits::CopyToHost(const Device* device, void* dst, Address src, size_t size) {
  return device->runtime->cu.cuMemcpyDtoH(dst, src, size);
}

GpuTraits::Result GpuTraits::CopyFromHost(const Device* device, Address dst, const void* src, size_t size) {
  // From pageable memory cuMemcpyHtoD returns once the bytes are staged, before the DMA to the device completed, and
  // the backend's streams are non-blocking: they do not wait for the legacy default stream the copy ran on. A kernel
  // enqueued right after an unmap could read the old bytes; waiting for the default stream closes that window.
  const CuApi& cu = device->runtime->cu;
  const CUresult r = cu.cuMemcpyHtoD(dst, src, size);
  return r != CUDA_SUCCESS ? r : cu.cuStreamSynchronize(nullptr);
}

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    const CuApi& cu = device->runtime->cu;
    ScopedContext scope(device);
    if (scope.result() != CUDA_SUCCESS) {
      return host.Fail(StatusFromCu(scope.result()), CuFailure(cu, "cuCtxPushCurrent", scope.result()));
    }
    const auto size = static_cast<size_t>(desc->size);
    CUdeviceptr address = 0;
    void* pinned = nullptr;
    if (desc->memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED) {
      CUresult r = cu.cuMemHostAlloc(&pinned, size, kMemHostAllocPortable | kMemHostAllocDeviceMap);
      if (r != CUDA_SUCCESS) {
        return host.Fail(StatusFromCu(r), CuFailure(cu, "cuMemHostAlloc", r) + ": the request was " +
                                              std::to_string(desc->size) + " bytes of pinned host memory");
      }
      r = cu.cuMemHostGetDevicePointer(&address, pinned, 0);
      if (r != CUDA_SUCCESS) {
        cu.cuMemFreeHost(pinned);
        return host.Fail(StatusFromCu(r), CuFailure(cu, "cuMemHostGetDevicePointer", r));
      }
    } else {
      const CUresult r = cu.cuMemAlloc(&address, size);
      if (r != CUDA_SUCCESS) {
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        cu.cuMemGetInfo(&free_bytes, &total_bytes);
        return host.Fail(StatusFromCu(r), CuFailure(cu, "cuMemAlloc", r) + ": the request was " +
                                              std::to_string(desc->size) + " bytes; " + std::to_string(free_bytes) +
                                              " of " + std::to_string(total_bytes) + " bytes are free");
      }
    }
    auto buffer = std::make_unique<Buffer>();
    buffer->device = device;
    buffer->storage = std::make_shared<Storage>(device, address, pinned, desc->size);
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::cuda
