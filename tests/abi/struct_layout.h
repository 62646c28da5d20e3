/*
 * ABI layout pins for include/accel/accel.h and abi/accel_backend.h, 1.0.
 *
 * Every struct's size and every field's offset, every enum's size, _FORCE32
 * value and enumerator values, and the ABI constants, as the x86_64 / LP64
 * ABI lays them out. Released structs never change (docs/abi.md): a failing
 * pin here is an ABI break, not a test to update. New fields and slots go at
 * the end of their struct, with new pins.
 *
 * This file is a list. Included as it is (after accel.h and accel_backend.h),
 * every line is a compile-time assertion: static_assert in C++, _Static_assert
 * in C11, a negative-size array typedef in C99. To read the list as data,
 * define ACCEL_PIN_SIZE, ACCEL_PIN_OFFSET, ACCEL_PIN_ENUM and ACCEL_PIN_VALUE
 * before including it (each expansion then supplies its own separator); the
 * file #undefs all four at its end, so it can be included again.
 *
 * Struct pins are LP64-only: elsewhere ACCEL_PIN_LP64 is 0 and only the enum
 * and constant pins apply.
 *
 *   ACCEL_PIN_SIZE(type, bytes)            sizeof(type) == bytes
 *   ACCEL_PIN_OFFSET(type, field, bytes)   offsetof(type, field) == bytes
 *   ACCEL_PIN_ENUM(type, force32)          sizeof(type) == 4, force32 == 0x7FFFFFFF
 *   ACCEL_PIN_VALUE(name, value)           name == value
 */
/* No include guard: see above. */

#include <stddef.h>
#include <stdint.h>

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
#define ACCEL_PIN_LP64 1
#else
#define ACCEL_PIN_LP64 0
#endif

#if !defined(ACCEL_PIN_SIZE)
#define ACCEL_PIN_DEFAULTS_
#if defined(__cplusplus)
#define ACCEL_PIN_ASSERT_(name, cond, text) static_assert(cond, text);
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define ACCEL_PIN_ASSERT_(name, cond, text) _Static_assert(cond, text);
#else
#define ACCEL_PIN_ASSERT_(name, cond, text) typedef char name[(cond) ? 1 : -1];
#endif
#define ACCEL_PIN_SIZE(type, bytes) \
  ACCEL_PIN_ASSERT_(accel_pin_size_##type, sizeof(type) == (bytes), "sizeof(" #type ") == " #bytes)
#define ACCEL_PIN_OFFSET(type, field, bytes)                                             \
  ACCEL_PIN_ASSERT_(accel_pin_offset_##type##_##field, offsetof(type, field) == (bytes), \
                    "offsetof(" #type ", " #field ") == " #bytes)
#define ACCEL_PIN_ENUM(type, force32)                                                    \
  ACCEL_PIN_ASSERT_(accel_pin_enum_##type, sizeof(type) == 4 && (force32) == 0x7FFFFFFF, \
                    "sizeof(" #type ") == 4 && " #force32 " == 0x7FFFFFFF")
#define ACCEL_PIN_VALUE(name, value) ACCEL_PIN_ASSERT_(accel_pin_value_##name, (name) == (value), #name " == " #value)
#endif

#if ACCEL_PIN_LP64

/*===--- handles, flag and callback types --------------------------------===*/

ACCEL_PIN_SIZE(accel_instance_t, 8)
ACCEL_PIN_SIZE(accel_backend_t, 8)
ACCEL_PIN_SIZE(accel_device_t, 8)
ACCEL_PIN_SIZE(accel_physical_device_t, 8)
ACCEL_PIN_SIZE(accel_buffer_t, 8)
ACCEL_PIN_SIZE(accel_stream_t, 8)
ACCEL_PIN_SIZE(accel_event_t, 8)
ACCEL_PIN_SIZE(accel_bk_context_t, 8)
ACCEL_PIN_SIZE(accel_bk_device_t, 8)
ACCEL_PIN_SIZE(accel_bk_buffer_t, 8)
ACCEL_PIN_SIZE(accel_bk_stream_t, 8)
ACCEL_PIN_SIZE(accel_bk_event_t, 8)
ACCEL_PIN_SIZE(accel_numeric_formats_t, 8)
ACCEL_PIN_SIZE(accel_kernel_formats_t, 8)
ACCEL_PIN_SIZE(accel_device_features_t, 8)
ACCEL_PIN_SIZE(accel_log_callback_t, 8)
ACCEL_PIN_SIZE(accel_host_callback_t, 8)
ACCEL_PIN_SIZE(accel_backend_get_api_fn, 8)

/*===--- include/accel/accel.h: structs ---------------------------------===*/

ACCEL_PIN_SIZE(accel_struct_header_t, 16)
ACCEL_PIN_OFFSET(accel_struct_header_t, stype, 0)
ACCEL_PIN_OFFSET(accel_struct_header_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_struct_header_t, next, 8)

ACCEL_PIN_SIZE(accel_version_info_t, 40)
ACCEL_PIN_OFFSET(accel_version_info_t, stype, 0)
ACCEL_PIN_OFFSET(accel_version_info_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_version_info_t, next, 8)
ACCEL_PIN_OFFSET(accel_version_info_t, library_version, 16)
ACCEL_PIN_OFFSET(accel_version_info_t, abi_version, 20)
ACCEL_PIN_OFFSET(accel_version_info_t, backend_abi_min, 24)
ACCEL_PIN_OFFSET(accel_version_info_t, backend_abi_max, 28)
ACCEL_PIN_OFFSET(accel_version_info_t, build, 32)

ACCEL_PIN_SIZE(accel_instance_desc_t, 80)
ACCEL_PIN_OFFSET(accel_instance_desc_t, stype, 0)
ACCEL_PIN_OFFSET(accel_instance_desc_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_instance_desc_t, next, 8)
ACCEL_PIN_OFFSET(accel_instance_desc_t, flags, 16)
ACCEL_PIN_OFFSET(accel_instance_desc_t, backend_files, 24)
ACCEL_PIN_OFFSET(accel_instance_desc_t, add_backend_files, 32)
ACCEL_PIN_OFFSET(accel_instance_desc_t, backends, 40)
ACCEL_PIN_OFFSET(accel_instance_desc_t, visible_devices, 48)
ACCEL_PIN_OFFSET(accel_instance_desc_t, log_level, 56)
ACCEL_PIN_OFFSET(accel_instance_desc_t, reserved0, 60)
ACCEL_PIN_OFFSET(accel_instance_desc_t, log_callback, 64)
ACCEL_PIN_OFFSET(accel_instance_desc_t, log_user_data, 72)

ACCEL_PIN_SIZE(accel_loader_entry_t, 72)
ACCEL_PIN_OFFSET(accel_loader_entry_t, stype, 0)
ACCEL_PIN_OFFSET(accel_loader_entry_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_loader_entry_t, next, 8)
ACCEL_PIN_OFFSET(accel_loader_entry_t, backend_name, 16)
ACCEL_PIN_OFFSET(accel_loader_entry_t, manifest_path, 24)
ACCEL_PIN_OFFSET(accel_loader_entry_t, library_path, 32)
ACCEL_PIN_OFFSET(accel_loader_entry_t, reason, 40)
ACCEL_PIN_OFFSET(accel_loader_entry_t, state, 48)
ACCEL_PIN_OFFSET(accel_loader_entry_t, status, 52)
ACCEL_PIN_OFFSET(accel_loader_entry_t, negotiated_abi_version, 56)
ACCEL_PIN_OFFSET(accel_loader_entry_t, backend_abi_version, 60)
ACCEL_PIN_OFFSET(accel_loader_entry_t, device_count, 64)
ACCEL_PIN_OFFSET(accel_loader_entry_t, reserved0, 68)

ACCEL_PIN_SIZE(accel_backend_properties_t, 48)
ACCEL_PIN_OFFSET(accel_backend_properties_t, stype, 0)
ACCEL_PIN_OFFSET(accel_backend_properties_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_backend_properties_t, next, 8)
ACCEL_PIN_OFFSET(accel_backend_properties_t, name, 16)
ACCEL_PIN_OFFSET(accel_backend_properties_t, version, 24)
ACCEL_PIN_OFFSET(accel_backend_properties_t, library_path, 32)
ACCEL_PIN_OFFSET(accel_backend_properties_t, abi_version, 40)
ACCEL_PIN_OFFSET(accel_backend_properties_t, device_count, 44)

ACCEL_PIN_SIZE(accel_device_capabilities_t, 808)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, stype, 0)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, next, 8)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, kind, 16)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, vendor_id, 20)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, flags, 24)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, device_id, 32)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, reserved0, 36)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, memory_total, 40)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_allocation, 48)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_buffer_range, 56)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, local_memory_size, 64)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, numeric_formats, 72)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, kernel_formats, 80)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, modeled_kernel_formats, 88)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, features, 96)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, compute_units, 104)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, clock_mhz, 108)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_work_group_size, 112)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_work_group_dims, 116)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_grid_dims, 128)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, max_argument_size, 140)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, subgroup_size, 144)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, numa_node, 148)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, uuid, 152)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, name, 168)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, vendor, 424)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, architecture, 488)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, sku, 552)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, driver_version, 616)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, pci_bus_id, 680)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, stable_id, 712)
ACCEL_PIN_OFFSET(accel_device_capabilities_t, backend_name, 776)

ACCEL_PIN_SIZE(accel_physical_device_properties_t, 408)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, stype, 0)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, next, 8)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, kind, 16)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, index, 20)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, flags, 24)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, memory_total, 32)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, compute_units, 40)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, device_count, 44)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, numa_node, 48)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, reserved0, 52)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, name, 56)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, stable_id, 312)
ACCEL_PIN_OFFSET(accel_physical_device_properties_t, pci_bus_id, 376)

ACCEL_PIN_SIZE(accel_buffer_desc_t, 40)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, stype, 0)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, next, 8)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, size, 16)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, memory_kind, 24)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, reserved0, 28)
ACCEL_PIN_OFFSET(accel_buffer_desc_t, flags, 32)

ACCEL_PIN_SIZE(accel_buffer_properties_t, 40)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, stype, 0)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, next, 8)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, size, 16)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, memory_kind, 24)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, mapped, 28)
ACCEL_PIN_OFFSET(accel_buffer_properties_t, device, 32)

ACCEL_PIN_SIZE(accel_stream_desc_t, 32)
ACCEL_PIN_OFFSET(accel_stream_desc_t, stype, 0)
ACCEL_PIN_OFFSET(accel_stream_desc_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_stream_desc_t, next, 8)
ACCEL_PIN_OFFSET(accel_stream_desc_t, flags, 16)
ACCEL_PIN_OFFSET(accel_stream_desc_t, priority, 24)
ACCEL_PIN_OFFSET(accel_stream_desc_t, reserved0, 28)

ACCEL_PIN_SIZE(accel_event_desc_t, 24)
ACCEL_PIN_OFFSET(accel_event_desc_t, stype, 0)
ACCEL_PIN_OFFSET(accel_event_desc_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_event_desc_t, next, 8)
ACCEL_PIN_OFFSET(accel_event_desc_t, flags, 16)

/*===--- abi/accel_backend.h: structs -----------------------------------===*/

ACCEL_PIN_SIZE(accel_host_services_t, 72)
ACCEL_PIN_OFFSET(accel_host_services_t, stype, 0)
ACCEL_PIN_OFFSET(accel_host_services_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_host_services_t, next, 8)
ACCEL_PIN_OFFSET(accel_host_services_t, context, 16)
ACCEL_PIN_OFFSET(accel_host_services_t, log, 24)
ACCEL_PIN_OFFSET(accel_host_services_t, set_error, 32)
ACCEL_PIN_OFFSET(accel_host_services_t, allocate, 40)
ACCEL_PIN_OFFSET(accel_host_services_t, deallocate, 48)
ACCEL_PIN_OFFSET(accel_host_services_t, cache_dir, 56)
ACCEL_PIN_OFFSET(accel_host_services_t, machine_id, 64)

ACCEL_PIN_SIZE(accel_bk_context_desc_t, 32)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, stype, 0)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, next, 8)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, host, 16)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, abi_version, 24)
ACCEL_PIN_OFFSET(accel_bk_context_desc_t, reserved0, 28)

ACCEL_PIN_SIZE(accel_backend_api_t, 256)
ACCEL_PIN_OFFSET(accel_backend_api_t, stype, 0)
ACCEL_PIN_OFFSET(accel_backend_api_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_backend_api_t, next, 8)
ACCEL_PIN_OFFSET(accel_backend_api_t, abi_version, 16)
ACCEL_PIN_OFFSET(accel_backend_api_t, reserved0, 20)
ACCEL_PIN_OFFSET(accel_backend_api_t, name, 24)
ACCEL_PIN_OFFSET(accel_backend_api_t, version, 32)
ACCEL_PIN_OFFSET(accel_backend_api_t, context_create, 40)
ACCEL_PIN_OFFSET(accel_backend_api_t, context_destroy, 48)
ACCEL_PIN_OFFSET(accel_backend_api_t, context_get_devices, 56)
ACCEL_PIN_OFFSET(accel_backend_api_t, device_get_capabilities, 64)
ACCEL_PIN_OFFSET(accel_backend_api_t, device_get_memory_info, 72)
ACCEL_PIN_OFFSET(accel_backend_api_t, buffer_create, 80)
ACCEL_PIN_OFFSET(accel_backend_api_t, buffer_destroy, 88)
ACCEL_PIN_OFFSET(accel_backend_api_t, buffer_map, 96)
ACCEL_PIN_OFFSET(accel_backend_api_t, buffer_unmap, 104)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_create, 112)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_destroy, 120)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_copy_host_to_buffer, 128)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_copy_buffer_to_host, 136)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_copy_buffer, 144)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_fill_buffer, 152)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_enqueue_host_callback, 160)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_free_buffer, 168)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_record_event, 176)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_wait_event, 184)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_query, 192)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_synchronize, 200)
ACCEL_PIN_OFFSET(accel_backend_api_t, stream_clear_error, 208)
ACCEL_PIN_OFFSET(accel_backend_api_t, event_create, 216)
ACCEL_PIN_OFFSET(accel_backend_api_t, event_destroy, 224)
ACCEL_PIN_OFFSET(accel_backend_api_t, event_query, 232)
ACCEL_PIN_OFFSET(accel_backend_api_t, event_synchronize, 240)
ACCEL_PIN_OFFSET(accel_backend_api_t, event_elapsed_time, 248)

ACCEL_PIN_SIZE(accel_backend_get_api_args_t, 48)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, stype, 0)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, struct_size, 4)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, next, 8)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, core_abi_version_min, 16)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, core_abi_version_max, 20)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, host, 24)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, out_abi_version, 32)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, reserved0, 36)
ACCEL_PIN_OFFSET(accel_backend_get_api_args_t, out_api, 40)

#endif /* ACCEL_PIN_LP64 */

/*===--- include/accel/accel.h: enums (4 bytes, _FORCE32, every value) ---===*/

ACCEL_PIN_ENUM(accel_status_t, ACCEL_STATUS_FORCE32)
ACCEL_PIN_VALUE(ACCEL_SUCCESS, 0)
ACCEL_PIN_VALUE(ACCEL_NOT_READY, 1)
ACCEL_PIN_VALUE(ACCEL_ERROR_INVALID_ARGUMENT, -1)
ACCEL_PIN_VALUE(ACCEL_ERROR_INVALID_HANDLE, -2)
ACCEL_PIN_VALUE(ACCEL_ERROR_INVALID_ENUM, -3)
ACCEL_PIN_VALUE(ACCEL_ERROR_UNSUPPORTED, -4)
ACCEL_PIN_VALUE(ACCEL_ERROR_UNIMPLEMENTED, -5)
ACCEL_PIN_VALUE(ACCEL_ERROR_NOT_FOUND, -6)
ACCEL_PIN_VALUE(ACCEL_ERROR_RESOURCE_EXHAUSTED, -7)
ACCEL_PIN_VALUE(ACCEL_ERROR_FAILED_PRECONDITION, -8)
ACCEL_PIN_VALUE(ACCEL_ERROR_TIMEOUT, -9)
ACCEL_PIN_VALUE(ACCEL_ERROR_DEVICE_LOST, -10)
ACCEL_PIN_VALUE(ACCEL_ERROR_BACKEND_UNAVAILABLE, -11)
ACCEL_PIN_VALUE(ACCEL_ERROR_INCOMPATIBLE_VERSION, -12)
ACCEL_PIN_VALUE(ACCEL_ERROR_INTERNAL, -13)

ACCEL_PIN_ENUM(accel_structure_type_t, ACCEL_STRUCTURE_TYPE_FORCE32)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_VERSION_INFO, 1)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_INSTANCE_DESC, 2)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY, 3)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES, 4)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES, 5)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES, 6)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BUFFER_DESC, 7)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES, 8)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_STREAM_DESC, 9)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_EVENT_DESC, 10)

ACCEL_PIN_ENUM(accel_log_level_t, ACCEL_LOG_LEVEL_FORCE32)
ACCEL_PIN_VALUE(ACCEL_LOG_LEVEL_OFF, 0)
ACCEL_PIN_VALUE(ACCEL_LOG_LEVEL_ERROR, 1)
ACCEL_PIN_VALUE(ACCEL_LOG_LEVEL_WARN, 2)
ACCEL_PIN_VALUE(ACCEL_LOG_LEVEL_INFO, 3)
ACCEL_PIN_VALUE(ACCEL_LOG_LEVEL_DEBUG, 4)

ACCEL_PIN_ENUM(accel_loader_state_t, ACCEL_LOADER_STATE_FORCE32)
ACCEL_PIN_VALUE(ACCEL_LOADER_STATE_LOADED, 0)
ACCEL_PIN_VALUE(ACCEL_LOADER_STATE_SKIPPED, 1)
ACCEL_PIN_VALUE(ACCEL_LOADER_STATE_FAILED, 2)

ACCEL_PIN_ENUM(accel_device_kind_t, ACCEL_DEVICE_KIND_FORCE32)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_UNKNOWN, 0)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_CPU, 1)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_GPU, 2)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_NPU, 3)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_TPU, 4)
ACCEL_PIN_VALUE(ACCEL_DEVICE_KIND_FPGA, 5)

ACCEL_PIN_ENUM(accel_device_info_key_t, ACCEL_DEVICE_INFO_FORCE32)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_KIND, 1)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_NAME, 2)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_VENDOR, 3)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_VENDOR_ID, 4)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_DEVICE_ID, 5)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_ARCHITECTURE, 6)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_SKU, 7)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_DRIVER_VERSION, 8)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_BACKEND_NAME, 9)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_STABLE_ID, 10)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_PHYSICAL_DEVICE_ID, 11)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_UUID, 12)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_PCI_BUS_ID, 13)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_NUMA_NODE, 14)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_FLAGS, 15)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_SIMULATED, 16)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_COMPUTE_UNITS, 17)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_CLOCK_MHZ, 18)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MEMORY_TOTAL, 19)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MEMORY_FREE, 20)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_ALLOCATION, 21)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_BUFFER_RANGE, 22)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_LOCAL_MEMORY_SIZE, 23)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, 24)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_WORK_GROUP_DIMS, 25)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_GRID_DIMS, 26)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MAX_ARGUMENT_SIZE, 27)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_SUBGROUP_SIZE, 28)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_NUMERIC_FORMATS, 29)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_KERNEL_FORMATS, 30)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS, 31)
ACCEL_PIN_VALUE(ACCEL_DEVICE_INFO_FEATURES, 32)

ACCEL_PIN_ENUM(accel_value_type_t, ACCEL_VALUE_TYPE_FORCE32)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_STRING, 1)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_UINT32, 2)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_INT32, 3)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_UINT64, 4)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_UINT32_3, 5)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_BYTES_16, 6)
ACCEL_PIN_VALUE(ACCEL_VALUE_TYPE_FLAGS64, 7)

ACCEL_PIN_ENUM(accel_memory_kind_t, ACCEL_MEMORY_KIND_FORCE32)
ACCEL_PIN_VALUE(ACCEL_MEMORY_KIND_DEVICE, 0)
ACCEL_PIN_VALUE(ACCEL_MEMORY_KIND_HOST_PINNED, 1)

/*===--- constants --------------------------------------------------------===*/

ACCEL_PIN_VALUE(ACCEL_ABI_VERSION_MAJOR, 1)
ACCEL_PIN_VALUE(ACCEL_ABI_VERSION_MINOR, 0)
ACCEL_PIN_VALUE(ACCEL_ABI_VERSION, 0x00400000u)
ACCEL_PIN_VALUE(ACCEL_BACKEND_ABI_VERSION_MAJOR, 1)
ACCEL_PIN_VALUE(ACCEL_BACKEND_ABI_VERSION_MINOR, 0)
ACCEL_PIN_VALUE(ACCEL_BACKEND_ABI_VERSION, 0x00400000u)
ACCEL_PIN_VALUE(ACCEL_TIMEOUT_INFINITE, 0xFFFFFFFFFFFFFFFFull)
ACCEL_PIN_VALUE(ACCEL_NAME_SIZE, 256)
ACCEL_PIN_VALUE(ACCEL_SHORT_STRING_SIZE, 64)
ACCEL_PIN_VALUE(ACCEL_PCI_BUS_ID_SIZE, 32)
ACCEL_PIN_VALUE(ACCEL_BACKEND_NAME_SIZE, 32)
ACCEL_PIN_VALUE(ACCEL_UUID_SIZE, 16)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_HOST_SERVICES, 1000)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS, 1001)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BACKEND_API, 1002)
ACCEL_PIN_VALUE(ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC, 1003)
ACCEL_PIN_VALUE(ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT, 0x1)
ACCEL_PIN_VALUE(ACCEL_MAP_READ, 0x1)
ACCEL_PIN_VALUE(ACCEL_MAP_WRITE, 0x2)
ACCEL_PIN_VALUE(ACCEL_EVENT_FLAG_TIMING, 0x1)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FLAG_SIMULATED, 0x1)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0x2)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_FP64, 0x1)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_FP32, 0x2)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_TF32, 0x4)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_FP16, 0x8)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_BF16, 0x10)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_FP8_E4M3, 0x20)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_FP8_E5M2, 0x40)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_INT8, 0x80)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_INT4, 0x100)
ACCEL_PIN_VALUE(ACCEL_NUMERIC_FORMAT_INT64, 0x200)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_NATIVE_HOST, 0x1)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, 0x2)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_OPENCL_C, 0x4)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_SPIR, 0x8)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_SPIRV_OPENCL, 0x10)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_PTX, 0x20)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_CUBIN, 0x40)
ACCEL_PIN_VALUE(ACCEL_KERNEL_FORMAT_HSACO, 0x80)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0x1)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY, 0x2)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, 0x4)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS, 0x8)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_ATOMICS_64, 0x10)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_SUBGROUPS, 0x20)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, 0x40)
ACCEL_PIN_VALUE(ACCEL_DEVICE_FEATURE_EVENT_TIMING, 0x80)

#if defined(ACCEL_PIN_DEFAULTS_)
#undef ACCEL_PIN_DEFAULTS_
#undef ACCEL_PIN_ASSERT_
#endif
#undef ACCEL_PIN_SIZE
#undef ACCEL_PIN_OFFSET
#undef ACCEL_PIN_ENUM
#undef ACCEL_PIN_VALUE
