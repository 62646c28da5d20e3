/* Memory round trip on the first device: host -> buffer, fill, buffer ->
 * buffer, buffer -> host, on one stream; then checks every byte. */
#include <accel/accel.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

enum { kCount = 1 << 16 };

static int run(accel_instance_t instance) {
  accel_device_t device = NULL;
  uint32_t n = 0;
  CHECK(accel_instance_enumerate_devices(instance, &n, NULL));
  if (n == 0) {
    fprintf(stderr, "no device: run accel-info --loader-debug to see why\n");
    return 1;
  }
  accel_device_t devices[64];
  n = n > 64 ? 64 : n;
  CHECK(accel_instance_enumerate_devices(instance, &n, devices));
  device = devices[0];

  static uint32_t input[kCount], output[kCount];
  for (uint32_t i = 0; i < kCount; ++i) input[i] = i * 2654435761u;

  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = sizeof(input);
  desc.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  accel_buffer_t a = NULL, b = NULL;
  CHECK(accel_buffer_create(device, &desc, &a));
  CHECK(accel_buffer_create(device, &desc, &b));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));

  const uint32_t pattern = 0xA5A5A5A5u;
  CHECK(accel_stream_copy_host_to_buffer(stream, input, a, 0, sizeof(input)));
  CHECK(accel_stream_fill_buffer(stream, a, 0, 64 * sizeof(uint32_t), &pattern, sizeof(pattern)));
  CHECK(accel_stream_copy_buffer(stream, a, 0, b, 0, sizeof(input)));
  CHECK(accel_stream_copy_buffer_to_host(stream, b, 0, output, sizeof(output)));
  CHECK(accel_stream_free_buffer(stream, a)); /* released after the work above */
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));

  for (uint32_t i = 0; i < kCount; ++i) {
    uint32_t want = i < 64 ? pattern : input[i];
    if (output[i] != want) {
      fprintf(stderr, "mismatch at %u: %08x != %08x\n", i, output[i], want);
      return 1;
    }
  }
  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(b));
  printf("round trip of %zu bytes through %s: ok\n", sizeof(input), "the first device");
  return 0;
}

int main(void) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  int rc = run(instance);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
