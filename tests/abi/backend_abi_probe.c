/* The backend ABI as a binary, for abidiff (docs/abi.md, "The ABI baseline").
 * The backend ABI is a header (abi/accel_backend.h) that no library of Accel
 * exports on its own, so this probe exports one function per ABI struct,
 * taking a pointer to it: libabigail then records every struct, enum and
 * function-pointer slot reachable from them, and a layout change shows up as an
 * incompatible change of the probe. Compiled by tests/abi/abi_check.py only. */
#include <accel_backend.h>

#define PROBE(type) \
  __attribute__((visibility("default"))) void accel_abi_probe_##type(type* value) { (void)value; }

PROBE(accel_backend_api_t)
PROBE(accel_backend_get_api_args_t)
PROBE(accel_host_services_t)
PROBE(accel_bk_context_desc_t)
PROBE(accel_bk_launch_t)
PROBE(accel_bk_kernel_arg_t)
PROBE(accel_device_capabilities_t)
PROBE(accel_device_topology_t)
PROBE(accel_device_link_t)
PROBE(accel_copy_statistics_t)
PROBE(accel_buffer_import_desc_t)
PROBE(accel_external_memory_t)
PROBE(accel_module_source_t)
PROBE(accel_kernel_properties_t)
PROBE(accel_kernel_argument_info_t)
PROBE(accel_native_module_t)
PROBE(accel_native_kernel_desc_t)
PROBE(accel_native_work_group_t)
PROBE(accel_native_arg_t)
PROBE(accel_nic_properties_t)
PROBE(accel_domain_t)
