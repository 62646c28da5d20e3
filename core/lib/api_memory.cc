// C entry points: buffers, mapping, and the helpers for sizes and ranges.
#include "api_common.h"
#include "tenant.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace accel::core {

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  if (v == static_cast<double>(static_cast<uint64_t>(v)))
    return fmt::format("{} {}", static_cast<uint64_t>(v), kUnits[unit]);
  return fmt::format("{:.1f} {}", v, kUnits[unit]);
}

Status RangeError(const Buffer& buffer, uint64_t offset, uint64_t size, const char* buffer_argument,
                  const char* offset_argument) {
  return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' + 'size' ({} + {}) is past the end of '{}' ({} bytes)",
               offset_argument, offset, size, buffer_argument, buffer.size);
}

// Counts `bytes` against the calling thread's tenant on the device's instance
// (if any) and the process's account of its physical device, or says which
// limit refused them; a refusal leaves both accounts as they were.
Expected<std::unique_ptr<MemoryCharge>> ChargeDeviceMemory(const Device& dev, uint64_t bytes) {
  std::vector<std::shared_ptr<MemoryAccount>> accounts;
  std::vector<uint64_t> used_after;
  accounts.reserve(2);  // allocated before anything is reserved: nothing below throws while a reservation is held
  used_after.reserve(2);
  std::shared_ptr<Tenant> tenant = ThreadTenant(dev.instance);
  if (tenant) {
    if (tenant->destroyed) {
      return Error(ACCEL_ERROR_FAILED_PRECONDITION,
                   "{}: the calling thread's {} was destroyed (bind another tenant, or none)", dev.label, tenant->name);
    }
    std::shared_ptr<MemoryAccount> account = tenant->AccountFor(dev.physical);
    std::optional<uint64_t> reserved = account->Reserve(bytes);
    if (!reserved) {
      const uint64_t limit = account->limit();
      if (limit == 0) {
        return Error(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                     "{}: 'desc->size' {} requested: {} may not allocate on this device", dev.label, FormatBytes(bytes),
                     tenant->name);
      }
      return Error(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                   "{}: 'desc->size' {} requested: {} holds {} of its {} limit on this device", dev.label,
                   FormatBytes(bytes), tenant->name, FormatBytes(account->used()), FormatBytes(limit));
    }
    accounts.push_back(std::move(account));
    used_after.push_back(*reserved);
  }
  const std::shared_ptr<MemoryAccount>& process = dev.physical->account;
  std::optional<uint64_t> reserved = process->Reserve(bytes);
  if (!reserved) {
    // The tenant's reservation goes back uncommitted: its buffer count and peak never saw this allocation.
    for (const auto& account : accounts) account->Cancel(bytes);
    return Error(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                 "{}: 'desc->size' {} requested: the process holds {} of its {} limit on this device "
                 "(ACCEL_MEMORY_LIMIT)",
                 dev.label, FormatBytes(bytes), FormatBytes(process->used()), FormatBytes(process->limit()));
  }
  accounts.push_back(process);
  used_after.push_back(*reserved);
  std::unique_ptr<MemoryCharge> charge;
  try {
    charge = std::make_unique<MemoryCharge>(accounts, bytes);
  } catch (...) {  // out of host memory: give the bytes back before the failure goes on
    for (const auto& account : accounts) account->Cancel(bytes);
    throw;
  }
  for (size_t i = 0; i < accounts.size(); ++i) accounts[i]->Commit(used_after[i]);
  return charge;
}

}  // namespace accel::core

extern "C" {

ACCEL_API accel_status_t accel_buffer_create(accel_device_t device, const accel_buffer_desc_t* desc,
                                             accel_buffer_t* out_buffer) {
  return GuardedOutput(__func__, out_buffer, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_NOT_NULL(desc);
    ACCEL_NOT_NULL(out_buffer);
    accel_buffer_desc_t d{};
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_BUFFER_DESC, "desc", &d));
    ACCEL_REQUIRE(d.size > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->size' is 0");
    ACCEL_REQUIRE(d.flags == 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->flags' 0x{:x} must be 0", d.flags);
    ACCEL_REQUIRE(d.memory_kind == ACCEL_MEMORY_KIND_DEVICE || d.memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED,
                  ACCEL_ERROR_INVALID_ENUM, "'desc->memory_kind' {} is not an accel_memory_kind_t",
                  static_cast<int>(d.memory_kind));
    const accel_device_capabilities_t& c = dev->caps;
    if (d.size > c.max_allocation) {
      return Error(ACCEL_ERROR_RESOURCE_EXHAUSTED,
                   "{}: 'desc->size' {} requested, {} is the largest allocation ({} total)", dev->label,
                   FormatBytes(d.size), FormatBytes(c.max_allocation), FormatBytes(c.memory_total));
    }
    auto buffer = std::make_shared<Buffer>();
    buffer->device = dev;
    buffer->size = d.size;
    buffer->memory_kind = d.memory_kind;
    if (d.memory_kind == ACCEL_MEMORY_KIND_DEVICE) {
      auto charge = ChargeDeviceMemory(*dev, d.size);
      if (!charge.ok()) return charge.status();
      buffer->charge = std::move(charge.value());
    }
    ACCEL_TRY(OnDevice(*dev, ACCEL_SLOT(*dev->backend, buffer_create, dev->bk, &d, &buffer->bk)));
    *out_buffer = ToHandle<accel_buffer_t>(InstanceOf(*dev).Adopt(HandleType::kBuffer, buffer));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_destroy(accel_buffer_t buffer) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    std::shared_ptr<Object> owned = InstanceOf(*self->device).Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'buffer' is a stale buffer handle (already destroyed)");
    // The backend object goes when the last reference does: a call in flight
    // on another thread keeps it alive until it returns.
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_get_properties(accel_buffer_t buffer, accel_buffer_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES, "out_properties"));
    accel_buffer_properties_t p{};
    p.size = self->size;
    p.memory_kind = self->memory_kind;
    {
      std::lock_guard lock(self->mutex);
      p.mapped = self->mapped ? 1 : 0;
    }
    p.device = ToHandle<accel_device_t>(self->device->handle());
    FillOutStruct(out_properties, p);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_map(accel_buffer_t buffer, uint64_t offset, uint64_t size, uint64_t flags,
                                          void** out_ptr) {
  return GuardedOutput(__func__, out_ptr, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    ACCEL_NOT_NULL(out_ptr);
    ACCEL_REQUIRE((flags & ~(ACCEL_MAP_READ | ACCEL_MAP_WRITE)) == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'flags' has bits 0x{:x} outside ACCEL_MAP_READ | ACCEL_MAP_WRITE",
                  flags & ~(ACCEL_MAP_READ | ACCEL_MAP_WRITE));
    ACCEL_REQUIRE(size > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'size' is 0");
    ACCEL_TRY(CheckRange(*self, offset, size, "buffer", "offset"));
    if ((flags & ACCEL_MAP_WRITE) != 0) ACCEL_TRY(CheckWritable(*self, "buffer"));
    std::lock_guard lock(self->mutex);
    ACCEL_REQUIRE(!self->mapped, ACCEL_ERROR_FAILED_PRECONDITION, "'buffer' is already mapped");
    void* p = nullptr;
    ACCEL_TRY(OnDevice(*self->device, ACCEL_SLOT(*self->device->backend, buffer_map, self->bk, offset, size,
                                                 flags != 0        ? flags
                                                 : self->read_only ? ACCEL_MAP_READ
                                                                   : (ACCEL_MAP_READ | ACCEL_MAP_WRITE),
                                                 &p)));
    self->mapped = true;
    *out_ptr = p;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_buffer_unmap(accel_buffer_t buffer) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Buffer, buffer);
    std::lock_guard lock(self->mutex);
    ACCEL_REQUIRE(self->mapped, ACCEL_ERROR_FAILED_PRECONDITION, "'buffer' is not mapped");
    ACCEL_TRY(OnDevice(*self->device, ACCEL_SLOT(*self->device->backend, buffer_unmap, self->bk)));
    self->mapped = false;
    return Status::Ok();
  });
}

}  // extern "C"
