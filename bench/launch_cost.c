/* The work whose instruction count bench/launch_instructions.py reports: on
 * the first device of the loaded backends, the corpus's fill_u32 is launched
 * `count` times on one stream, each followed by a synchronize (or, with
 * `copy`, 4 KiB are copied from host memory into a buffer `count` times, each
 * followed by a synchronize). Run under callgrind, the instructions spent in
 * libaccel and the backend library per operation are Accel's own cost
 * (docs/overhead.md). With `record`, each launch is followed by an event
 * record instead and one synchronize ends them all (a framework's pattern);
 * the wall time per launch of 5 such runs is printed, their median last;
 * `timing` is the same with a timing event (ACCEL_EVENT_FLAG_TIMING).
 * `copytime` times `copy` the same way (5 runs, ns per copy and synchronize);
 * `churn` times `count` creations and destructions of a 4 KiB buffer while
 * another thread that made a lookup sleeps (so each destroy issues the handle
 * table's barrier, docs/handles.md, "Lookup"). Compare ACCEL_HANDLE_HAZARDS=0.
 * `batch` times `count` launches back to back, a synchronize after every 100
 * (5 runs, ns per launch): accel-bench's back-to-back row alone, in a process
 * of its own, for perf stat; bench/opencl_back_to_back is its native side.
 * `prepared` is `batch` with the launch prepared once
 * (accel_kernel_prepare_launch) and each enqueued by
 * accel_stream_launch_prepared.
 *
 *   launch_cost <corpus dir> <count> [launch|copy|record|timing|copytime|churn|batch|prepared]
 */
#include <accel/accel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "time_runs.h"

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

/* Launches and waits `count` times. */
static int launch_and_wait(accel_stream_t stream, accel_kernel_t kernel, const accel_launch_desc_t* l, int count) {
  for (int i = 0; i < count; ++i) {
    CHECK(accel_stream_launch_kernel(stream, kernel, l));
    CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  }
  return 0;
}

/* Copies 4 KiB from `host` into `buffer` and waits, `count` times. */
static int copy_and_wait(accel_stream_t stream, accel_buffer_t buffer, const void* host, int count) {
  for (int i = 0; i < count; ++i) {
    CHECK(accel_stream_copy_host_to_buffer(stream, host, buffer, 0, 4096));
    CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  }
  return 0;
}

/* Launches `count` times, each followed by a record of `event`, then synchronizes once. */
static int launch_and_record(accel_stream_t stream, accel_kernel_t kernel, const accel_launch_desc_t* l,
                             accel_event_t event, int count) {
  for (int i = 0; i < count; ++i) {
    CHECK(accel_stream_launch_kernel(stream, kernel, l));
    CHECK(accel_stream_record_event(stream, event));
  }
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  return 0;
}

/* The measured region, for callgrind's --toggle-collect=measured. */
__attribute__((noinline)) int measured(accel_stream_t stream, accel_kernel_t kernel, const accel_launch_desc_t* l,
                                       accel_buffer_t buffer, const void* host, int count) {
  if (host != NULL) return copy_and_wait(stream, buffer, host, count);
  return launch_and_wait(stream, kernel, l, count);
}

struct CopyRun {
  accel_stream_t stream;
  accel_buffer_t buffer;
  const void* host;
};
static int run_copies(void* context, int count) {
  const struct CopyRun* c = context;
  return copy_and_wait(c->stream, c->buffer, c->host, count);
}

struct BatchRun {
  accel_stream_t stream;
  accel_kernel_t kernel;
  const accel_launch_desc_t* launch;
  accel_prepared_launch_t prepared; /* enqueued instead of `launch` when set */
};
static int run_batches(void* context, int count) {
  const struct BatchRun* b = context;
  for (int done = 0; done < count;) {
    for (int i = 0; i < 100 && done < count; ++i, ++done) {
      if (b->prepared != NULL) {
        CHECK(accel_stream_launch_prepared(b->stream, b->prepared));
      } else {
        CHECK(accel_stream_launch_kernel(b->stream, b->kernel, b->launch));
      }
    }
    CHECK(accel_stream_synchronize(b->stream, ACCEL_TIMEOUT_INFINITE));
  }
  return 0;
}

static int run_churn(void* context, int count) {
  accel_device_t device = context;
  accel_buffer_desc_t bd = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(bd), NULL};
  bd.size = 4096;
  for (int i = 0; i < count; ++i) {
    accel_buffer_t b = NULL;
    CHECK(accel_buffer_create(device, &bd, &b));
    CHECK(accel_buffer_destroy(b));
  }
  return 0;
}

/* Another thread that made a lookup (so it holds a hazard record) and sleeps until told. */
struct Bystander {
  accel_device_t device;
  atomic_int stop;
};
static void* bystand(void* context) {
  struct Bystander* b = context;
  uint64_t formats = 0;
  accel_device_get_info(b->device, ACCEL_DEVICE_INFO_KERNEL_FORMATS, sizeof(formats), &formats, NULL);
  const struct timespec pause = {0, 1000000};
  while (!atomic_load(&b->stop)) nanosleep(&pause, NULL);
  return NULL;
}

int main(int argc, char** argv) {
  static const char* const kModes[] = {"launch", "copy", "record", "timing", "copytime", "churn", "batch", "prepared"};
  int known = argc == 3;
  for (int i = 0; argc == 4 && i < 8; ++i) known = known || strcmp(argv[3], kModes[i]) == 0;
  if (argc < 3 || argc > 4 || !known) {
    fprintf(stderr,
            "usage: launch_cost <corpus dir> <count> [launch|copy|record|timing|copytime|churn|batch|prepared]\n");
    return 2;
  }
  const int count = atoi(argv[2]);
  static unsigned char host[4096];
  const void* copy_from = argc == 4 && strcmp(argv[3], "copy") == 0 ? host : NULL;
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  accel_device_t device = NULL;
  uint32_t n = 1;
  CHECK(accel_instance_enumerate_devices(instance, &n, NULL));
  if (n == 0) {
    fprintf(stderr, "no device\n");
    return 1;
  }
  n = 1;
  CHECK(accel_instance_enumerate_devices(instance, &n, &device));
  uint64_t formats = 0;
  CHECK(accel_device_get_info(device, ACCEL_DEVICE_INFO_KERNEL_FORMATS, sizeof(formats), &formats, NULL));
  char native[1024], spirv[1024], opencl[1024];
  snprintf(native, sizeof(native), "%s/native/libaccel_corpus_native.so", argv[1]);
  snprintf(spirv, sizeof(spirv), "%s/spirv-vulkan/fill_u32.spv", argv[1]);
  snprintf(opencl, sizeof(opencl), "%s/opencl-c/corpus.cl", argv[1]);
  accel_module_source_t sources[3];
  const char* paths[3] = {native, spirv, opencl};
  const uint64_t bits[3] = {ACCEL_KERNEL_FORMAT_NATIVE_HOST, ACCEL_KERNEL_FORMAT_SPIRV_VULKAN,
                            ACCEL_KERNEL_FORMAT_OPENCL_C};
  uint32_t used = 0;
  for (int i = 0; i < 3; ++i) {
    if ((formats & bits[i]) == 0) continue;
    memset(&sources[used], 0, sizeof(sources[used]));
    sources[used].stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
    sources[used].struct_size = sizeof(sources[used]);
    sources[used].format = bits[i];
    sources[used].path = paths[i];
    ++used;
  }
  accel_module_desc_t md = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(md), NULL};
  md.sources = sources;
  md.source_count = used;
  accel_module_t module = NULL;
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_create(device, &md, &module));
  CHECK(accel_module_get_kernel(module, "fill_u32", &kernel));
  accel_buffer_desc_t bd = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(bd), NULL};
  bd.size = 4096;
  accel_buffer_t buffer = NULL;
  CHECK(accel_buffer_create(device, &bd, &buffer));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  const uint32_t value = 1, elements = 1;
  accel_kernel_arg_t args[3];
  memset(args, 0, sizeof(args));
  for (int i = 0; i < 3; ++i) {
    args[i].stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
    args[i].struct_size = sizeof(args[i]);
  }
  args[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  args[0].buffer = buffer;
  args[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[1].value = &value;
  args[1].size = 4;
  args[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[2].value = &elements;
  args[2].size = 4;
  accel_launch_desc_t l = {ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, sizeof(l), NULL};
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = l.block[1] = l.block[2] = 1;
  l.args = args;
  l.arg_count = 3;
  if (launch_and_wait(stream, kernel, &l, 3) != 0) return 1; /* warm-up: pipelines built, pools grown */
  if (copy_and_wait(stream, buffer, host, 3) != 0) return 1;
  if (argc == 4 && (strcmp(argv[3], "record") == 0 || strcmp(argv[3], "timing") == 0)) {
    accel_event_desc_t ed = {ACCEL_STRUCTURE_TYPE_EVENT_DESC, sizeof(ed), NULL};
    if (strcmp(argv[3], "timing") == 0) ed.flags = ACCEL_EVENT_FLAG_TIMING;
    accel_event_t event = NULL;
    CHECK(accel_event_create(device, &ed, &event));
    double per_launch[5];
    for (int run = 0; run < 5; ++run) {
      const double start = now_us();
      if (launch_and_record(stream, kernel, &l, event, count) != 0) return 1;
      per_launch[run] = (now_us() - start) / count;
      printf("launch + record: %.2f us per launch\n", per_launch[run]);
    }
    qsort(per_launch, 5, sizeof(double), compare_doubles);
    printf("median: %.2f us per launch\n", per_launch[2]);
    accel_event_destroy(event);
  } else if (argc == 4 && strcmp(argv[3], "copytime") == 0) {
    struct CopyRun c = {stream, buffer, host};
    if (time_runs("4 KiB copy + synchronize", count, run_copies, &c) != 0) return 1;
  } else if (argc == 4 && strcmp(argv[3], "batch") == 0) {
    struct BatchRun b = {stream, kernel, &l, NULL};
    if (time_runs("back-to-back launch", count, run_batches, &b) != 0) return 1;
  } else if (argc == 4 && strcmp(argv[3], "prepared") == 0) {
    struct BatchRun b = {stream, kernel, &l, NULL};
    CHECK(accel_kernel_prepare_launch(kernel, &l, &b.prepared));
    if (time_runs("back-to-back prepared launch", count, run_batches, &b) != 0) return 1;
    CHECK(accel_prepared_launch_destroy(b.prepared));
  } else if (argc == 4 && strcmp(argv[3], "churn") == 0) {
    struct Bystander b = {device, 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, bystand, &b) != 0) return 1;
    const struct timespec settle = {0, 20000000};
    nanosleep(&settle, NULL);
    const int failed = time_runs("buffer create + destroy", count, run_churn, device);
    atomic_store(&b.stop, 1);
    pthread_join(thread, NULL);
    if (failed) return 1;
  } else if (measured(stream, kernel, &l, buffer, copy_from, count) != 0) {
    return 1;
  }
  accel_stream_destroy(stream);
  accel_buffer_destroy(buffer);
  accel_module_destroy(module);
  accel_instance_destroy(instance);
  return 0;
}
