// Modules and kernels (docs/kernels.md): PTX, cubin and fatbin through cuModuleLoadDataEx (the `cubin` format takes
// both ELF cubins and fatbins; the driver tells them apart), kernels through cuModuleGetFunction, launches through
// cuLaunchKernel. A PTX module's kernels and their arguments come from its text (ParsePtxEntries in ptx.h);
// a cubin's from the driver (cuModuleEnumerateFunctions, cuFuncGetParamInfo: CUDA 12.4), where an 8-byte parameter
// is a BUFFER and any other a SCALAR, and no LOCAL_MEMORY argument is declared (dynamic shared memory needs PTX).
//
// Arguments map to kernel parameters in order: BUFFER the device address of the bound range's first byte,
// DEVICE_ADDRESS the address as given, SCALAR its bytes; LOCAL_MEMORY arguments have no parameter: their sizes add up
// to the launch's dynamic shared memory (sharedMemBytes).
#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_kernels.h"
#include "cuda_backend.h"

namespace accel::cuda {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string LogGist(std::string_view log, size_t limit) {
  std::string errors;
  std::string others;
  size_t at = 0;
  while (at < log.size()) {
    size_t end = log.find('\n', at);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = Trim(log.substr(at, end - at));
    at = end + 1;
    if (line.empty()) continue;
    std::string& into = line.find("error") != std::string_view::npos ? errors : others;
    into += (into.empty() ? "" : "; ") + std::string(line);
  }
  std::string gist = errors.empty() ? others : errors;
  if (gist.size() > limit) gist = gist.substr(0, limit) + "...";
  return gist;
}

// --- Modules and kernels ---------------------------------------------------------------------------------------

namespace {

// A loaded CUmodule, unloaded when the module handle and every launch of its kernels let go.
struct LoadedModule {
  LoadedModule(Device* d, CUmodule m) : device(d), module(m) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  Device* device;
  CUmodule module;
  ~LoadedModule() {
    ScopedContext scope(device);
    device->runtime->cu.cuModuleUnload(module);
  }
};

struct KernelInfo {
  std::string name;
  std::vector<ArgumentDeclaration> arguments;
};

}  // namespace

struct Module {
  Device* device;
  std::shared_ptr<LoadedModule> loaded;
  std::vector<KernelInfo> kernels;
  std::vector<const char*> names;
};

struct Kernel {
  Device* device;
  std::shared_ptr<LoadedModule> loaded;
  const KernelInfo* info;  // owned by the module, which outlives its kernels
  CUfunction function;
  uint32_t max_threads = 0;
  uint32_t static_shared = 0;
};

namespace {

// The kernels of a cubin or fatbin module, from the driver (CUDA 12.4's enumeration and parameter queries).
accel_status_t ListBinaryKernels(Device* device, CUmodule module, std::vector<KernelInfo>* out) {
  const CuApi& cu = device->runtime->cu;
  const Host& host = *device->host;
  if (cu.cuModuleGetFunctionCount == nullptr || cu.cuModuleEnumerateFunctions == nullptr ||
      cu.cuFuncGetName == nullptr || cu.cuFuncGetParamInfo == nullptr) {
    return host.Fail(ACCEL_ERROR_UNSUPPORTED,
                     "listing the kernels of a cubin or fatbin needs a CUDA 12.4 driver (cuModuleEnumerateFunctions, "
                     "cuFuncGetParamInfo); this one is " +
                         DriverVersionString(device->attributes.driver_version) + ": load PTX instead");
  }
  unsigned int count = 0;
  CUresult r = cu.cuModuleGetFunctionCount(&count, module);
  if (r != CUDA_SUCCESS) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuModuleGetFunctionCount", r));
  std::vector<CUfunction> functions(count);
  if (count > 0) {
    r = cu.cuModuleEnumerateFunctions(functions.data(), count, module);
    if (r != CUDA_SUCCESS) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuModuleEnumerateFunctions", r));
  }
  for (CUfunction f : functions) {
    KernelInfo info;
    const char* name = nullptr;
    r = cu.cuFuncGetName(&name, f);
    if (r != CUDA_SUCCESS || name == nullptr) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuFuncGetName", r));
    info.name = name;
    for (size_t index = 0;; ++index) {
      size_t offset = 0;
      size_t size = 0;
      r = cu.cuFuncGetParamInfo(f, index, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
      if (r != CUDA_SUCCESS) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuFuncGetParamInfo", r));
      ArgumentDeclaration a;
      a.name = "param_" + std::to_string(index);
      if (size == 8) {
        a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
        a.access = ACCEL_ACCESS_READ_WRITE;
      } else {
        a.size = static_cast<uint32_t>(size);
      }
      info.arguments.push_back(std::move(a));
    }
    out->push_back(std::move(info));
  }
  return ACCEL_SUCCESS;
}

}  // namespace

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "module_create", [&] {
    const bool ptx = source->format == ACCEL_KERNEL_FORMAT_PTX;
    if (!ptx && source->format != ACCEL_KERNEL_FORMAT_CUBIN) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the CUDA backend builds ptx and cubin modules only");
    }
    std::string image;
    if (source->data != nullptr) {
      image.assign(static_cast<const char*>(source->data), static_cast<size_t>(source->size));
    } else {
      std::ifstream in(source->path, std::ios::binary);
      if (!in) return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("cannot read ") + source->path);
      image.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (ptx && image.find('\0') != std::string::npos) image.resize(image.find('\0'));  // the text ends there
    // std::string keeps a NUL after the data: PTX is handed over as a C string.
    const CuApi& cu = device->runtime->cu;
    ScopedContext scope(device);
    if (scope.result() != CUDA_SUCCESS) {
      return host.Fail(StatusFromCu(scope.result()), CuFailure(cu, "cuCtxPushCurrent", scope.result()));
    }
    char log[4096] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log) - 1))};
    CUmodule module = nullptr;
    const CUresult r = cu.cuModuleLoadDataEx(&module, image.c_str(), 2, options, values);
    if (r != CUDA_SUCCESS) {
      const std::string gist = LogGist(log);
      return host.Fail(StatusFromCu(r), CuFailure(cu, "cuModuleLoadDataEx", r) + " loading " +
                                            (ptx ? "PTX" : "a cubin/fatbin") + " for " +
                                            ArchitectureOf(device->attributes.cc_major, device->attributes.cc_minor) +
                                            (gist.empty() ? std::string() : ": " + gist));
    }
    auto result = std::make_unique<Module>();
    result->device = device;
    result->loaded = std::make_shared<LoadedModule>(device, module);
    if (ptx) {
      for (PtxEntry& e : ParsePtxEntries(image)) {
        result->kernels.push_back(KernelInfo{std::move(e.name), std::move(e.arguments)});
      }
    } else {
      const accel_status_t status = ListBinaryKernels(device, module, &result->kernels);
      if (status != ACCEL_SUCCESS) return status;
    }
    for (const KernelInfo& k : result->kernels) result->names.push_back(k.name.c_str());
    *out_module = Wrap(result.release());
    return ACCEL_SUCCESS;
  });
}

void ModuleDestroy(accel_bk_module_t module) noexcept {
  // Launches still queued hold the loaded module.
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
                                    [&](const KernelInfo& k) { return k.name == name; });
    if (found == module->kernels.end()) {
      return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name + "'");
    }
    const CuApi& cu = device->runtime->cu;
    ScopedContext scope(device);
    CUfunction function = nullptr;
    CUresult r = cu.cuModuleGetFunction(&function, module->loaded->module, name);
    if (r != CUDA_SUCCESS) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuModuleGetFunction", r));
    int max_threads = 0;
    int static_shared = 0;
    r = cu.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    if (r == CUDA_SUCCESS) r = cu.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function);
    if (r != CUDA_SUCCESS) return host.Fail(StatusFromCu(r), CuFailure(cu, "cuFuncGetAttribute", r));
    // Opt in to the device's whole shared memory, so that the local memory the descriptor promises is launchable.
    const int optin = static_cast<int>(device->capabilities.local_memory_size) - static_shared;
    if (optin > 48 * 1024) {
      r = cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
      if (r != CUDA_SUCCESS) {
        host.Log(ACCEL_LOG_LEVEL_WARN, std::string("kernel '") + name + "': " +
                                           CuFailure(cu, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r));
      }
    }
    auto kernel = std::make_unique<Kernel>();
    kernel->device = device;
    kernel->loaded = module->loaded;
    kernel->info = &*found;
    kernel->function = function;
    kernel->max_threads = static_cast<uint32_t>(std::max(max_threads, 0));
    kernel->static_shared = static_cast<uint32_t>(std::max(static_shared, 0));
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
    const CuApi* cu = &kernel->device->runtime->cu;
    op.submit = [cu, function = kernel->function, grid = std::to_array(launch->grid),
                 block = std::to_array(launch->block),
                 shared = static_cast<unsigned int>(launch->dynamic_local_memory_size),
                 parameters = std::move(parameters)](CUstream s, std::string* message) mutable {
      void* inline_pointers[16];
      std::vector<void*> more;
      void** pointers = parameters.Pointers(inline_pointers, &more);
      const CUresult r = cu->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                                            s, pointers, nullptr);
      if (r == CUDA_SUCCESS) return ACCEL_SUCCESS;
      *message = CuFailure(*cu, "cuLaunchKernel", r);
      return StatusFromCu(r);
    };
    op.keep.push_back(kernel->loaded);
    return EnqueueOperation(stream, std::move(op));
  });
}

}  // namespace accel::cuda
