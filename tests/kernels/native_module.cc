// A native-host module as a shared library: exports accel_native_module_get
// with one kernel, "vsub" (c = a - b), for the module-loading tests.
#include <accel/accel.h>

#include <cstring>

namespace {

accel_status_t VectorSub(const accel_native_work_group_t* g, const accel_native_arg_t* args) {
  const auto* a = static_cast<const float*>(args[0].pointer);
  const auto* b = static_cast<const float*>(args[1].pointer);
  auto* c = static_cast<float*>(args[2].pointer);
  uint32_t n = 0;
  std::memcpy(&n, args[3].pointer, sizeof(n));
  for (uint32_t x = 0; x < g->group_size[0]; ++x) {
    const uint64_t i = uint64_t{g->group_id[0]} * g->group_size[0] + x;
    if (i < n) c[i] = a[i] - b[i];
  }
  return ACCEL_SUCCESS;
}

const accel_kernel_argument_info_t kArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "a"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "b"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "c"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 4, "n"),
};

const accel_native_kernel_desc_t kKernels[] = {{ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
                                                sizeof(accel_native_kernel_desc_t),
                                                nullptr,
                                                "vsub",
                                                VectorSub,
                                                kArgs,
                                                4,
                                                0,
                                                {0, 0, 0},
                                                0,
                                                0}};

const accel_native_module_t kModule = {
    ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kKernels, 1, 0};

}  // namespace

extern "C" __attribute__((visibility("default"))) const accel_native_module_t* accel_native_module_get(void) {
  return &kModule;
}
