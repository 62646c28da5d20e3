// C entry points: instances and the loader report.
#include "api_common.h"
#include "host_callback.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

extern "C" {

ACCEL_API accel_status_t accel_instance_create(const accel_instance_desc_t* desc, accel_instance_t* out_instance) {
  return GuardedOutput(__func__, out_instance, [&]() -> Status {
    ACCEL_NOT_NULL(out_instance);
    accel_instance_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    d.struct_size = sizeof(d);
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_INSTANCE_DESC, "desc", &d));
    ACCEL_REQUIRE((d.flags & ~ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT) == 0, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'desc->flags' has unknown bits 0x{:x}", d.flags & ~ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT);
    ACCEL_REQUIRE(d.log_level >= ACCEL_LOG_LEVEL_OFF && d.log_level <= ACCEL_LOG_LEVEL_DEBUG, ACCEL_ERROR_INVALID_ENUM,
                  "'desc->log_level' {} is not an accel_log_level_t", static_cast<int>(d.log_level));
    auto created = Instance::Create(d);
    if (!created.ok()) return created.status();
    std::shared_ptr<Instance> instance = std::move(created.value());
    *out_instance = ToHandle<accel_instance_t>(HandleTable::Get().Insert(HandleType::kInstance, instance));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_destroy(accel_instance_t instance) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_REQUIRE(!InCallbackOf(self.get()), ACCEL_ERROR_FAILED_PRECONDITION,
                  "'instance' is running this host callback on one of its streams: an instance cannot be destroyed "
                  "from a callback of its own streams (destroy it from another thread); the instance is left as it "
                  "was");
    // Exactly one of two racing destroys tears the instance down; the other finds its handle stale.
    ACCEL_REQUIRE(HandleTable::Get().Remove(self->handle()) != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'instance' is a stale instance handle (already destroyed)");
    self->Destroy();
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_loader_entry_count(accel_instance_t instance, uint32_t* out_count) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_NOT_NULL(out_count);
    *out_count = static_cast<uint32_t>(self->reports().size());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_loader_entry(accel_instance_t instance, uint32_t index,
                                                         accel_loader_entry_t* out_entry) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    const auto& reports = self->reports();
    ACCEL_REQUIRE(index < reports.size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: the report has {} entries", index, reports.size());
    ACCEL_TRY(CheckOutStruct(out_entry, ACCEL_STRUCTURE_TYPE_LOADER_ENTRY, "out_entry"));
    const LoadReport& r = reports[index];
    accel_loader_entry_t e{};
    e.backend_name = r.backend_name.c_str();
    e.manifest_path = r.manifest_path.c_str();
    e.library_path = r.library_path.c_str();
    e.reason = r.reason.c_str();
    e.state = r.state;
    e.status = r.status;
    e.negotiated_abi_version = r.negotiated_abi_version;
    e.backend_abi_version = r.backend_abi_version;
    e.device_count = r.device_count;
    FillOutStruct(out_entry, e);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_loader_warning_count(accel_instance_t instance, uint32_t* out_count) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_NOT_NULL(out_count);
    *out_count = static_cast<uint32_t>(self->warnings().size());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_get_loader_warning(accel_instance_t instance, uint32_t index,
                                                           accel_loader_warning_t* out_warning) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    ACCEL_TRY(CheckOutStruct(out_warning, ACCEL_STRUCTURE_TYPE_LOADER_WARNING, "out_warning"));
    const auto& warnings = self->warnings();
    ACCEL_REQUIRE(index < warnings.size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: there are {} setting warnings", index, warnings.size());
    const SettingWarning& w = warnings[index];
    accel_loader_warning_t out{};
    out.setting = w.setting.c_str();
    out.value = w.value.c_str();
    out.item = w.item.c_str();
    out.message = w.message.c_str();
    FillOutStruct(out_warning, out);
    return Status::Ok();
  });
}

}  // extern "C"
