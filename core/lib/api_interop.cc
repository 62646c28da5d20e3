// C entry points: importing and exporting external memory, and the host and
// device addresses of buffers (docs/interop.md).
#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

bool KnownType(accel_external_memory_type_t type) {
  return type >= ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER && type <= ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER;
}

bool IsPointerType(accel_external_memory_type_t type) {
  return type == ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER || type == ACCEL_EXTERNAL_MEMORY_TYPE_CUDA_DEVICE_POINTER ||
         type == ACCEL_EXTERNAL_MEMORY_TYPE_HIP_DEVICE_POINTER || type == ACCEL_EXTERNAL_MEMORY_TYPE_LEVEL_ZERO_POINTER;
}

// A backend that refuses a memory type says so in its own words; the caller
// also learns which argument it was.
Status NameType(Status s, const char* argument, accel_external_memory_type_t type) {
  if (s.code() != ACCEL_ERROR_UNSUPPORTED) return s;
  return Status(s.code(), fmt::format("'{}' {}: {}", argument, static_cast<int>(type), s.message()));
}

}  // namespace

namespace accel::core {

Status ReadOnlyError(const char* argument) {
  return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' is read-only (imported with ACCEL_IMPORT_FLAG_READ_ONLY)", argument);
}

}  // namespace accel::core

extern "C" {

ACCEL_API accel_status_t accel_buffer_import(accel_device_t device, const accel_buffer_import_desc_t* desc,
                                             accel_buffer_t* out_buffer) {
  return GuardedOutput(__func__, out_buffer, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_NOT_NULL(desc);
    ACCEL_NOT_NULL(out_buffer);
    accel_buffer_import_desc_t d{};
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC, "desc", &d));
    ACCEL_REQUIRE(KnownType(d.type), ACCEL_ERROR_INVALID_ENUM, "'desc->type' {} is not an accel_external_memory_type_t",
                  static_cast<int>(d.type));
    ACCEL_REQUIRE(d.size > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->size' is 0");
    ACCEL_REQUIRE((d.flags & ~ACCEL_IMPORT_FLAG_READ_ONLY) == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->flags' has bits 0x{:x} outside ACCEL_IMPORT_FLAG_READ_ONLY",
                  d.flags & ~ACCEL_IMPORT_FLAG_READ_ONLY);
    ACCEL_REQUIRE(!IsPointerType(d.type) || d.handle != 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->handle' is a NULL pointer");
    ACCEL_REQUIRE(d.handle + d.offset >= d.handle && d.handle + d.offset + d.size >= d.handle + d.offset,
                  ACCEL_ERROR_INVALID_ARGUMENT, "'desc->offset' + 'desc->size' ({} + {}) wraps around", d.offset,
                  d.size);
    auto buffer = std::make_shared<Buffer>();
    buffer->device = dev;
    buffer->size = d.size;
    buffer->memory_kind =
        d.type == ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER ? ACCEL_MEMORY_KIND_HOST_PINNED : ACCEL_MEMORY_KIND_DEVICE;
    buffer->imported = true;
    buffer->read_only = (d.flags & ACCEL_IMPORT_FLAG_READ_ONLY) != 0;
    // The handle first: once buffer_import succeeded the backend owns desc->release, and a failure after it (no
    // handle slot, no host memory) would have destroyed the import, running release, while the caller, told the
    // import failed, frees the memory too. Nothing can fail after the import now.
    Instance& instance = InstanceOf(*dev);
    const uint64_t handle = instance.Adopt(HandleType::kBuffer, buffer);
    const Status imported = OnDevice(
        *dev, NameType(ACCEL_SLOT(*dev->backend, buffer_import, dev->bk, &d, &buffer->bk), "desc->type", d.type));
    if (!imported.ok()) {
      buffer->bk = nullptr;  // nothing of the backend's to destroy
      instance.Forget(handle);
      return imported;
    }
    *out_buffer = ToHandle<accel_buffer_t>(handle);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_export(accel_buffer_t buffer, accel_external_memory_type_t type,
                                             accel_external_memory_t* out_memory) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    ACCEL_REQUIRE(KnownType(type), ACCEL_ERROR_INVALID_ENUM, "'type' {} is not an accel_external_memory_type_t",
                  static_cast<int>(type));
    ACCEL_TRY(CheckOutStruct(out_memory, ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY, "out_memory"));
    accel_external_memory_t m{};
    m.stype = ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY;
    m.struct_size = sizeof(m);
    ACCEL_TRY(OnDevice(*self->device,
                       NameType(ACCEL_SLOT(*self->device->backend, buffer_export, self->bk, type, &m), "type", type)));
    m.type = type;
    FillOutStruct(out_memory, m);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_get_host_address(accel_buffer_t buffer, void** out_address) {
  return GuardedOutput(__func__, out_address, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    ACCEL_NOT_NULL(out_address);
    void* address = nullptr;
    ACCEL_TRY(OnDevice(*self->device, ACCEL_SLOT(*self->device->backend, buffer_get_host_address, self->bk, &address)));
    *out_address = address;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_get_device_address(accel_buffer_t buffer, uint64_t* out_address) {
  return GuardedOutput(__func__, out_address, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    ACCEL_NOT_NULL(out_address);
    const Device& dev = *self->device;
    ACCEL_REQUIRE((dev.caps.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES) != 0, ACCEL_ERROR_UNSUPPORTED,
                  "{} has no device addresses (ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES)", dev.label);
    uint64_t address = 0;
    ACCEL_TRY(OnDevice(dev, ACCEL_SLOT(*dev.backend, buffer_get_device_address, self->bk, &address)));
    *out_address = address;
    return Status::Ok();
  });
}

}  // extern "C"
