/* Sums 1..N (N not a power of two) with a native-host reduction kernel that
 * uses work-group local memory and the barrier rule: loop 1 loads one element
 * per work-item into local memory, the end of the loop is the barrier, loop 2
 * reduces the group's elements as a tree (each level ends with a barrier).
 * Each launch leaves one partial sum per work-group; launches in stream order
 * reduce the partials until one value is left. Checks it against N(N+1)/2;
 * exits 1 on failure (docs/kernels.md). */
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

enum { kN = 1000003, kBlock = 256 }; /* kBlock: a power of two, for the tree */

/* out[group] = sum of in[group * size .. group * size + size - 1] (0 past n).
 * Arguments: BUFFER in, BUFFER out, SCALAR n, LOCAL_MEMORY scratch
 * (group_size[0] uint64_t). */
static accel_status_t reduce(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const uint64_t* in = (const uint64_t*)args[0].pointer;
  uint64_t* out = (uint64_t*)args[1].pointer;
  const uint32_t n = *(const uint32_t*)args[2].pointer;
  uint64_t* scratch = (uint64_t*)args[3].pointer; /* this work-group's local memory */
  const uint32_t size = group->group_size[0];
  if (args[3].size < (uint64_t)size * sizeof(uint64_t)) return ACCEL_ERROR_INVALID_ARGUMENT;

  /* Loop 1: every work-item loads its element. */
  for (uint32_t local = 0; local < size; ++local) {
    const uint32_t i = group->group_id[0] * size + local;
    scratch[local] = i < n ? in[i] : 0;
  }
  /* Barrier: loop 1 ended, so every element is in local memory. */

  /* Loop 2: a tree; each level is one loop over the work-items still active. */
  for (uint32_t stride = size / 2; stride > 0; stride /= 2) {
    for (uint32_t local = 0; local < stride; ++local) scratch[local] += scratch[local + stride];
    /* Barrier: this level is complete before the next reads it. */
  }
  out[group->group_id[0]] = scratch[0];
  return ACCEL_SUCCESS;
}

static const accel_kernel_argument_info_t kReduceArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "in"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "out"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, sizeof(uint32_t), "n"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "scratch"),
};
static const accel_native_kernel_desc_t kKernels[] = {{
    .stype = ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
    .struct_size = sizeof(accel_native_kernel_desc_t),
    .name = "reduce",
    .function = reduce,
    .arguments = kReduceArgs,
    .argument_count = 4,
}};
static const accel_native_module_t kModule = {
    .stype = ACCEL_STRUCTURE_TYPE_NATIVE_MODULE,
    .struct_size = sizeof(accel_native_module_t),
    .kernels = kKernels,
    .kernel_count = 1,
};

static accel_kernel_arg_t arg_of_kind(accel_kernel_arg_kind_t kind) {
  accel_kernel_arg_t arg = {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(arg), NULL};
  arg.kind = kind;
  return arg;
}

/* Enqueues one pass: `count` values of `in` to ceil(count / kBlock) of `out`. */
static accel_status_t enqueue_pass(accel_stream_t stream, accel_kernel_t kernel, accel_buffer_t in, accel_buffer_t out,
                                   const uint32_t* count) {
  accel_kernel_arg_t args[4];
  args[0] = arg_of_kind(ACCEL_KERNEL_ARG_KIND_BUFFER);
  args[0].buffer = in;
  args[1] = arg_of_kind(ACCEL_KERNEL_ARG_KIND_BUFFER);
  args[1].buffer = out;
  args[2] = arg_of_kind(ACCEL_KERNEL_ARG_KIND_SCALAR);
  args[2].value = count; /* copied at enqueue */
  args[2].size = sizeof(*count);
  args[3] = arg_of_kind(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
  args[3].size = kBlock * sizeof(uint64_t);
  accel_launch_desc_t launch = {ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, sizeof(launch), NULL};
  launch.grid[0] = (*count + kBlock - 1) / kBlock;
  launch.grid[1] = launch.grid[2] = 1;
  launch.block[0] = kBlock;
  launch.block[1] = launch.block[2] = 1;
  launch.args = args;
  launch.arg_count = 4;
  return accel_stream_launch_kernel(stream, kernel, &launch);
}

static int run(accel_instance_t instance) {
  accel_device_t devices[64];
  uint32_t count = 64;
  CHECK(accel_instance_enumerate_devices(instance, &count, NULL));
  count = count > 64 ? 64 : count;
  CHECK(accel_instance_enumerate_devices(instance, &count, devices));
  accel_device_t device = NULL;
  for (uint32_t d = 0; d < count && device == NULL; ++d) {
    uint64_t formats = 0;
    CHECK(accel_device_get_info(devices[d], ACCEL_DEVICE_INFO_KERNEL_FORMATS, sizeof(formats), &formats, NULL));
    if ((formats & ACCEL_KERNEL_FORMAT_NATIVE_HOST) != 0) device = devices[d];
  }
  if (device == NULL) {
    fprintf(stderr, "no device executes native-host kernels: run accel-info to see the devices\n");
    return 1;
  }

  accel_module_source_t source = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(source), NULL};
  source.format = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  source.data = &kModule;
  source.size = sizeof(kModule);
  accel_module_desc_t module_desc = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(module_desc), NULL};
  module_desc.sources = &source;
  module_desc.source_count = 1;
  module_desc.name = "reduction_sample";
  accel_module_t module = NULL;
  CHECK(accel_module_create(device, &module_desc, &module));
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_get_kernel(module, "reduce", &kernel));

  static uint64_t input[kN];
  for (uint32_t i = 0; i < kN; ++i) input[i] = (uint64_t)i + 1; /* 1..N */

  /* Two buffers, used in turn as input and output of each pass. */
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = sizeof(input);
  accel_buffer_t a = NULL;
  CHECK(accel_buffer_create(device, &desc, &a));
  desc.size = ((kN + kBlock - 1) / kBlock) * sizeof(uint64_t);
  accel_buffer_t b = NULL;
  CHECK(accel_buffer_create(device, &desc, &b));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  CHECK(accel_stream_copy_host_to_buffer(stream, input, a, 0, sizeof(input)));

  /* Passes run in stream order: N -> 3907 -> 16 -> 1 values. The counts are
   * copied at enqueue, so one array of them is enough. */
  uint32_t counts[8];
  uint32_t passes = 0;
  counts[0] = kN;
  accel_buffer_t in = a, out = b;
  while (counts[passes] > 1) {
    CHECK(enqueue_pass(stream, kernel, in, out, &counts[passes]));
    counts[passes + 1] = (counts[passes] + kBlock - 1) / kBlock;
    ++passes;
    accel_buffer_t t = in;
    in = out;
    out = t;
  }
  uint64_t sum = 0;
  CHECK(accel_stream_copy_buffer_to_host(stream, in, 0, &sum, sizeof(sum)));
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));

  const uint64_t want = (uint64_t)kN * ((uint64_t)kN + 1) / 2;
  printf("sum of 1..%u in %u passes of %u-wide work-groups: %llu (expected %llu)\n", (unsigned)kN, passes,
         (unsigned)kBlock, (unsigned long long)sum, (unsigned long long)want);
  if (sum != want) {
    fprintf(stderr, "wrong sum\n");
    return 1;
  }

  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(a));
  CHECK(accel_buffer_destroy(b));
  CHECK(accel_module_destroy(module));
  return 0;
}

int main(void) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  int rc = run(instance);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
