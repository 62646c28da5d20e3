/* Lists every device Accel sees, one line per physical device, with the
 * backends that reach it. Exits 1 if any call fails. */
#include <accel/accel.h>
#include <stdio.h>
#include <stdlib.h>

static int check(accel_status_t status, const char* what) {
  if (status < 0) {
    fprintf(stderr, "%s failed: %s (%s)\n", what, accel_status_name(status), accel_last_error());
    return 0;
  }
  return 1;
}

int main(void) {
  accel_instance_t instance = NULL;
  if (!check(accel_instance_create(NULL, &instance), "accel_instance_create")) return 1;

  uint32_t count = 0;
  int ok = check(accel_instance_enumerate_physical_devices(instance, &count, NULL), "enumerate");
  accel_physical_device_t* devices = calloc(count ? count : 1, sizeof(*devices));
  ok =
      ok && devices != NULL && check(accel_instance_enumerate_physical_devices(instance, &count, devices), "enumerate");
  printf("%u physical device(s)\n", ok ? count : 0);
  for (uint32_t i = 0; ok && i < count; ++i) {
    accel_physical_device_properties_t props = {ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES, sizeof(props), NULL};
    ok = check(accel_physical_device_get_properties(devices[i], &props), "get_properties");
    if (!ok) break;
    printf("%u: %s  %s  %.1f GiB  %u compute units  via", props.index, props.stable_id, props.name,
           (double)props.memory_total / (1024.0 * 1024.0 * 1024.0), props.compute_units);
    accel_device_t paths[16];
    uint32_t n = 16;
    ok = check(accel_physical_device_enumerate_devices(devices[i], &n, paths), "enumerate_devices");
    for (uint32_t p = 0; ok && p < n; ++p) {
      accel_device_capabilities_t caps = {ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES, sizeof(caps), NULL};
      ok = check(accel_device_get_capabilities(paths[p], &caps), "get_capabilities");
      if (ok) printf(" %s", caps.backend_name);
    }
    printf("\n");
  }
  free(devices);
  ok = check(accel_instance_destroy(instance), "accel_instance_destroy") && ok;
  return ok ? 0 : 1;
}
