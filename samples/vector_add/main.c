/* c = a + b with a native-host kernel registered in-process: a table of C
 * functions becomes a module, its kernel is launched over a grid of
 * work-groups, and the result is checked on the host. N is not a multiple of
 * the block, so the kernel skips the ids past the end. Exits 1 on failure
 * (docs/kernels.md). */
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

enum { kN = 100003, kBlock = 256 };

/* Called once per work-group; loops over the group's work-items. Work-groups
 * run concurrently, each writing its own elements of c. */
static accel_status_t vector_add(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const float* a = (const float*)args[0].pointer;
  const float* b = (const float*)args[1].pointer;
  float* c = (float*)args[2].pointer;
  const uint32_t n = *(const uint32_t*)args[3].pointer;
  for (uint32_t local = 0; local < group->group_size[0]; ++local) {
    const uint32_t i = group->group_id[0] * group->group_size[0] + local; /* the global id */
    if (i < n) c[i] = a[i] + b[i];
  }
  return ACCEL_SUCCESS;
}

/* The in-process module: static, so it outlives the module and its launches. */
static const accel_kernel_argument_info_t kVectorAddArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "a"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "b"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "c"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, sizeof(uint32_t), "n"),
};
static const accel_native_kernel_desc_t kKernels[] = {{
    .stype = ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
    .struct_size = sizeof(accel_native_kernel_desc_t),
    .name = "vector_add",
    .function = vector_add,
    .arguments = kVectorAddArgs,
    .argument_count = 4,
}};
static const accel_native_module_t kModule = {
    .stype = ACCEL_STRUCTURE_TYPE_NATIVE_MODULE,
    .struct_size = sizeof(accel_native_module_t),
    .kernels = kKernels,
    .kernel_count = 1,
};

static accel_kernel_arg_t buffer_arg(accel_buffer_t buffer) {
  accel_kernel_arg_t arg = {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(arg), NULL};
  arg.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  arg.buffer = buffer; /* offset 0, size 0: the whole buffer; access 0: as declared */
  return arg;
}

static int run(accel_instance_t instance) {
  /* The first device that executes native-host kernels. */
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

  /* Load the module and look its kernel up by name. */
  accel_module_source_t source = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(source), NULL};
  source.format = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  source.data = &kModule;
  source.size = sizeof(kModule);
  accel_module_desc_t module_desc = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(module_desc), NULL};
  module_desc.sources = &source;
  module_desc.source_count = 1;
  module_desc.name = "vector_add_sample";
  accel_module_t module = NULL;
  CHECK(accel_module_create(device, &module_desc, &module));
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_get_kernel(module, "vector_add", &kernel));

  /* Inputs. */
  static float a[kN], b[kN], c[kN];
  for (uint32_t i = 0; i < kN; ++i) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i + 1.0f;
  }
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = sizeof(a);
  accel_buffer_t buf_a = NULL, buf_b = NULL, buf_c = NULL;
  CHECK(accel_buffer_create(device, &desc, &buf_a));
  CHECK(accel_buffer_create(device, &desc, &buf_b));
  CHECK(accel_buffer_create(device, &desc, &buf_c));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  CHECK(accel_stream_copy_host_to_buffer(stream, a, buf_a, 0, sizeof(a)));
  CHECK(accel_stream_copy_host_to_buffer(stream, b, buf_b, 0, sizeof(b)));

  /* grid = work-groups, block = work-items per group (CUDA-like). */
  const uint32_t n = kN;
  accel_kernel_arg_t args[4];
  args[0] = buffer_arg(buf_a);
  args[1] = buffer_arg(buf_b);
  args[2] = buffer_arg(buf_c);
  accel_kernel_arg_t scalar = {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(scalar), NULL};
  scalar.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  scalar.value = &n; /* copied at enqueue */
  scalar.size = sizeof(n);
  args[3] = scalar;
  accel_launch_desc_t launch = {ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, sizeof(launch), NULL};
  launch.grid[0] = (kN + kBlock - 1) / kBlock;
  launch.grid[1] = launch.grid[2] = 1;
  launch.block[0] = kBlock;
  launch.block[1] = launch.block[2] = 1;
  launch.args = args;
  launch.arg_count = 4;
  CHECK(accel_stream_launch_kernel(stream, kernel, &launch));
  CHECK(accel_stream_copy_buffer_to_host(stream, buf_c, 0, c, sizeof(c)));
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));

  for (uint32_t i = 0; i < kN; ++i) {
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "mismatch at %u: %g != %g\n", i, (double)c[i], (double)(a[i] + b[i]));
      return 1;
    }
  }
  printf("vector_add of %u floats in %u work-groups of %u: ok\n", n, launch.grid[0], launch.block[0]);

  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(buf_a));
  CHECK(accel_buffer_destroy(buf_b));
  CHECK(accel_buffer_destroy(buf_c));
  CHECK(accel_module_destroy(module)); /* `kernel` is stale from here */
  return 0;
}

int main(void) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  int rc = run(instance);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
