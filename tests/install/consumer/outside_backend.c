/* A backend built outside Accel's tree with the installed backend kit
 * (accel_backend.h and accel_add_backend() from find_package(Accel)): one
 * device with a name and no memory, streams or kernels. It shows that an
 * outside project's backend builds, gets a manifest and loads. */
#include <accel_backend.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static int g_device_token;

static accel_status_t context_create(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) {
  (void)desc;
  *out_context = (accel_bk_context_t)&g_device_token;
  return ACCEL_SUCCESS;
}

static void context_destroy(accel_bk_context_t context) { (void)context; }

static accel_status_t context_get_devices(accel_bk_context_t context, uint32_t* inout_count,
                                          accel_bk_device_t* out_devices) {
  (void)context;
  if (out_devices != NULL) {
    if (*inout_count < 1) return ACCEL_ERROR_INVALID_ARGUMENT;
    out_devices[0] = (accel_bk_device_t)&g_device_token;
  }
  *inout_count = 1;
  return ACCEL_SUCCESS;
}

static accel_status_t device_get_capabilities(accel_bk_device_t device, accel_device_capabilities_t* out) {
  (void)device;
  out->kind = ACCEL_DEVICE_KIND_NPU;
  out->flags = ACCEL_DEVICE_FLAG_SIMULATED;
  out->compute_units = 1;
  strncpy(out->name, "Outside kit device", sizeof(out->name) - 1);
  strncpy(out->vendor, "Accel install test", sizeof(out->vendor) - 1);
  return ACCEL_SUCCESS;
}

static accel_backend_api_t g_api;

ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  if (args == NULL || args->struct_size < offsetof(accel_backend_get_api_args_t, out_api) + sizeof(void*)) {
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  if (ACCEL_VERSION_MAJOR(args->core_abi_version_max) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
    return ACCEL_ERROR_INCOMPATIBLE_VERSION;
  }
  g_api.stype = ACCEL_STRUCTURE_TYPE_BACKEND_API;
  g_api.struct_size = (uint32_t)sizeof g_api;
  g_api.abi_version = ACCEL_BACKEND_ABI_VERSION;
  g_api.name = "outside";
  g_api.version = "1.0.0";
  g_api.context_create = context_create;
  g_api.context_destroy = context_destroy;
  g_api.context_get_devices = context_get_devices;
  g_api.device_get_capabilities = device_get_capabilities;
  args->out_abi_version =
      args->core_abi_version_max < ACCEL_BACKEND_ABI_VERSION ? args->core_abi_version_max : ACCEL_BACKEND_ABI_VERSION;
  args->out_api = &g_api;
  return ACCEL_SUCCESS;
}
