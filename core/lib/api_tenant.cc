// C entry points: process memory usage and tenants (docs/memory-limits.md).
#include <mutex>

#include "api_common.h"
#include "tenant.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace accel::core {

namespace {
// The last tenant bound on this thread, held while it is bound and after: binding it again (a runtime binds the
// same tenant around each task it runs) needs no handle lookup, since handle values are never reused.
thread_local std::shared_ptr<Tenant> t_recent;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
// The bound tenant: t_recent's, or null.
thread_local Tenant* t_bound = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
}  // namespace

std::shared_ptr<MemoryAccount> Tenant::AccountFor(const PhysicalDevice* device) {
  auto it = accounts.find(device);
  if (it != accounts.end()) return it->second;
  std::lock_guard lock(other_mutex);
  auto& account = others[device];
  if (!account) account = std::make_shared<MemoryAccount>(other_limit);
  return account;
}

std::shared_ptr<Tenant> ThreadTenant(const Instance* instance) {
  if (t_bound == nullptr || t_bound->instance_handle != instance->handle()) return nullptr;
  return t_recent;
}

}  // namespace accel::core

namespace {

// The bound tenant's handle, or NULL when none is bound or it was destroyed.
accel_tenant_t Previous() {
  return t_bound != nullptr && !t_bound->destroyed ? ToHandle<accel_tenant_t>(t_bound->handle()) : nullptr;
}

Status FillUsage(const MemoryAccount& account, accel_memory_usage_t* out) {
  ACCEL_TRY(CheckOutStruct(out, ACCEL_STRUCTURE_TYPE_MEMORY_USAGE, "out_usage"));
  accel_memory_usage_t u = account.Usage();
  FillOutStruct(out, u);
  return Status::Ok();
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_physical_device_get_memory_usage(accel_physical_device_t physical_device,
                                                                accel_memory_usage_t* out_usage) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PhysicalDevice, physical_device);
    return FillUsage(*self->account, out_usage);
  });
}

ACCEL_API accel_status_t accel_tenant_create(accel_instance_t instance, const accel_tenant_desc_t* desc,
                                             accel_tenant_t* out_tenant) {
  return GuardedOutput(__func__, out_tenant, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_NOT_NULL(desc);
    ACCEL_NOT_NULL(out_tenant);
    accel_tenant_desc_t d{};
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_TENANT_DESC, "desc", &d));
    ACCEL_REQUIRE(d.reserved0 == 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->reserved0' is {}, must be 0", d.reserved0);
    ACCEL_REQUIRE(d.limit_count == 0 || d.limits != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->limits' is NULL with 'desc->limit_count' {}", d.limit_count);
    auto tenant = std::make_shared<Tenant>();
    tenant->instance = self.get();
    tenant->instance_handle = self->handle();
    tenant->other_limit = d.other_limit;
    for (uint32_t i = 0; i < d.limit_count; ++i) {
      const std::string argument = fmt::format("desc->limits[{}].physical_device", i);
      auto physical = Resolve<PhysicalDevice>(d.limits[i].physical_device, argument.c_str());
      if (!physical.ok()) return physical.status();
      const PhysicalDevice* device = physical->get();
      bool ours = false;
      for (const auto& p : self->physical_devices()) ours = ours || p.get() == device;
      ACCEL_REQUIRE(ours, ACCEL_ERROR_INVALID_HANDLE, "'{}' is a physical device of another instance", argument);
      ACCEL_REQUIRE(tenant->accounts.count(device) == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                    "'{}' names physical device {} a second time", argument, device->props.index);
      tenant->accounts.emplace(device, std::make_shared<MemoryAccount>(d.limits[i].bytes));
    }
    const uint64_t handle = self->Adopt(HandleType::kTenant, tenant);
    try {
      tenant->name = d.name != nullptr && d.name[0] != '\0' ? fmt::format("tenant '{}'", d.name)
                                                            : fmt::format("tenant 0x{:x}", handle);
    } catch (...) {  // out of host memory: no live handle without its name
      self->Forget(handle);
      throw;
    }
    *out_tenant = ToHandle<accel_tenant_t>(handle);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_tenant_destroy(accel_tenant_t tenant) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Tenant, tenant);
    std::shared_ptr<Object> owned = self->instance->Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'tenant' is a stale tenant handle (already destroyed)");
    self->destroyed = true;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_tenant_get_memory_usage(accel_tenant_t tenant, accel_physical_device_t physical_device,
                                                       accel_memory_usage_t* out_usage) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Tenant, tenant);
    ACCEL_RESOLVE(physical, PhysicalDevice, physical_device);
    bool ours = false;
    for (const auto& p : self->instance->physical_devices()) ours = ours || p == physical;
    ACCEL_REQUIRE(ours, ACCEL_ERROR_INVALID_HANDLE, "'physical_device' is a physical device of another instance");
    return FillUsage(*self->AccountFor(physical.get()), out_usage);
  });
}

ACCEL_API accel_status_t accel_thread_set_tenant(accel_tenant_t tenant, accel_tenant_t* out_previous) {
  return Guarded(__func__, [&]() -> Status {
    const bool again = tenant != nullptr && t_recent && t_recent->handle() == reinterpret_cast<uint64_t>(tenant) &&
                       !t_recent->destroyed.load(std::memory_order_acquire);
    if (tenant != nullptr && !again) {
      ACCEL_RESOLVE(self, Tenant, tenant);
      if (out_previous != nullptr) *out_previous = Previous();
      t_recent = std::move(self);
    } else if (out_previous != nullptr) {
      *out_previous = Previous();
    }
    t_bound = tenant != nullptr ? t_recent.get() : nullptr;
    return Status::Ok();
  });
}

}  // extern "C"
