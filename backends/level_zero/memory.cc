// Buffers: device memory from zeMemAllocDevice, host memory from zeMemAllocHost (pinned, and reached by every device
// of the context at its host address); maps of host memory in place, of device memory through a host copy on the
// device's synchronous command list (common/gpu_storage.h, shared with the cuda and hip backends); the host and
// device addresses.
#include <memory>
#include <string>

#include "level_zero_backend.h"

namespace accel::level_zero {

namespace {

// Buffers start at 256 bytes (what gpu_storage.h and fills assume) or the allocation's own alignment when larger.
constexpr size_t kAlignment = 256;

// A blocking copy on the device's synchronous immediate command list.
ze_result_t SyncCopy(const Device* device, void* dst, const void* src, size_t size) {
  std::lock_guard lock(device->sync_mutex);
  return device->runtime->ze.zeCommandListAppendMemoryCopy(device->sync_list, dst, src, size, nullptr, 0, nullptr);
}

}  // namespace

// --- The vendor calls of the shared buffer storage ----------------------------------------------------------------

GpuTraits::Result GpuTraits::FreeStorage(const Device* device, Address address, void* host, const char** out_call) {
  *out_call = "zeMemFree";
  const ze_result_t r = device->runtime->ze.zeMemFree(device->ze_context, host != nullptr ? host : Ptr(address));
  return r;
}

GpuTraits::Result GpuTraits::CopyToHost(const Device* device, void* dst, Address src, size_t size) {
  return SyncCopy(device, dst, Ptr(src), size);
}

GpuTraits::Result GpuTraits::CopyFromHost(const Device* device, Address dst, const void* src, size_t size) {
  return SyncCopy(device, Ptr(dst), src, size);
}

namespace {

// Device memory of a buffer and the device's count of it, given back together.
struct AccountedStorage {
  std::shared_ptr<Storage> storage;
  Device* device;
  uint64_t size;
  ~AccountedStorage() {
    storage.reset();
    device->allocated.fetch_sub(size, std::memory_order_relaxed);
  }
};

}  // namespace

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    const ZeApi& ze = device->runtime->ze;
    const auto size = static_cast<size_t>(desc->size);
    void* address = nullptr;
    void* pinned = nullptr;
    if (desc->memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED) {
      ze_host_mem_alloc_desc_t host_desc{};
      host_desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
      const ze_result_t r = ze.zeMemAllocHost(device->ze_context, &host_desc, size, kAlignment, &pinned);
      if (r != ZE_RESULT_SUCCESS) {
        return host.Fail(StatusFromZe(r), ZeFailure("zeMemAllocHost", r) + ": the request was " +
                                              std::to_string(desc->size) + " bytes of host memory");
      }
      address = pinned;
    } else {
      ze_device_mem_alloc_desc_t device_desc{};
      device_desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
      const ze_result_t r =
          ze.zeMemAllocDevice(device->ze_context, &device_desc, size, kAlignment, device->device, &address);
      if (r != ZE_RESULT_SUCCESS) {
        const uint64_t used = device->allocated.load(std::memory_order_relaxed);
        return host.Fail(StatusFromZe(r), ZeFailure("zeMemAllocDevice", r) + ": the request was " +
                                              std::to_string(desc->size) + " bytes; this backend holds " +
                                              std::to_string(used) + " of " +
                                              std::to_string(device->capabilities.memory_total) + " bytes");
      }
      device->allocated.fetch_add(desc->size, std::memory_order_relaxed);
    }
    auto buffer = std::make_unique<Buffer>();
    buffer->device = device;
    auto storage = std::make_shared<Storage>(device, Address(address), pinned, desc->size);
    if (pinned == nullptr) {
      // The count goes down when the storage is freed: an aliasing pointer holds both.
      auto accounted = std::make_shared<AccountedStorage>(storage, device, desc->size);
      buffer->storage = std::shared_ptr<Storage>(accounted, storage.get());
    } else {
      buffer->storage = std::move(storage);
    }
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::level_zero
