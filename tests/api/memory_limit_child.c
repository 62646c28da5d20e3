/* A process that allocates 1 MiB device buffers on physical device 0 until
 * one is refused, then prints "<bytes it got> <status name>" and frees them:
 * memory_limit_test runs several at once on one simulated device. */
#include <accel/accel.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  accel_instance_t instance = NULL;
  if (accel_instance_create(NULL, &instance) != ACCEL_SUCCESS) {
    printf("error %s\n", accel_last_error());
    return 1;
  }
  uint32_t n = 1;
  accel_physical_device_t physical = NULL;
  accel_device_t device = NULL;
  if (accel_instance_enumerate_physical_devices(instance, &n, &physical) != ACCEL_SUCCESS || n == 0 ||
      accel_physical_device_enumerate_devices(physical, &n, &device) != ACCEL_SUCCESS) {
    printf("error no device: %s\n", accel_last_error());
    return 1;
  }
  enum { kMax = 4096 };
  static accel_buffer_t buffers[kMax];
  accel_buffer_desc_t desc = {
      ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL, 1u << 20, ACCEL_MEMORY_KIND_DEVICE, 0, 0};
  int count = 0;
  accel_status_t status = ACCEL_SUCCESS;
  while (count < kMax && (status = accel_buffer_create(device, &desc, &buffers[count])) == ACCEL_SUCCESS) ++count;
  printf("%llu %s\n", (unsigned long long)count << 20, accel_status_name(status));
  fflush(stdout);
  for (int i = 0; i < count; ++i) accel_buffer_destroy(buffers[i]);
  accel_instance_destroy(instance);
  return 0;
}
