// Buffers: aligned host memory for both memory kinds, counted against the
// device's capacity. Every buffer is mapped all the time. Freeing is
// stream-ordered because queued operations hold their own Storage references.
#include <memory>
#include <string>

#include "symbols.h"

namespace accel::template_backend {
namespace {

constexpr uint64_t kAlignment = 64;

}  // namespace

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    // The core checked the size (> 0, within max_allocation) and the memory kind; both kinds are host memory here.
    if (!ACCEL_TEMPLATE_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "buffer description too small for ABI 1.0");
    }
    const uint64_t size = desc->size;
    if (!device->Reserve(size)) {
      const uint64_t total = device->capabilities.memory_total;
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED, std::to_string(size) + " bytes requested, " +
                                                           std::to_string(total - device->Used()) + " bytes free of " +
                                                           std::to_string(total));
    }
    // aligned_alloc wants a multiple of the alignment. Not zero-filled, as device memory usually is not.
    const uint64_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    auto* data = static_cast<std::byte*>(std::aligned_alloc(kAlignment, rounded));
    if (data == nullptr) {
      device->Unreserve(size);
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                       "cannot allocate " + std::to_string(size) + " bytes of host memory");
    }
    std::shared_ptr<Storage> storage;
    try {
      storage = std::make_shared<Storage>(device, data, size);  // from here the storage owns `data`
    } catch (...) {
      std::free(data);
      device->Unreserve(size);
      throw;
    }
    *out_buffer = Wrap(std::make_unique<Buffer>(Buffer{device, std::move(storage)}).release());
    return ACCEL_SUCCESS;
  });
}

void BufferDestroy(accel_bk_buffer_t buffer) noexcept {
  // Drops the handle's reference; operations still queued keep the storage until they complete.
  std::unique_ptr<Buffer> owned(Unwrap(buffer));
}

accel_status_t BufferMap(accel_bk_buffer_t buffer, uint64_t offset, uint64_t /*size*/, uint64_t /*flags*/,
                         void** out_ptr) noexcept {
  // Host memory is always mapped; the core checked the range and the flags. Ordering with stream work is the
  // caller's. A device with memory of its own maps (or stages) here and writes back in buffer_unmap.
  *out_ptr = Unwrap(buffer)->storage->data() + offset;
  return ACCEL_SUCCESS;
}

accel_status_t BufferUnmap(accel_bk_buffer_t /*buffer*/) noexcept { return ACCEL_SUCCESS; }

}  // namespace accel::template_backend
