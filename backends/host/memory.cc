// Host buffers: ordinary aligned host memory for every memory kind, or imported
// host memory used in place. Freeing is stream-ordered because queued
// operations hold their own Storage references.
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

std::shared_ptr<Storage> Storage::Import(std::byte* data, uint64_t size, accel_release_callback_t release,
                                         void* release_user_data) {
  return std::make_shared<Storage>(data, size, release, release_user_data);
}

namespace {

constexpr const char* kImportedTypes = "ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER";

std::string ExternalMemoryTypeName(accel_external_memory_type_t type) {
  switch (type) {
    case ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER: return "ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER";
    case ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD: return "ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD";
    case ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD: return "ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD";
    case ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER: return "ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER";
    case ACCEL_EXTERNAL_MEMORY_TYPE_HIP_DEVICE_POINTER: return "ACCEL_EXTERNAL_MEMORY_TYPE_HIP_DEVICE_POINTER";
    case ACCEL_EXTERNAL_MEMORY_TYPE_OPENCL_MEM: return "ACCEL_EXTERNAL_MEMORY_TYPE_OPENCL_MEM";
    case ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER: return "ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER";
    case ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER: return "ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER";
    case ACCEL_EXTERNAL_MEMORY_TYPE_FORCE32: break;
  }
  return "external memory type " + std::to_string(static_cast<int>(type));
}

}  // namespace

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const HostServices& host = *device->host;
  return Guard(host, "buffer_create", [&]() -> accel_status_t {
    if (!ACCEL_BACKEND_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "buffer description is " + std::to_string(desc->struct_size) + " bytes, too small for ABI 1.0");
    }
    const accel_memory_kind_t kind = desc->memory_kind;
    if (kind != ACCEL_MEMORY_KIND_DEVICE && kind != ACCEL_MEMORY_KIND_HOST_PINNED) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "memory kind " + std::to_string(static_cast<int>(kind)) +
                                                    " is not supported by the " + std::string(host.backend_name()) +
                                                    " backend");
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

// --- Interop -----------------------------------------------------------------------------------------------------

accel_status_t BufferImport(accel_bk_device_t device_handle, const accel_buffer_import_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const HostServices& host = *device->host;
  return Guard(host, "buffer_import", [&]() -> accel_status_t {
    if (!ACCEL_BACKEND_HAS_FIELD(desc, accel_buffer_import_desc_t, size)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "import description is " + std::to_string(desc->struct_size) + " bytes, too small for ABI 1.0");
    }
    const auto d = ReadPrefix<accel_buffer_import_desc_t>(desc, desc->struct_size);
    if (d.type != ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the " + std::string(host.backend_name()) + " backend cannot import " +
                                                    ExternalMemoryTypeName(d.type) + " memory; it imports " +
                                                    kImportedTypes + " only");
    }
    if (d.handle == 0) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "the host pointer ('handle') is NULL");
    if (d.offset > UINTPTR_MAX - d.handle || d.size - 1 > UINTPTR_MAX - d.handle - d.offset) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "'handle' + 'offset' + 'size' wraps around the address space");
    }
    // The handle first, so that a failure to allocate it never runs the release callback: the memory stays the
    // caller's. From the storage's creation on, the callback is ours to run, exactly once.
    auto buffer = std::make_unique<Buffer>(Buffer{device, ACCEL_MEMORY_KIND_HOST_PINNED, nullptr});
    buffer->storage = Storage::Import(reinterpret_cast<std::byte*>(static_cast<uintptr_t>(d.handle + d.offset)), d.size,
                                      d.release, d.release_user_data);
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

accel_status_t BufferExport(accel_bk_buffer_t handle, accel_external_memory_type_t type,
                            accel_external_memory_t* out_memory) noexcept {
  const Buffer* buffer = Unwrap(handle);
  const HostServices& host = *buffer->device->host;
  return Guard(host, "buffer_export", [&]() -> accel_status_t {
    if (type != ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the " + std::string(host.backend_name()) + " backend cannot export " +
                                                    ExternalMemoryTypeName(type) + " memory; it exports " +
                                                    kImportedTypes + " only");
    }
    accel_external_memory_t memory = ReadPrefix<accel_external_memory_t>(out_memory, out_memory->struct_size);
    memory.type = type;
    memory.reserved0 = 0;
    memory.handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(buffer->storage->data()));
    memory.handle2 = 0;
    memory.offset = 0;
    memory.size = buffer->storage->size();
    WritePrefix(memory, out_memory);
    return ACCEL_SUCCESS;
  });
}

accel_status_t BufferGetHostAddress(accel_bk_buffer_t handle, void** out_address) noexcept {
  // Both memory kinds, and imported memory, are host memory.
  *out_address = Unwrap(handle)->storage->data();
  return ACCEL_SUCCESS;
}

accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t handle, uint64_t* out_address) noexcept {
  // The device is the CPU: a device address is the host address.
  *out_address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(Unwrap(handle)->storage->data()));
  return ACCEL_SUCCESS;
}

}  // namespace accel::host
