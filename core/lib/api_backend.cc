// C entry points: backends.
#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

extern "C" {

ACCEL_API accel_status_t accel_instance_enumerate_backends(accel_instance_t instance, uint32_t* inout_count,
                                                           accel_backend_t* out_array) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    return FillHandles(self->backends(), inout_count, out_array, "inout_count");
  });
}

ACCEL_API accel_status_t accel_backend_get_properties(accel_backend_t backend,
                                                      accel_backend_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Backend, backend);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES, "out_properties"));
    accel_backend_properties_t p{};
    p.name = self->name().c_str();
    p.version = self->version().c_str();
    p.library_path = self->library_path().c_str();
    p.abi_version = self->abi_version();
    p.device_count = static_cast<uint32_t>(self->devices().size());
    FillOutStruct(out_properties, p);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_backend_enumerate_devices(accel_backend_t backend, uint32_t* inout_count,
                                                         accel_device_t* out_array) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Backend, backend);
    ACCEL_NOT_NULL(inout_count);
    // Devices know their instance; a backend with no visible device has none.
    std::vector<std::shared_ptr<Device>> devices;
    if (self->owner != nullptr) devices = self->owner->DevicesOf(self.get());
    return FillHandles(devices, inout_count, out_array, "inout_count");
  });
}

}  // extern "C"
