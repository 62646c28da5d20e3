/* One vector-add module carrying several formats (native-host, opencl-c and,
 * when built, spirv-vulkan), loaded on every device present: each device picks
 * the first format it executes, runs the kernel, and the result is checked.
 * Prints one line per device with the format it used. Exits 1 on a failure,
 * and 2 when a device executes none of the module's formats
 * (docs/kernels.md, "Loading a module").
 *
 *   accel-sample-multi-format [path/to/vector_add.spv]
 */
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

enum { kN = 10007, kBlock = 64 };

/* native-host: called once per work-group, looping over its work-items. */
static accel_status_t vector_add(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const float* a = (const float*)args[0].pointer;
  const float* b = (const float*)args[1].pointer;
  float* c = (float*)args[2].pointer;
  uint32_t n = 0;
  memcpy(&n, args[3].pointer, sizeof(n));
  for (uint32_t local = 0; local < group->group_size[0]; ++local) {
    const uint32_t i = group->group_id[0] * group->group_size[0] + local;
    if (i < n) c[i] = a[i] + b[i];
  }
  return ACCEL_SUCCESS;
}

static const accel_kernel_argument_info_t kArgs[] = {
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
    .arguments = kArgs,
    .argument_count = 4,
}};
static const accel_native_module_t kNativeModule = {
    .stype = ACCEL_STRUCTURE_TYPE_NATIVE_MODULE,
    .struct_size = sizeof(accel_native_module_t),
    .kernels = kKernels,
    .kernel_count = 1,
};

/* opencl-c: the same kernel and arguments as source. */
static const char kOpenClSource[] =
    "__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, uint n) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

static accel_kernel_arg_t buffer_arg(accel_buffer_t buffer) {
  accel_kernel_arg_t arg = {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(arg), NULL};
  arg.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  arg.buffer = buffer;
  return arg;
}

/* Runs the module on one device; returns 0 on success. */
static int run_on(accel_device_t device, const accel_module_desc_t* module_desc) {
  char name[ACCEL_NAME_SIZE] = "";
  char backend[ACCEL_BACKEND_NAME_SIZE] = "";
  CHECK(accel_device_get_info(device, ACCEL_DEVICE_INFO_NAME, sizeof(name), name, NULL));
  CHECK(accel_device_get_info(device, ACCEL_DEVICE_INFO_BACKEND_NAME, sizeof(backend), backend, NULL));
  accel_module_t module = NULL;
  const accel_status_t created = accel_module_create(device, module_desc, &module);
  if (created == ACCEL_ERROR_UNSUPPORTED) {
    printf("%-8s %-40s executes none of the module's formats: %s\n", backend, name, accel_last_error());
    return 2;
  }
  CHECK(created);
  accel_module_properties_t props = {ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES, sizeof(props), NULL};
  CHECK(accel_module_get_properties(module, &props));
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_get_kernel(module, "vector_add", &kernel));

  static float a[kN], b[kN], c[kN];
  for (uint32_t i = 0; i < kN; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
    c[i] = -1.0f;
  }
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = sizeof(a);
  accel_buffer_t buf_a = NULL, buf_b = NULL, buf_c = NULL;
  accel_stream_t stream = NULL;
  CHECK(accel_buffer_create(device, &desc, &buf_a));
  CHECK(accel_buffer_create(device, &desc, &buf_b));
  CHECK(accel_buffer_create(device, &desc, &buf_c));
  CHECK(accel_stream_create(device, NULL, &stream));
  CHECK(accel_stream_copy_host_to_buffer(stream, a, buf_a, 0, sizeof(a)));
  CHECK(accel_stream_copy_host_to_buffer(stream, b, buf_b, 0, sizeof(b)));
  const uint32_t n = kN;
  accel_kernel_arg_t args[4] = {buffer_arg(buf_a), buffer_arg(buf_b), buffer_arg(buf_c)};
  accel_kernel_arg_t scalar = {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(scalar), NULL};
  scalar.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  scalar.value = &n;
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
  int wrong = 0;
  for (uint32_t i = 0; i < kN; ++i) wrong += c[i] != a[i] + b[i];
  printf("%-8s %-40s ran format %-13s (source %u of %u): %s\n", backend, name, accel_kernel_format_name(props.format),
         props.source_index, module_desc->source_count, wrong == 0 ? "correct" : "WRONG");
  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(buf_a));
  CHECK(accel_buffer_destroy(buf_b));
  CHECK(accel_buffer_destroy(buf_c));
  CHECK(accel_module_destroy(module));
  return wrong == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  /* The module: every format it carries, in order of preference. */
  accel_module_source_t sources[3];
  uint32_t count = 0;
  accel_module_source_t native = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(native), NULL};
  native.format = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  native.data = &kNativeModule;
  native.size = sizeof(kNativeModule);
  sources[count++] = native;
  accel_module_source_t opencl = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(opencl), NULL};
  opencl.format = ACCEL_KERNEL_FORMAT_OPENCL_C;
  opencl.data = kOpenClSource;
  opencl.size = sizeof(kOpenClSource) - 1;
  sources[count++] = opencl;
  if (argc > 1) { /* SPIR-V for Vulkan, compiled from vector_add.comp at build time */
    accel_module_source_t spirv = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(spirv), NULL};
    spirv.format = ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
    spirv.path = argv[1];
    sources[count++] = spirv;
  }
  accel_module_desc_t module_desc = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(module_desc), NULL};
  module_desc.sources = sources;
  module_desc.source_count = count;
  module_desc.name = "vector_add";

  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  accel_device_t devices[64];
  uint32_t n = 64;
  CHECK(accel_instance_enumerate_devices(instance, &n, NULL));
  n = n > 64 ? 64 : n;
  CHECK(accel_instance_enumerate_devices(instance, &n, devices));
  int rc = n == 0 ? 1 : 0;
  if (n == 0) fprintf(stderr, "no devices: run accel-info --loader-debug to see why\n");
  for (uint32_t d = 0; d < n; ++d) {
    const int r = run_on(devices[d], &module_desc);
    if (r > rc) rc = r;
  }
  accel_instance_destroy(instance);
  return rc;
}
