// Host buffers: ordinary aligned host memory for every memory kind. Freeing is
// stream-ordered because queued operations hold their own Storage references.
#include "memory.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "device.h"

namespace accel::host {

std::shared_ptr<Storage> Storage::Allocate(uint64_t size) {
  // aligned_alloc wants a multiple of the alignment; a zero size still gets a valid, unique pointer.
  if (size > SIZE_MAX - kBufferAlignment) return nullptr;
  const size_t rounded =
      size == 0 ? kBufferAlignment : (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  Bytes bytes(static_cast<std::byte*>(std::aligned_alloc(kBufferAlignment, rounded)));
  if (bytes == nullptr) return nullptr;
  return std::make_shared<Storage>(std::move(bytes), size);
}

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const HostServices& host = *device->host;
  return Guard(host, "buffer_create", [&]() -> accel_status_t {
    if (!ACCEL_HOST_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "buffer description is " + std::to_string(desc->struct_size) + " bytes, too small for ABI 1.0");
    }
    const accel_memory_kind_t kind = desc->memory_kind;
    if (kind != ACCEL_MEMORY_KIND_DEVICE && kind != ACCEL_MEMORY_KIND_HOST_PINNED) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "memory kind " + std::to_string(static_cast<int>(kind)) +
                                                    " is not supported by the host backend");
    }
    std::shared_ptr<Storage> storage = Storage::Allocate(desc->size);
    if (storage == nullptr) {
      return host.Fail(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                       "cannot allocate " + std::to_string(desc->size) + " bytes: out of host memory (" +
                           std::to_string(AvailableMemoryBytes()) + " bytes available)");
    }
    auto buffer = std::make_unique<Buffer>(Buffer{device, kind, std::move(storage)});
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

void BufferDestroy(accel_bk_buffer_t handle) noexcept {
  // Drops the handle's reference; operations still queued keep the storage until they complete.
  std::unique_ptr<Buffer> buffer(Unwrap(handle));
}

accel_status_t BufferMap(accel_bk_buffer_t handle, uint64_t offset, uint64_t /*size*/, uint64_t /*flags*/,
                         void** out_ptr) noexcept {
  // Host memory is always mapped; the core checked the range and flags.
  const Buffer* buffer = Unwrap(handle);
  *out_ptr = buffer->storage->data() + offset;
  return ACCEL_SUCCESS;
}

accel_status_t BufferUnmap(accel_bk_buffer_t /*handle*/) noexcept { return ACCEL_SUCCESS; }

}  // namespace accel::host
