/* An outside program built against an installed Accel: it lists the devices
 * and the loader's entries, then runs c = a + b as a native-host kernel on the
 * first device that executes native-host kernels and checks the result.
 * tests/install/install_test.py builds it with find_package(Accel) and with
 * pkg-config, from a moved install prefix. Exits 1 on any failure. */
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

enum { kN = 1000, kBlock = 96, kMaxDevices = 64 };

static accel_status_t vadd(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const float* a = (const float*)args[0].pointer;
  const float* b = (const float*)args[1].pointer;
  float* c = (float*)args[2].pointer;
  const uint32_t n = *(const uint32_t*)args[3].pointer;
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
    .name = "vadd",
    .function = vadd,
    .arguments = kArgs,
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
  arg.buffer = buffer;
  return arg;
}

static int list(accel_instance_t instance, accel_device_t* out_native) {
  uint32_t entries = 0;
  CHECK(accel_instance_get_loader_entry_count(instance, &entries));
  for (uint32_t i = 0; i < entries; ++i) {
    accel_loader_entry_t e = {ACCEL_STRUCTURE_TYPE_LOADER_ENTRY, sizeof(e), NULL};
    CHECK(accel_instance_get_loader_entry(instance, i, &e));
    printf("loader: backend=%s state=%s manifest=%s library=%s\n", e.backend_name,
           e.state == ACCEL_LOADER_STATE_LOADED ? "loaded" : "not-loaded", e.manifest_path, e.library_path);
  }
  accel_device_t devices[kMaxDevices];
  uint32_t count = 0;
  CHECK(accel_instance_enumerate_devices(instance, &count, NULL));
  if (count > kMaxDevices) count = kMaxDevices;
  CHECK(accel_instance_enumerate_devices(instance, &count, devices));
  *out_native = NULL;
  for (uint32_t d = 0; d < count; ++d) {
    char name[ACCEL_NAME_SIZE] = {0};
    uint64_t formats = 0;
    CHECK(accel_device_get_info(devices[d], ACCEL_DEVICE_INFO_NAME, sizeof(name), name, NULL));
    CHECK(accel_device_get_info(devices[d], ACCEL_DEVICE_INFO_KERNEL_FORMATS, sizeof(formats), &formats, NULL));
    accel_backend_t backend = NULL;
    CHECK(accel_device_get_backend(devices[d], &backend));
    accel_backend_properties_t bp = {ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES, sizeof(bp), NULL};
    CHECK(accel_backend_get_properties(backend, &bp));
    printf("device %u: %s (backend %s)\n", d, name, bp.name);
    if (*out_native == NULL && (formats & ACCEL_KERNEL_FORMAT_NATIVE_HOST) != 0) *out_native = devices[d];
  }
  printf("devices: %u\n", count);
  return 0;
}

static int launch(accel_device_t device) {
  accel_module_source_t source = {ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, sizeof(source), NULL};
  source.format = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  source.data = &kModule;
  source.size = sizeof(kModule);
  accel_module_desc_t module_desc = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(module_desc), NULL};
  module_desc.sources = &source;
  module_desc.source_count = 1;
  module_desc.name = "consumer";
  accel_module_t module = NULL;
  CHECK(accel_module_create(device, &module_desc, &module));
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_get_kernel(module, "vadd", &kernel));

  static float a[kN], b[kN], c[kN];
  for (uint32_t i = 0; i < kN; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i;
  }
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.size = sizeof(a);
  accel_buffer_t ba = NULL, bb = NULL, bc = NULL;
  CHECK(accel_buffer_create(device, &desc, &ba));
  CHECK(accel_buffer_create(device, &desc, &bb));
  CHECK(accel_buffer_create(device, &desc, &bc));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  CHECK(accel_stream_copy_host_to_buffer(stream, a, ba, 0, sizeof(a)));
  CHECK(accel_stream_copy_host_to_buffer(stream, b, bb, 0, sizeof(b)));
  const uint32_t n = kN;
  accel_kernel_arg_t args[4] = {buffer_arg(ba),
                                buffer_arg(bb),
                                buffer_arg(bc),
                                {ACCEL_STRUCTURE_TYPE_KERNEL_ARG, sizeof(accel_kernel_arg_t), NULL}};
  args[3].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[3].value = &n;
  args[3].size = sizeof(n);
  accel_launch_desc_t l = {ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, sizeof(l), NULL};
  l.grid[0] = (kN + kBlock - 1) / kBlock;
  l.grid[1] = l.grid[2] = 1;
  l.block[0] = kBlock;
  l.block[1] = l.block[2] = 1;
  l.args = args;
  l.arg_count = 4;
  CHECK(accel_stream_launch_kernel(stream, kernel, &l));
  CHECK(accel_stream_copy_buffer_to_host(stream, bc, 0, c, sizeof(c)));
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  for (uint32_t i = 0; i < kN; ++i) {
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "vadd: c[%u] is %g, expected %g\n", i, (double)c[i], (double)(a[i] + b[i]));
      return 1;
    }
  }
  printf("kernel: vadd of %u floats in %u work-groups of %u: ok\n", n, l.grid[0], l.block[0]);
  CHECK(accel_stream_destroy(stream));
  CHECK(accel_buffer_destroy(ba));
  CHECK(accel_buffer_destroy(bb));
  CHECK(accel_buffer_destroy(bc));
  CHECK(accel_module_destroy(module));
  return 0;
}

int main(void) {
  accel_version_info_t v = {ACCEL_STRUCTURE_TYPE_VERSION_INFO, sizeof(v), NULL};
  CHECK(accel_version_get(&v));
  printf("libaccel %u.%u.%u\n", ACCEL_VERSION_MAJOR(v.library_version), ACCEL_VERSION_MINOR(v.library_version),
         ACCEL_VERSION_PATCH(v.library_version));
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  accel_device_t native = NULL;
  int rc = list(instance, &native);
  if (rc == 0 && native == NULL) {
    fprintf(stderr, "no device executes native-host kernels\n");
    rc = 1;
  }
  if (rc == 0) rc = launch(native);
  CHECK(accel_instance_destroy(instance));
  return rc;
}
