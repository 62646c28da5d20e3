// Modules and kernels (docs/kernels.md): OpenCL SPIR-V (`spirv-opencl`) through zeModuleCreate
// (ZE_MODULE_FORMAT_IL_SPIRV), kernels through zeKernelCreate, launches through zeCommandListAppendLaunchKernel on
// the stream's immediate command list. A module's kernels and their arguments come from the SPIR-V itself
// (ReflectSpirv, reflect.cc, pure and unit-tested): Level Zero gives a kernel's argument count, not its kinds.
//
// Arguments map to kernel parameters in order, each set with zeKernelSetArgumentValue: BUFFER the device address of
// the bound range's first byte, DEVICE_ADDRESS the address as given, SCALAR its bytes, LOCAL_MEMORY its size with no
// value (the driver allocates the work-group's local memory).
#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/gpu_kernels.h"
#include "level_zero_backend.h"

namespace accel::level_zero {
namespace {

// A ze_module_handle_t, destroyed when the module handle and every kernel of it let go.
struct LoadedModule {
  LoadedModule(Device* d, ze_module_handle_t m) : device(d), module(m) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  ~LoadedModule() { device->runtime->ze.zeModuleDestroy(module); }
  Device* device;
  ze_module_handle_t module;
};

// A ze_kernel_handle_t: its arguments and group size are state of the handle, set and appended under `mutex` (one
// launch at a time across streams); destroyed when the kernel handle and every queued launch let go.
struct LoadedKernel {
  LoadedKernel(std::shared_ptr<LoadedModule> m, ze_kernel_handle_t k) : module(std::move(m)), kernel(k) {}
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  ~LoadedKernel() { module->device->runtime->ze.zeKernelDestroy(kernel); }
  std::shared_ptr<LoadedModule> module;  // destroyed after the kernel
  ze_kernel_handle_t kernel;
  std::mutex mutex;
};

// The build log of a failed zeModuleCreate, "" when there is none.
std::string BuildLog(const ZeApi& ze, ze_module_build_log_handle_t log) {
  if (log == nullptr) return std::string();
  size_t size = 0;
  std::string text;
  if (ze.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
    text.resize(size);
    if (ze.zeModuleBuildLogGetString(log, &size, text.data()) != ZE_RESULT_SUCCESS) text.clear();
    text.resize(strnlen(text.c_str(), text.size()));
  }
  ze.zeModuleBuildLogDestroy(log);
  return text;
}

}  // namespace

struct Module {
  Device* device;
  std::shared_ptr<LoadedModule> loaded;
  std::vector<SpirvKernel> kernels;
  std::vector<const char*> names;
};

struct Kernel {
  Device* device;
  std::shared_ptr<LoadedKernel> loaded;
  const SpirvKernel* info;  // owned by the module, which outlives its kernels
  uint32_t max_threads = 0;
  uint32_t static_shared = 0;
  uint32_t required_size[3] = {0, 0, 0};  // reqd_work_group_size: the only block it launches with; 0s when any
};

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "module_create", [&] {
    if (source->format != ACCEL_KERNEL_FORMAT_SPIRV_OPENCL) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the Level Zero backend builds spirv-opencl modules only");
    }
    std::string image;
    if (source->data != nullptr) {
      image.assign(static_cast<const char*>(source->data), static_cast<size_t>(source->size));
    } else {
      std::ifstream in(source->path, std::ios::binary);
      if (!in) return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("cannot read ") + source->path);
      image.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    auto result = std::make_unique<Module>();
    result->device = device;
    std::string why;
    if (!ReflectSpirv(image, &result->kernels, &why)) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, why);
    const ZeApi& ze = device->runtime->ze;
    ze_module_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
    desc.inputSize = image.size();
    desc.pInputModule = reinterpret_cast<const uint8_t*>(image.data());
    desc.pBuildFlags = source->options != nullptr ? source->options : "";
    ze_module_handle_t module = nullptr;
    ze_module_build_log_handle_t log = nullptr;
    const ze_result_t r = ze.zeModuleCreate(device->ze_context, device->device, &desc, &module, &log);
    const std::string build_log = BuildLog(ze, log);
    if (r != ZE_RESULT_SUCCESS) {
      return host.Fail(StatusFromZe(r), ZeFailure("zeModuleCreate", r) + " building SPIR-V for " + device->label +
                                            (build_log.empty() ? std::string() : ": " + build_log));
    }
    result->loaded = std::make_shared<LoadedModule>(device, module);
    for (const SpirvKernel& k : result->kernels) result->names.push_back(k.name.c_str());
    *out_module = Wrap(result.release());
    return ACCEL_SUCCESS;
  });
}

void ModuleDestroy(accel_bk_module_t module) noexcept {
  // Kernels and queued launches hold the loaded module.
  std::unique_ptr<Module> owned(Unwrap(module));
}

accel_status_t ModuleEnumerateKernels(accel_bk_module_t module, uint32_t* inout_count,
                                      const char** out_names) noexcept {
  return backend::EnumerateModuleKernels(Unwrap(module), inout_count, out_names);
}

accel_status_t ModuleGetKernel(accel_bk_module_t handle, const char* name, accel_bk_kernel_t* out_kernel) noexcept {
  Module* module = Unwrap(handle);
  Device* device = module->device;
  const Host& host = *device->host;
  return Guard(host, "module_get_kernel", [&] {
    const auto found = std::find_if(module->kernels.begin(), module->kernels.end(),
                                    [&](const SpirvKernel& k) { return k.name == name; });
    if (found == module->kernels.end()) {
      return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name + "'");
    }
    const ZeApi& ze = device->runtime->ze;
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    desc.pKernelName = name;
    ze_kernel_handle_t handle_ze = nullptr;
    ze_result_t r = ze.zeKernelCreate(module->loaded->module, &desc, &handle_ze);
    if (r != ZE_RESULT_SUCCESS) return host.Fail(StatusFromZe(r), ZeFailure("zeKernelCreate", r));
    auto loaded = std::make_shared<LoadedKernel>(module->loaded, handle_ze);
    ze_kernel_properties_t properties{};
    properties.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    r = ze.zeKernelGetProperties(handle_ze, &properties);
    if (r != ZE_RESULT_SUCCESS) return host.Fail(StatusFromZe(r), ZeFailure("zeKernelGetProperties", r));
    if (properties.numKernelArgs != found->arguments.size()) {
      return host.Fail(ACCEL_ERROR_INTERNAL, std::string("kernel '") + name + "': the driver counts " +
                                                 std::to_string(properties.numKernelArgs) +
                                                 " arguments, the SPIR-V declares " +
                                                 std::to_string(found->arguments.size()));
    }
    auto kernel = std::make_unique<Kernel>();
    kernel->device = device;
    kernel->loaded = std::move(loaded);
    kernel->info = &*found;
    // A kernel compiled for a fixed work-group size (reqd_work_group_size) takes that block only: the driver's
    // figure, else the SPIR-V's LocalSize. The core refuses other blocks at launch (zeKernelSetGroupSize would fail
    // later, as the stream's error).
    if (properties.requiredGroupSizeX != 0) {
      kernel->required_size[0] = properties.requiredGroupSizeX;
      kernel->required_size[1] = std::max(properties.requiredGroupSizeY, 1u);
      kernel->required_size[2] = std::max(properties.requiredGroupSizeZ, 1u);
    } else if (found->required_size[0] != 0) {
      std::copy(std::begin(found->required_size), std::end(found->required_size), kernel->required_size);
    }
    const uint32_t required =
        kernel->required_size[0] * std::max(kernel->required_size[1], 1u) * std::max(kernel->required_size[2], 1u);
    kernel->max_threads = required != 0 ? required : device->capabilities.max_work_group_size;
    kernel->static_shared = properties.localMemSize;
    *out_kernel = Wrap(kernel.release());
    return ACCEL_SUCCESS;
  });
}

void KernelDestroy(accel_bk_kernel_t kernel) noexcept { std::unique_ptr<Kernel> owned(Unwrap(kernel)); }

accel_status_t KernelGetProperties(accel_bk_kernel_t kernel, accel_kernel_properties_t* out) noexcept {
  return backend::WriteKernelProperties(*Unwrap(kernel), out);
}

accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t kernel, uint32_t index,
                                     accel_kernel_argument_info_t* out) noexcept {
  return backend::WriteKernelArgumentInfo(*Unwrap(kernel), index, out);
}

accel_status_t StreamLaunchKernel(accel_bk_stream_t stream_handle, accel_bk_kernel_t kernel_handle,
                                  const accel_bk_launch_t* launch) noexcept {
  Stream* stream = Unwrap(stream_handle);
  Kernel* kernel = Unwrap(kernel_handle);
  const Host& host = *kernel->device->host;
  return Guard(host, "stream_launch_kernel", [&] {
    // The core checked the launch against the kernel's declaration and limits; everything is copied now.
    Operation op;
    op.what = "launch kernel";
    backend::GpuKernelParameters parameters;
    const accel_status_t packed = backend::PackKernelArguments<GpuTraits>(host, launch, &parameters, &op.keep);
    if (packed != ACCEL_SUCCESS) return packed;
    Device* device = stream->device();
    op.submit = [device, loaded = kernel->loaded.get(), grid = std::to_array(launch->grid),
                 block = std::to_array(launch->block),
                 parameters = std::move(parameters)](ZeStream* s, std::string* message) {
      const ZeApi& ze = device->runtime->ze;
      // The arguments and group size are the kernel handle's state until the append has taken them.
      std::lock_guard lock(loaded->mutex);
      const char* call = "zeKernelSetGroupSize";
      ze_result_t r = ze.zeKernelSetGroupSize(loaded->kernel, block[0], block[1], block[2]);
      for (size_t i = 0; r == ZE_RESULT_SUCCESS && i < parameters.offsets.size(); ++i) {
        call = "zeKernelSetArgumentValue";
        r = ze.zeKernelSetArgumentValue(loaded->kernel, parameters.indices[i], parameters.sizes[i],
                                        parameters.blob.data() + parameters.offsets[i]);
      }
      for (size_t i = 0; r == ZE_RESULT_SUCCESS && i < parameters.locals.size(); ++i) {
        call = "zeKernelSetArgumentValue (local memory)";
        r = ze.zeKernelSetArgumentValue(loaded->kernel, parameters.locals[i].first,
                                        static_cast<size_t>(parameters.locals[i].second), nullptr);
      }
      if (r == ZE_RESULT_SUCCESS) {
        call = "zeCommandListAppendLaunchKernel";
        const ze_group_count_t groups{grid[0], grid[1], grid[2]};
        r = AppendInOrder(device, s, [&](ze_command_list_handle_t list) {
          return ze.zeCommandListAppendLaunchKernel(list, loaded->kernel, &groups, nullptr, 0, nullptr);
        });
      }
      if (r == ZE_RESULT_SUCCESS) return ACCEL_SUCCESS;
      *message = ZeFailure(call, r);
      return StatusFromZe(r);
    };
    op.keep.push_back(kernel->loaded);
    return EnqueueOperation(stream, std::move(op));
  });
}

}  // namespace accel::level_zero
