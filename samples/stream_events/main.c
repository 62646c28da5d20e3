/* Streams and events on the first device: two timing events around a fill and
 * a copy, a non-blocking query while the work may still run, waits on the end
 * event and on the stream, then the elapsed time between the events. Checks
 * the copied bytes; exits 1 if anything fails (docs/streams.md). */
#include <accel/accel.h>
#include <stdio.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

enum { kCount = 1 << 20 }; /* 4 MiB of uint32_t */

static int run(accel_instance_t instance) {
  accel_device_t devices[64];
  uint32_t n = 64;
  CHECK(accel_instance_enumerate_devices(instance, &n, NULL));
  if (n == 0) {
    fprintf(stderr, "no device: run accel-info --loader-debug to see why\n");
    return 1;
  }
  n = n > 64 ? 64 : n;
  CHECK(accel_instance_enumerate_devices(instance, &n, devices));
  accel_device_t device = devices[0];

  /* Timing events need ACCEL_DEVICE_FEATURE_EVENT_TIMING. */
  uint64_t features = 0;
  CHECK(accel_device_get_info(device, ACCEL_DEVICE_INFO_FEATURES, sizeof(features), &features, NULL));
  if ((features & ACCEL_DEVICE_FEATURE_EVENT_TIMING) == 0) {
    fprintf(stderr, "the first device has no event timing\n");
    return 1;
  }

  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = kCount * sizeof(uint32_t);
  accel_buffer_t buffer = NULL;
  CHECK(accel_buffer_create(device, &desc, &buffer));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  accel_event_desc_t event_desc = {ACCEL_STRUCTURE_TYPE_EVENT_DESC, sizeof(event_desc), NULL};
  event_desc.flags = ACCEL_EVENT_FLAG_TIMING;
  accel_event_t start = NULL, end = NULL;
  CHECK(accel_event_create(device, &event_desc, &start));
  CHECK(accel_event_create(device, &event_desc, &end));

  /* Enqueue: start, fill, copy back, end. Every call returns at once. */
  static uint32_t host[kCount];
  const uint32_t pattern = 0xC0FFEE11u;
  CHECK(accel_stream_record_event(stream, start));
  CHECK(accel_stream_fill_buffer(stream, buffer, 0, desc.size, &pattern, sizeof(pattern)));
  CHECK(accel_stream_copy_buffer_to_host(stream, buffer, 0, host, desc.size));
  CHECK(accel_stream_record_event(stream, end));

  /* A query never blocks: NOT_READY while work is pending, SUCCESS once done. */
  accel_status_t early = accel_stream_query(stream);
  CHECK(early);
  printf("stream query right after enqueue: %s\n", accel_status_name(early));

  CHECK(accel_event_synchronize(end, ACCEL_TIMEOUT_INFINITE)); /* the work before `end` is done */
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  if (accel_stream_query(stream) != ACCEL_SUCCESS || accel_event_query(end) != ACCEL_SUCCESS) {
    fprintf(stderr, "stream or event still pending after synchronize\n");
    return 1;
  }

  uint64_t nanoseconds = 0;
  CHECK(accel_event_elapsed_time(start, end, &nanoseconds));
  for (uint32_t i = 0; i < kCount; ++i) {
    if (host[i] != pattern) {
      fprintf(stderr, "mismatch at %u: %08x != %08x\n", i, host[i], pattern);
      return 1;
    }
  }
  printf("fill + copy of %u bytes: %.3f ms between the events; data ok\n", (unsigned)desc.size,
         (double)nanoseconds / 1e6);

  CHECK(accel_event_destroy(start));
  CHECK(accel_event_destroy(end));
  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(buffer));
  return 0;
}

int main(void) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  int rc = run(instance);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
