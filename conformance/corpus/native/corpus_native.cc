// The conformance corpus as a native-host module: a shared library exporting
// accel_native_module_get with fill_u32, copy_offset_u32, vadd_f32, reduce_u32
// and atomic_add_u32 (their contracts are in ../README.md). Every kernel is
// reentrant; work-groups of one launch may run concurrently, so atomic_add_u32
// updates `sums` through std::atomic_ref.
#include <accel/accel.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace {

// One work-group's geometry: its size S, its linear group id g and the global
// linear id of each of its work-items, numbered as in the README.
class WorkGroup {
 public:
  explicit WorkGroup(const accel_native_work_group_t* g) : g_(g) {}

  // S = block.x * block.y * block.z.
  uint32_t Size() const { return g_->group_size[0] * g_->group_size[1] * g_->group_size[2]; }

  // g = (group_id.z * grid.y + group_id.y) * grid.x + group_id.x.
  uint64_t LinearGroupId() const {
    return (uint64_t{g_->group_id[2]} * g_->grid_size[1] + g_->group_id[1]) * g_->grid_size[0] + g_->group_id[0];
  }

  // Calls fn(l, i) for every work-item, in local linear id order: l =
  // (lz * block.y + ly) * block.x + lx, i = (gz * H + gy) * W + gx. One call
  // is one loop over the work-items; the boundary between two calls is a
  // barrier (docs/kernels.md). fn returns false to stop the loop early.
  template <typename Fn>
  bool ForEachWorkItem(Fn&& fn) const {
    const uint64_t width = uint64_t{g_->grid_size[0]} * g_->group_size[0];
    const uint64_t height = uint64_t{g_->grid_size[1]} * g_->group_size[1];
    uint32_t l = 0;
    for (uint32_t z = 0; z < g_->group_size[2]; ++z) {
      const uint64_t gz = uint64_t{g_->group_id[2]} * g_->group_size[2] + z;
      for (uint32_t y = 0; y < g_->group_size[1]; ++y) {
        const uint64_t gy = uint64_t{g_->group_id[1]} * g_->group_size[1] + y;
        for (uint32_t x = 0; x < g_->group_size[0]; ++x, ++l) {
          const uint64_t gx = uint64_t{g_->group_id[0]} * g_->group_size[0] + x;
          if (!fn(l, (gz * height + gy) * width + gx)) return false;
        }
      }
    }
    return true;
  }

 private:
  const accel_native_work_group_t* g_;
};

uint32_t ScalarU32(const accel_native_arg_t& arg) {
  uint32_t value = 0;
  std::memcpy(&value, arg.pointer, sizeof(value));
  return value;
}

// Whether element `index` of type T lies inside the bound range of `arg`. The
// kernels return ACCEL_ERROR_INVALID_ARGUMENT instead of touching memory past
// a range the caller bound too small.
template <typename T>
bool InRange(const accel_native_arg_t& arg, uint64_t index) {
  return index < arg.size / sizeof(T);
}

// fill_u32(BUFFER out [WRITE], SCALAR value, SCALAR n): out[i] = value for i < n.
accel_status_t FillU32(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  auto* out = static_cast<uint32_t*>(args[0].pointer);
  const uint32_t value = ScalarU32(args[1]);
  const uint32_t n = ScalarU32(args[2]);
  const bool ok = WorkGroup(group).ForEachWorkItem([&](uint32_t, uint64_t i) {
    if (i >= n) return true;
    if (!InRange<uint32_t>(args[0], i)) return false;
    out[i] = value;
    return true;
  });
  return ok ? ACCEL_SUCCESS : ACCEL_ERROR_INVALID_ARGUMENT;
}

// copy_offset_u32(BUFFER src [READ], BUFFER dst [WRITE], SCALAR src_offset,
// SCALAR dst_offset, SCALAR n): dst[dst_offset + i] = src[src_offset + i] for i < n.
accel_status_t CopyOffsetU32(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const auto* src = static_cast<const uint32_t*>(args[0].pointer);
  auto* dst = static_cast<uint32_t*>(args[1].pointer);
  const uint32_t src_offset = ScalarU32(args[2]);
  const uint32_t dst_offset = ScalarU32(args[3]);
  const uint32_t n = ScalarU32(args[4]);
  const bool ok = WorkGroup(group).ForEachWorkItem([&](uint32_t, uint64_t i) {
    if (i >= n) return true;
    if (!InRange<uint32_t>(args[0], src_offset + i) || !InRange<uint32_t>(args[1], dst_offset + i)) return false;
    dst[dst_offset + i] = src[src_offset + i];
    return true;
  });
  return ok ? ACCEL_SUCCESS : ACCEL_ERROR_INVALID_ARGUMENT;
}

// vadd_f32(BUFFER a [READ], BUFFER b [READ], BUFFER c [WRITE], SCALAR n): c[i] = a[i] + b[i] for i < n.
accel_status_t VaddF32(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const auto* a = static_cast<const float*>(args[0].pointer);
  const auto* b = static_cast<const float*>(args[1].pointer);
  auto* c = static_cast<float*>(args[2].pointer);
  const uint32_t n = ScalarU32(args[3]);
  const bool ok = WorkGroup(group).ForEachWorkItem([&](uint32_t, uint64_t i) {
    if (i >= n) return true;
    if (!InRange<float>(args[0], i) || !InRange<float>(args[1], i) || !InRange<float>(args[2], i)) return false;
    c[i] = a[i] + b[i];
    return true;
  });
  return ok ? ACCEL_SUCCESS : ACCEL_ERROR_INVALID_ARGUMENT;
}

// reduce_u32(BUFFER in [READ], BUFFER partial [WRITE], SCALAR n,
// LOCAL_MEMORY scratch): partial[g] = sum mod 2^32 of in[g * S + l] over l < S with
// g * S + l < n. Loop 1 loads `scratch` (S words); each level of the tree is
// its own loop, so the loop boundaries are the barriers. S need not be a power
// of two: the first level folds everything past the largest power of two
// below S onto the front.
accel_status_t ReduceU32(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const auto* in = static_cast<const uint32_t*>(args[0].pointer);
  auto* partial = static_cast<uint32_t*>(args[1].pointer);
  const uint32_t n = ScalarU32(args[2]);
  auto* scratch = static_cast<uint32_t*>(args[3].pointer);
  const WorkGroup work_group(group);
  const uint32_t size = work_group.Size();
  const uint64_t g = work_group.LinearGroupId();
  if (!InRange<uint32_t>(args[3], size - 1) || !InRange<uint32_t>(args[1], g)) return ACCEL_ERROR_INVALID_ARGUMENT;
  const uint64_t base = g * size;
  for (uint32_t l = 0; l < size; ++l) {  // barrier after
    const uint64_t i = base + l;
    if (i < n && !InRange<uint32_t>(args[0], i)) return ACCEL_ERROR_INVALID_ARGUMENT;
    scratch[l] = i < n ? in[i] : 0;
  }
  uint32_t stride = 1;
  while (stride * 2 < size) stride *= 2;
  for (; stride > 0; stride /= 2) {
    for (uint32_t l = 0; l < stride; ++l) {  // barrier after each level
      if (l + stride < size) scratch[l] += scratch[l + stride];
    }
  }
  partial[g] = scratch[0];  // work-item 0
  return ACCEL_SUCCESS;
}

// atomic_add_u32(BUFFER values [READ], BUFFER sums [READ_WRITE], SCALAR n,
// SCALAR bins): for i < n, atomically sums[i % bins] += values[i]. bins must
// be at least 1.
accel_status_t AtomicAddU32(const accel_native_work_group_t* group, const accel_native_arg_t* args) {
  const auto* values = static_cast<const uint32_t*>(args[0].pointer);
  auto* sums = static_cast<uint32_t*>(args[1].pointer);
  const uint32_t n = ScalarU32(args[2]);
  const uint32_t bins = ScalarU32(args[3]);
  if (bins == 0 || !InRange<uint32_t>(args[1], bins - 1) ||
      reinterpret_cast<uintptr_t>(sums) % std::atomic_ref<uint32_t>::required_alignment != 0) {
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  const bool ok = WorkGroup(group).ForEachWorkItem([&](uint32_t, uint64_t i) {
    if (i >= n) return true;
    if (!InRange<uint32_t>(args[0], i)) return false;
    std::atomic_ref<uint32_t>(sums[i % bins]).fetch_add(values[i], std::memory_order_relaxed);
    return true;
  });
  return ok ? ACCEL_SUCCESS : ACCEL_ERROR_INVALID_ARGUMENT;
}

constexpr uint32_t kU32 = sizeof(uint32_t);

const accel_kernel_argument_info_t kFillArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "out"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "value"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "n"),
};
const accel_kernel_argument_info_t kCopyOffsetArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "src"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "dst"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "src_offset"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "dst_offset"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "n"),
};
const accel_kernel_argument_info_t kVaddArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "a"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "b"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "c"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "n"),
};
const accel_kernel_argument_info_t kReduceArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "in"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_WRITE, 0, "partial"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "n"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY, ACCEL_ACCESS_READ, 0, "scratch"),
};
const accel_kernel_argument_info_t kAtomicAddArgs[] = {
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ, 0, "values"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_BUFFER, ACCEL_ACCESS_READ_WRITE, 0, "sums"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "n"),
    ACCEL_KERNEL_ARGUMENT_INFO_INIT(ACCEL_KERNEL_ARG_KIND_SCALAR, ACCEL_ACCESS_READ, kU32, "bins"),
};

template <uint32_t kCount>
constexpr accel_native_kernel_desc_t Kernel(const char* name, accel_native_kernel_fn function,
                                            const accel_kernel_argument_info_t (&arguments)[kCount]) {
  return {.stype = ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
          .struct_size = sizeof(accel_native_kernel_desc_t),
          .name = name,
          .function = function,
          .arguments = arguments,
          .argument_count = kCount};
}

constexpr accel_native_kernel_desc_t kKernels[] = {
    Kernel("fill_u32", FillU32, kFillArgs),
    Kernel("copy_offset_u32", CopyOffsetU32, kCopyOffsetArgs),
    Kernel("vadd_f32", VaddF32, kVaddArgs),
    Kernel("reduce_u32", ReduceU32, kReduceArgs),
    Kernel("atomic_add_u32", AtomicAddU32, kAtomicAddArgs),
};

constexpr accel_native_module_t kModule = {.stype = ACCEL_STRUCTURE_TYPE_NATIVE_MODULE,
                                           .struct_size = sizeof(accel_native_module_t),
                                           .kernels = kKernels,
                                           .kernel_count = sizeof(kKernels) / sizeof(kKernels[0])};

}  // namespace

extern "C" __attribute__((visibility("default"))) const accel_native_module_t* accel_native_module_get(void) {
  return &kModule;
}
