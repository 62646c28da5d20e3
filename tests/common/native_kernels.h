// native-host kernels the tests launch: vector add over any 1-, 2- or 3-D
// geometry, a local-memory reduction, a kernel that fails in one work-group,
// and one with a required work-group size; plus the module table naming them.
#ifndef ACCEL_TESTS_COMMON_NATIVE_KERNELS_H_
#define ACCEL_TESTS_COMMON_NATIVE_KERNELS_H_

#include <accel/accel.h>

#include <cstdint>
#include <cstring>

namespace accel_test {

// The global linear index of work-item (x, y, z) of `g`, with x fastest.
inline uint64_t GlobalIndex(const accel_native_work_group_t* g, uint32_t x, uint32_t y, uint32_t z) {
  const uint64_t width = uint64_t{g->grid_size[0]} * g->group_size[0];
  const uint64_t height = uint64_t{g->grid_size[1]} * g->group_size[1];
  const uint64_t gx = uint64_t{g->group_id[0]} * g->group_size[0] + x;
  const uint64_t gy = uint64_t{g->group_id[1]} * g->group_size[1] + y;
  const uint64_t gz = uint64_t{g->group_id[2]} * g->group_size[2] + z;
  return (gz * height + gy) * width + gx;
}

// vadd(a, b, c, n): c[i] = a[i] + b[i] for i < n, floats.
inline accel_status_t VectorAdd(const accel_native_work_group_t* g, const accel_native_arg_t* args) {
  const auto* a = static_cast<const float*>(args[0].pointer);
  const auto* b = static_cast<const float*>(args[1].pointer);
  auto* c = static_cast<float*>(args[2].pointer);
  uint32_t n = 0;
  std::memcpy(&n, args[3].pointer, sizeof(n));
  for (uint32_t z = 0; z < g->group_size[2]; ++z) {
    for (uint32_t y = 0; y < g->group_size[1]; ++y) {
      for (uint32_t x = 0; x < g->group_size[0]; ++x) {
        const uint64_t i = GlobalIndex(g, x, y, z);
        if (i < n) c[i] = a[i] + b[i];
      }
    }
  }
  return ACCEL_SUCCESS;
}

// reduce(in, partial, scratch, n): partial[group] = sum of the group's slice
// of `in` (uint64), groups and their work-items numbered linearly with x
// fastest, so 1-, 2- and 3-D geometries all cover `in` in order. Loop 1 loads
// into local memory; each halving step is its own loop, so the loop boundaries
// are the barriers.
inline accel_status_t Reduce(const accel_native_work_group_t* g, const accel_native_arg_t* args) {
  const auto* in = static_cast<const uint64_t*>(args[0].pointer);
  auto* partial = static_cast<uint64_t*>(args[1].pointer);
  auto* scratch = static_cast<uint64_t*>(args[2].pointer);
  uint64_t n = 0;
  std::memcpy(&n, args[3].pointer, sizeof(n));
  const uint32_t size = g->group_size[0] * g->group_size[1] * g->group_size[2];
  if (args[2].size < uint64_t{size} * sizeof(uint64_t)) return ACCEL_ERROR_INVALID_ARGUMENT;
  const uint64_t group =
      (uint64_t{g->group_id[2]} * g->grid_size[1] + g->group_id[1]) * g->grid_size[0] + g->group_id[0];
  const uint64_t base = group * size;
  for (uint32_t i = 0; i < size; ++i) scratch[i] = base + i < n ? in[base + i] : 0;  // barrier after
  uint32_t half = 1;
  while (half * 2 < size) half *= 2;
  for (; half > 0; half /= 2) {
    for (uint32_t i = 0; i < half; ++i) {  // barrier after each step
      if (i + half < size) scratch[i] += scratch[i + half];
    }
  }
  partial[group] = scratch[0];
  return ACCEL_SUCCESS;
}

// fail_at(group): returns ACCEL_ERROR_INTERNAL in work-group `group` (scalar uint32).
inline accel_status_t FailAt(const accel_native_work_group_t* g, const accel_native_arg_t* args) {
  uint32_t group = 0;
  std::memcpy(&group, args[0].pointer, sizeof(group));
  return g->group_id[0] == group ? ACCEL_ERROR_INTERNAL : ACCEL_SUCCESS;
}

// fixed(data): writes 1 into data[i]; requires an 8x1x1 block.
inline accel_status_t Fixed(const accel_native_work_group_t* g, const accel_native_arg_t* args) {
  auto* data = static_cast<uint32_t*>(args[0].pointer);
  for (uint32_t x = 0; x < g->group_size[0]; ++x) data[g->group_id[0] * g->group_size[0] + x] = 1;
  return ACCEL_SUCCESS;
}

inline const accel_kernel_argument_info_t kVectorAddArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "a"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "b"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "c"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 4, "n"),
};
inline const accel_kernel_argument_info_t kReduceArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "in"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "partial"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "scratch"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 8, "n"),
};
inline const accel_kernel_argument_info_t kFailAtArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, 4, "group"),
};
inline const accel_kernel_argument_info_t kFixedArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "data"),
};

inline accel_native_kernel_desc_t NativeKernel(const char* name, accel_native_kernel_fn fn,
                                               const accel_kernel_argument_info_t* args, uint32_t count) {
  accel_native_kernel_desc_t k{};
  k.stype = ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC;
  k.struct_size = sizeof(k);
  k.name = name;
  k.function = fn;
  k.arguments = args;
  k.argument_count = count;
  return k;
}

// The test module: vadd, reduce, fail_at, fixed (required block 8x1x1, 64 bytes static local memory).
inline const accel_native_module_t& TestModule() {
  static const accel_native_kernel_desc_t kernels[] = {
      NativeKernel("vadd", VectorAdd, kVectorAddArgs, 4),
      NativeKernel("reduce", Reduce, kReduceArgs, 4),
      NativeKernel("fail_at", FailAt, kFailAtArgs, 1),
      [] {
        accel_native_kernel_desc_t k = NativeKernel("fixed", Fixed, kFixedArgs, 1);
        k.required_work_group_size[0] = 8;
        k.required_work_group_size[1] = 1;
        k.required_work_group_size[2] = 1;
        k.local_memory_size = 64;
        return k;
      }(),
  };
  static const accel_native_module_t module = {
      ACCEL_STRUCTURE_TYPE_NATIVE_MODULE, sizeof(accel_native_module_t), nullptr, kernels, 4, 0};
  return module;
}

// A module source of `format` (one ACCEL_KERNEL_FORMAT_* bit) from `size` bytes at `data` (kept by the caller while the
// source is used).
inline accel_module_source_t ModuleSource(accel_kernel_formats_t format, const void* data, size_t size) {
  accel_module_source_t s{};
  s.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  s.struct_size = sizeof(s);
  s.format = format;
  s.data = data;
  s.size = size;
  return s;
}

inline accel_module_source_t NativeSource(const accel_native_module_t& module) {
  return ModuleSource(ACCEL_KERNEL_FORMAT_NATIVE_HOST, &module, sizeof(module));
}

inline accel_module_desc_t ModuleDesc(const accel_module_source_t* sources, uint32_t count, const char* name) {
  accel_module_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
  d.struct_size = sizeof(d);
  d.sources = sources;
  d.source_count = count;
  d.name = name;
  return d;
}

inline accel_kernel_arg_t BufferArg(accel_buffer_t buffer, uint64_t offset = 0, uint64_t size = 0,
                                    accel_access_t access = static_cast<accel_access_t>(0)) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  a.access = access;
  a.buffer = buffer;
  a.offset = offset;
  a.size = size;
  return a;
}

template <typename T>
accel_kernel_arg_t ScalarArg(const T* value) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  a.value = value;
  a.size = sizeof(T);
  return a;
}

inline accel_kernel_arg_t LocalArg(uint64_t bytes) {
  accel_kernel_arg_t a{};
  a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
  a.struct_size = sizeof(a);
  a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
  a.size = bytes;
  return a;
}

inline accel_launch_desc_t Launch(const uint32_t (&grid)[3], const uint32_t (&block)[3], const accel_kernel_arg_t* args,
                                  uint32_t count) {
  accel_launch_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
  d.struct_size = sizeof(d);
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = grid[i];
    d.block[i] = block[i];
  }
  d.args = args;
  d.arg_count = count;
  return d;
}

}  // namespace accel_test

#endif  // ACCEL_TESTS_COMMON_NATIVE_KERNELS_H_
