// Kernel slots and launch packing of the GPU backends whose runtimes share one model, CUDA's driver API and HIP, and
// of Level Zero: what backends/cuda/module.cc, backends/hip/module.cc and backends/level_zero/module.cc share. Each
// backend keeps loading modules, reflecting kernels and the vendor launch; this holds what surrounds them. Part of
// accel_backend_support (backend_support.h); header-only, since it is templates.
//
// What a backend supplies: a Module with `Device* device` (whose `host` is the HostServices) and
// `std::vector<const char*> names`; a Kernel with `info->arguments` (a vector of declarations with kind, access,
// size and name), `max_threads` and `static_shared`; the traits struct of common/gpu_storage.h (Address and the
// buffer handle type).
#ifndef ACCEL_BACKENDS_COMMON_GPU_KERNELS_H_
#define ACCEL_BACKENDS_COMMON_GPU_KERNELS_H_

#include <accel_backend.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/gpu_storage.h"
#include "common/prefix.h"
#include "common/services.h"

namespace accel::backend {

// A launch's parameter values, each at an offset aligned to its size (at most 8), in one blob; the pointers the
// vendor launch takes are made from the blob when the launch is enqueued (Pointers). Not thread-safe: one launch's.
struct GpuKernelParameters {
  std::vector<unsigned char> blob;
  std::vector<size_t> offsets;
  std::vector<uint32_t> indices;  // per parameter: the launch argument it came from
  std::vector<size_t> sizes;      // per parameter: its bytes
  // The LOCAL_MEMORY arguments: (argument index, bytes). CUDA and HIP fold them into the dynamic shared memory;
  // Level Zero passes each as a parameter of its own.
  std::vector<std::pair<uint32_t, uint64_t>> locals;

  void Append(uint32_t index, const void* bytes, size_t size) {
    const size_t align = std::min<size_t>(std::bit_floor(std::max<size_t>(size, 1)), 8);
    const size_t at = (blob.size() + align - 1) / align * align;
    blob.resize(at + size);
    std::memcpy(blob.data() + at, bytes, size);
    offsets.push_back(at);
    indices.push_back(index);
    sizes.push_back(size);
  }

  // The parameter pointers, in `inline_pointers` when they fit, else in `*more`; NULL when there are none.
  template <size_t kInline>
  void** Pointers(void* (&inline_pointers)[kInline], std::vector<void*>* more) {
    void** pointers = inline_pointers;
    if (offsets.size() > kInline) {
      more->resize(offsets.size());
      pointers = more->data();
    }
    for (size_t i = 0; i < offsets.size(); ++i) pointers[i] = blob.data() + offsets[i];
    return offsets.empty() ? nullptr : pointers;
  }
};

// Copies a launch's arguments into `*out` (a buffer as its device address plus offset, kept alive in `*keep`; a
// device address as is; a scalar's bytes; LOCAL_MEMORY, with its size, in `locals`). The core
// checked the launch against the kernel's declaration and limits. Returns ACCEL_ERROR_INVALID_ARGUMENT when the
// argument structs are smaller than ABI 1.0's.
template <typename T>
accel_status_t PackKernelArguments(const HostServices& host, const accel_bk_launch_t* launch, GpuKernelParameters* out,
                                   std::vector<std::shared_ptr<const void>>* keep) {
  const size_t stride = launch->arg_count > 0 ? launch->args[0].struct_size : 0;
  if (launch->arg_count > 0 && stride < offsetof(accel_bk_kernel_arg_t, device_address) + sizeof(uint64_t)) {
    return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                     "kernel arguments of " + std::to_string(stride) + " bytes are too small for ABI 1.0");
  }
  const auto* base = reinterpret_cast<const unsigned char*>(launch->args);
  for (uint32_t i = 0; i < launch->arg_count; ++i) {
    const auto arg = ReadPrefix<accel_bk_kernel_arg_t>(base + i * stride, static_cast<uint32_t>(stride));
    switch (arg.kind) {
      case ACCEL_KERNEL_ARG_KIND_BUFFER: {
        std::shared_ptr<GpuStorage<T>> storage = reinterpret_cast<GpuBuffer<T>*>(arg.buffer)->storage;
        const typename T::Address address = storage->address() + arg.offset;
        out->Append(i, &address, sizeof(address));
        keep->push_back(std::move(storage));
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS: {
        const typename T::Address address = arg.device_address;
        out->Append(i, &address, sizeof(address));
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_SCALAR: out->Append(i, arg.value, static_cast<size_t>(arg.size)); break;
      case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: out->locals.emplace_back(i, arg.size); break;
      default: break;
    }
  }
  return ACCEL_SUCCESS;
}

// The bodies of module_enumerate_kernels, kernel_get_properties and kernel_get_argument_info.
template <typename Module>
accel_status_t EnumerateModuleKernels(Module* module, uint32_t* inout_count, const char** out_names) {
  const auto count = static_cast<uint32_t>(module->names.size());
  if (out_names == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < count) {
    *inout_count = count;
    return module->device->host->Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                                      "the name array holds fewer than " + std::to_string(count) + " kernels");
  }
  std::copy(module->names.begin(), module->names.end(), out_names);
  *inout_count = count;
  return ACCEL_SUCCESS;
}

template <typename Kernel>
accel_status_t WriteKernelProperties(const Kernel& kernel, accel_kernel_properties_t* out) {
  // Everything but `name` and `module`, the core's; only the fields the core's struct has.
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, argument_count)) {
    out->argument_count = static_cast<uint32_t>(kernel.info->arguments.size());
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, max_work_group_size)) {
    out->max_work_group_size = kernel.max_threads;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, local_memory_size)) {
    out->local_memory_size = kernel.static_shared;
  }
  if constexpr (requires { kernel.required_size[0]; }) {  // a backend whose kernels may fix their block
    if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, required_work_group_size)) {
      for (int i = 0; i < 3; ++i) out->required_work_group_size[i] = kernel.required_size[i];
    }
  }
  return ACCEL_SUCCESS;
}

template <typename Kernel>
accel_status_t WriteKernelArgumentInfo(const Kernel& kernel, uint32_t index, accel_kernel_argument_info_t* out) {
  const auto& a = kernel.info->arguments[index];  // the core checked the index
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, kind)) out->kind = a.kind;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, access)) out->access = a.access;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, size)) out->size = a.size;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, name)) out->name = a.name.c_str();
  return ACCEL_SUCCESS;
}

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_GPU_KERNELS_H_
