// C entry points: devices, capabilities and physical devices.
#include <string>

#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

struct KeyInfo {
  accel_device_info_key_t key;
  const char* name;
  accel_value_type_t type;
};

// The registry of capability keys (docs/capability-keys.md).
constexpr KeyInfo kKeys[] = {
    {ACCEL_DEVICE_INFO_KIND, "kind", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_NAME, "name", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_VENDOR, "vendor", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_VENDOR_ID, "vendor_id", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_DEVICE_ID, "device_id", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_ARCHITECTURE, "architecture", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_SKU, "sku", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_DRIVER_VERSION, "driver_version", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_BACKEND_NAME, "backend_name", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_STABLE_ID, "stable_id", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID, "physical_device_id", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_UUID, "uuid", ACCEL_VALUE_TYPE_BYTES_16},
    {ACCEL_DEVICE_INFO_PCI_BUS_ID, "pci_bus_id", ACCEL_VALUE_TYPE_STRING},
    {ACCEL_DEVICE_INFO_NUMA_NODE, "numa_node", ACCEL_VALUE_TYPE_INT32},
    {ACCEL_DEVICE_INFO_FLAGS, "flags", ACCEL_VALUE_TYPE_FLAGS64},
    {ACCEL_DEVICE_INFO_SIMULATED, "simulated", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_COMPUTE_UNITS, "compute_units", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_CLOCK_MHZ, "clock_mhz", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_MEMORY_TOTAL, "memory_total", ACCEL_VALUE_TYPE_UINT64},
    {ACCEL_DEVICE_INFO_MEMORY_FREE, "memory_free", ACCEL_VALUE_TYPE_UINT64},
    {ACCEL_DEVICE_INFO_MAX_ALLOCATION, "max_allocation", ACCEL_VALUE_TYPE_UINT64},
    {ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE, "max_buffer_range", ACCEL_VALUE_TYPE_UINT64},
    {ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE, "local_memory_size", ACCEL_VALUE_TYPE_UINT64},
    {ACCEL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, "max_work_group_size", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS, "max_work_group_dims", ACCEL_VALUE_TYPE_UINT32_3},
    {ACCEL_DEVICE_INFO_MAX_GRID_DIMS, "max_grid_dims", ACCEL_VALUE_TYPE_UINT32_3},
    {ACCEL_DEVICE_INFO_MAX_ARGUMENT_SIZE, "max_argument_size", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_SUBGROUP_SIZE, "subgroup_size", ACCEL_VALUE_TYPE_UINT32},
    {ACCEL_DEVICE_INFO_NUMERIC_FORMATS, "numeric_formats", ACCEL_VALUE_TYPE_FLAGS64},
    {ACCEL_DEVICE_INFO_KERNEL_FORMATS, "kernel_formats", ACCEL_VALUE_TYPE_FLAGS64},
    {ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS, "modeled_kernel_formats", ACCEL_VALUE_TYPE_FLAGS64},
    {ACCEL_DEVICE_INFO_FEATURES, "features", ACCEL_VALUE_TYPE_FLAGS64},
    {ACCEL_DEVICE_INFO_BACKEND_INDEX, "backend_index", ACCEL_VALUE_TYPE_UINT32},
};

const KeyInfo* FindKey(accel_device_info_key_t key) {
  for (const KeyInfo& k : kKeys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

template <typename T>
std::string Bytes(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(T));
}

std::string CString(const char* field, size_t size) {
  std::string s(field, strnlen(field, size));
  s.push_back('\0');
  return s;
}

// The value of `key` as raw bytes (strings with their NUL).
// The backend's free and total bytes, seen through ACCEL_MEMORY_LIMIT: under a limit the device looks as large as
// the limit, and what the process holds of it is not free (accel_device_get_memory_info and MEMORY_FREE alike, so
// that a framework sizing a pool from either stays inside its share; docs/memory-limits.md).
Status LimitedMemoryInfo(const Device& d, uint64_t* free_bytes, uint64_t* total) {
  ACCEL_TRY(OnDevice(d, ACCEL_SLOT(*d.backend, device_get_memory_info, d.bk, free_bytes, total)));
  const MemoryAccount& process = *d.physical->account;
  const uint64_t limit = process.limit();
  if (limit != ACCEL_MEMORY_UNLIMITED) {
    const uint64_t used = process.used();
    *total = std::min(*total, limit);
    *free_bytes = std::min(*free_bytes, limit > used ? limit - used : 0);
  }
  return Status::Ok();
}

Expected<std::string> InfoValue(const Device& d, accel_device_info_key_t key) {
  const accel_device_capabilities_t& c = d.caps;
  switch (key) {
    case ACCEL_DEVICE_INFO_KIND: return Bytes(static_cast<uint32_t>(c.kind));
    case ACCEL_DEVICE_INFO_NAME: return CString(c.name, sizeof(c.name));
    case ACCEL_DEVICE_INFO_VENDOR: return CString(c.vendor, sizeof(c.vendor));
    case ACCEL_DEVICE_INFO_VENDOR_ID: return Bytes(c.vendor_id);
    case ACCEL_DEVICE_INFO_DEVICE_ID: return Bytes(c.device_id);
    case ACCEL_DEVICE_INFO_ARCHITECTURE: return CString(c.architecture, sizeof(c.architecture));
    case ACCEL_DEVICE_INFO_SKU: return CString(c.sku, sizeof(c.sku));
    case ACCEL_DEVICE_INFO_DRIVER_VERSION: return CString(c.driver_version, sizeof(c.driver_version));
    case ACCEL_DEVICE_INFO_BACKEND_NAME: return CString(c.backend_name, sizeof(c.backend_name));
    case ACCEL_DEVICE_INFO_STABLE_ID: return CString(c.stable_id, sizeof(c.stable_id));
    case ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID: return d.physical_id + '\0';
    case ACCEL_DEVICE_INFO_UUID: return std::string(reinterpret_cast<const char*>(c.uuid), sizeof(c.uuid));
    case ACCEL_DEVICE_INFO_PCI_BUS_ID: return CString(c.pci_bus_id, sizeof(c.pci_bus_id));
    case ACCEL_DEVICE_INFO_NUMA_NODE: return Bytes(c.numa_node);
    case ACCEL_DEVICE_INFO_FLAGS: return Bytes(c.flags);
    case ACCEL_DEVICE_INFO_SIMULATED:
      return Bytes(static_cast<uint32_t>((c.flags & ACCEL_DEVICE_FLAG_SIMULATED) ? 1 : 0));
    case ACCEL_DEVICE_INFO_COMPUTE_UNITS: return Bytes(c.compute_units);
    case ACCEL_DEVICE_INFO_CLOCK_MHZ: return Bytes(c.clock_mhz);
    case ACCEL_DEVICE_INFO_MEMORY_TOTAL: return Bytes(c.memory_total);
    case ACCEL_DEVICE_INFO_MEMORY_FREE: {
      uint64_t free_bytes = 0;
      uint64_t total = 0;
      ACCEL_TRY(LimitedMemoryInfo(d, &free_bytes, &total));
      return Bytes(free_bytes);
    }
    case ACCEL_DEVICE_INFO_MAX_ALLOCATION: return Bytes(c.max_allocation);
    case ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE: return Bytes(c.max_buffer_range);
    case ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE: return Bytes(c.local_memory_size);
    case ACCEL_DEVICE_INFO_MAX_WORK_GROUP_SIZE: return Bytes(c.max_work_group_size);
    case ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS: return Bytes(c.max_work_group_dims);
    case ACCEL_DEVICE_INFO_MAX_GRID_DIMS: return Bytes(c.max_grid_dims);
    case ACCEL_DEVICE_INFO_MAX_ARGUMENT_SIZE: return Bytes(c.max_argument_size);
    case ACCEL_DEVICE_INFO_SUBGROUP_SIZE: return Bytes(c.subgroup_size);
    case ACCEL_DEVICE_INFO_NUMERIC_FORMATS: return Bytes(c.numeric_formats);
    case ACCEL_DEVICE_INFO_KERNEL_FORMATS: return Bytes(c.kernel_formats);
    case ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS: return Bytes(c.modeled_kernel_formats);
    case ACCEL_DEVICE_INFO_FEATURES: return Bytes(c.features);
    case ACCEL_DEVICE_INFO_BACKEND_INDEX: return Bytes(d.backend_index);
    default: break;
  }
  return Error(ACCEL_ERROR_INVALID_ENUM, "'key' {} is not a registered accel_device_info_key_t", static_cast<int>(key));
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_device_info_key_describe(accel_device_info_key_t key, const char** out_name,
                                                        accel_value_type_t* out_type) {
  return GuardedOutput(__func__, out_name, [&]() -> Status {
    const KeyInfo* k = FindKey(key);
    ACCEL_REQUIRE(k != nullptr, ACCEL_ERROR_INVALID_ENUM, "'key' {} is not a registered accel_device_info_key_t",
                  static_cast<int>(key));
    ACCEL_REQUIRE(out_name != nullptr || out_type != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'out_name' and 'out_type' are both NULL");
    if (out_name != nullptr) *out_name = k->name;
    if (out_type != nullptr) *out_type = k->type;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_info(accel_device_t device, accel_device_info_key_t key, size_t size,
                                               void* value, size_t* out_size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Device, device);
    ACCEL_REQUIRE(FindKey(key) != nullptr, ACCEL_ERROR_INVALID_ENUM,
                  "'key' {} is not a registered accel_device_info_key_t", static_cast<int>(key));
    ACCEL_REQUIRE(value != nullptr || out_size != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'value' and 'out_size' are both NULL");
    auto bytes = InfoValue(*self, key);
    if (!bytes.ok()) return bytes.status();
    if (out_size != nullptr) *out_size = bytes->size();
    if (value == nullptr) return Status::Ok();
    ACCEL_REQUIRE(size >= bytes->size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'size' {} is too small for key '{}' ({} bytes needed)", size, FindKey(key)->name, bytes->size());
    std::memcpy(value, bytes->data(), bytes->size());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_capabilities(accel_device_t device,
                                                       accel_device_capabilities_t* out_capabilities) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Device, device);
    ACCEL_TRY(CheckOutStruct(out_capabilities, ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES, "out_capabilities"));
    FillOutStruct(out_capabilities, self->caps);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_device_get_memory_info(accel_device_t device, uint64_t* out_free, uint64_t* out_total) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Device, device);
    ACCEL_REQUIRE(out_free != nullptr || out_total != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'out_free' and 'out_total' are both NULL");
    uint64_t free_bytes = 0;
    uint64_t total = 0;
    ACCEL_TRY(LimitedMemoryInfo(*self, &free_bytes, &total));
    if (out_free != nullptr) *out_free = free_bytes;
    if (out_total != nullptr) *out_total = total;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_enumerate_devices(accel_instance_t instance, uint32_t* inout_count,
                                                          accel_device_t* out_array) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    return FillHandles(self->devices(), inout_count, out_array, "inout_count");
  });
}

ACCEL_API accel_status_t accel_device_get_backend(accel_device_t device, accel_backend_t* out_backend) {
  return GuardedOutput(__func__, out_backend, [&]() -> Status {
    ACCEL_RESOLVE(self, Device, device);
    ACCEL_NOT_NULL(out_backend);
    *out_backend = ToHandle<accel_backend_t>(self->backend->handle());
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_instance_enumerate_physical_devices(accel_instance_t instance, uint32_t* inout_count,
                                                                   accel_physical_device_t* out_array) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Instance, instance);
    return FillHandles(self->physical_devices(), inout_count, out_array, "inout_count");
  });
}

ACCEL_API accel_status_t accel_physical_device_get_properties(accel_physical_device_t physical_device,
                                                              accel_physical_device_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PhysicalDevice, physical_device);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES, "out_properties"));
    FillOutStruct(out_properties, self->props);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_physical_device_enumerate_devices(accel_physical_device_t physical_device,
                                                                 uint32_t* inout_count, accel_device_t* out_array) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PhysicalDevice, physical_device);
    return FillHandles(self->devices, inout_count, out_array, "inout_count");
  });
}

ACCEL_API accel_status_t accel_device_get_physical_device(accel_device_t device,
                                                          accel_physical_device_t* out_physical_device) {
  return GuardedOutput(__func__, out_physical_device, [&]() -> Status {
    ACCEL_RESOLVE(self, Device, device);
    ACCEL_NOT_NULL(out_physical_device);
    *out_physical_device = ToHandle<accel_physical_device_t>(self->physical->handle());
    return Status::Ok();
  });
}

}  // extern "C"
