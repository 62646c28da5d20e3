/* A simulated node (docs/sim.md): run with ACCEL_SIM_PROFILE=a100-pcie-4 (or
 * any profile). Lists the simulated devices, then copies 16 MiB from the first
 * device to each other one and prints the link between them and the path the
 * copy took: peer-to-peer where the link has peer access, else staged through
 * host memory. Checks the data of every copy. */
#include <accel/accel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

enum { kBytes = 16 << 20, kMaxDevices = 64 };

/* Copies kBytes from `from` to `to` on a stream of `from`, reads them back on a stream of `to`, and prints the path. */
static int copy_between(accel_device_t from, accel_device_t to, unsigned char* data, unsigned char* back) {
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = kBytes;
  desc.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  accel_buffer_t src = NULL, dst = NULL;
  accel_stream_t stream = NULL, reader = NULL;
  CHECK(accel_buffer_create(from, &desc, &src));
  CHECK(accel_buffer_create(to, &desc, &dst));
  CHECK(accel_stream_create(from, NULL, &stream));
  CHECK(accel_stream_create(to, NULL, &reader));
  CHECK(accel_stream_copy_host_to_buffer(stream, data, src, 0, kBytes));
  CHECK(accel_stream_copy_buffer(stream, src, 0, dst, 0, kBytes));
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  CHECK(accel_stream_copy_buffer_to_host(reader, dst, 0, back, kBytes));
  CHECK(accel_stream_synchronize(reader, ACCEL_TIMEOUT_INFINITE));
  if (memcmp(data, back, kBytes) != 0) {
    fprintf(stderr, "the copy's data differ\n");
    return 1;
  }

  accel_device_link_t link = {ACCEL_STRUCTURE_TYPE_DEVICE_LINK, sizeof(link), NULL};
  CHECK(accel_device_get_link(from, to, &link));
  accel_copy_statistics_t stats = {ACCEL_STRUCTURE_TYPE_COPY_STATISTICS, sizeof(stats), NULL};
  CHECK(accel_stream_get_copy_statistics(stream, &stats));
  const char* path = stats.peer_copies == 1 ? "peer-to-peer" : stats.staged_copies == 1 ? "staged through host" : "?";
  printf("  link %s%s%s, peer access %s, %.1f GB/s one way: %d MiB copied %s\n", accel_link_class_name(link.link_class),
         link.fabric[0] != '\0' ? " " : "", link.fabric, link.peer_access ? "yes" : "no", (double)link.bandwidth / 1e9,
         kBytes >> 20, path);
  if ((link.peer_access != 0) != (stats.peer_copies == 1)) {
    fprintf(stderr, "the copy's path does not follow the link's peer access\n");
    return 1;
  }

  CHECK(accel_stream_destroy(reader));
  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(src));
  CHECK(accel_buffer_destroy(dst));
  return 0;
}

static int run(accel_instance_t instance) {
  accel_device_t all[kMaxDevices], sim[kMaxDevices];
  uint32_t n = kMaxDevices, count = 0;
  CHECK(accel_instance_enumerate_devices(instance, &n, all));
  for (uint32_t i = 0; i < n; ++i) {
    accel_device_capabilities_t caps = {ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES, sizeof(caps), NULL};
    CHECK(accel_device_get_capabilities(all[i], &caps));
    if ((caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) == 0) continue;
    printf("sim device %u: %s, %.1f GiB, %u compute units, %s\n", count, caps.name,
           (double)caps.memory_total / (double)(1ull << 30), caps.compute_units, caps.pci_bus_id);
    sim[count++] = all[i];
  }
  if (count < 2) {
    fprintf(stderr, "%u simulated devices; set ACCEL_SIM_PROFILE to a profile with several (accel-info profiles)\n",
            count);
    return 1;
  }
  unsigned char* data = malloc(kBytes);
  unsigned char* back = malloc(kBytes);
  if (data == NULL || back == NULL) {
    free(data);
    free(back);
    return 1;
  }
  for (uint32_t i = 0; i < kBytes; ++i) data[i] = (unsigned char)(i * 131u + 7u);
  int rc = 0;
  for (uint32_t j = 1; j < count && rc == 0; ++j) {
    printf("sim device 0 to sim device %u\n", j);
    rc = copy_between(sim[0], sim[j], data, back);
  }
  free(data);
  free(back);
  return rc;
}

int main(void) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  int rc = run(instance);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
