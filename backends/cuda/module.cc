// Modules and kernels (docs/kernels.md): PTX, cubin and fatbin through cuModuleLoadDataEx (the `cubin` format takes
// both ELF cubins and fatbins; the driver tells them apart), kernels through cuModuleGetFunction, launches through
// cuLaunchKernel. A PTX module's kernels and their arguments come from its text (ParsePtxEntries, pure, unit-tested);
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

// --- PTX reflection (pure) -----------------------------------------------------------------------------------------

namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '.';
}

// Whether `text` holds `word` delimited by non-identifier characters.
bool HasWord(std::string_view text, std::string_view word) {
  size_t at = 0;
  while ((at = text.find(word, at)) != std::string_view::npos) {
    const bool left = at == 0 || !IsIdentifierChar(text[at - 1]);
    const size_t end = at + word.size();
    const bool right = end >= text.size() || !IsIdentifierChar(text[end]);
    if (left && right) return true;
    at = end;
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < s.size()) {
    while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at])) != 0) ++at;
    size_t end = at;
    while (end < s.size() && std::isspace(static_cast<unsigned char>(s[end])) == 0) ++end;
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

// Bytes of a PTX fundamental type (".u64" 8, ".f32" 4, ".b8" 1); 0 unknown.
uint32_t TypeSize(std::string_view type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const char kind = type[1];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f') return 0;
  const int bits = std::atoi(std::string(type.substr(2)).c_str());
  return bits >= 8 ? static_cast<uint32_t>(bits / 8) : 0;
}

// Strips // and /* */ comments.
std::string StripComments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

// The register `ld.param.<type> %r, [param]` loads `param` into, or "" when the body never loads it.
std::vector<std::string> LoadedRegisters(std::string_view body, std::string_view param) {
  std::vector<std::string> registers;
  const std::string operand = "[" + std::string(param) + "]";
  size_t at = 0;
  while ((at = body.find(operand, at)) != std::string_view::npos) {
    const size_t line_start = body.rfind('\n', at) == std::string_view::npos ? 0 : body.rfind('\n', at) + 1;
    const std::string_view line = body.substr(line_start, at - line_start);
    const size_t percent = line.find('%');
    if (line.find("ld.param") != std::string_view::npos && percent != std::string_view::npos) {
      size_t end = percent + 1;
      while (end < line.size() && IsIdentifierChar(line[end])) ++end;
      registers.emplace_back(line.substr(percent, end - percent));
    }
    at += operand.size();
  }
  return registers;
}

// Whether `reg` is used as an address: converted by cvta, or inside an address operand "[%rd1]" / "[%rd1+4]".
bool UsedAsAddress(std::string_view body, std::string_view reg) {
  size_t at = 0;
  while ((at = body.find(reg, at)) != std::string_view::npos) {
    const size_t end = at + reg.size();
    if (end < body.size() && IsIdentifierChar(body[end])) {
      at = end;
      continue;
    }
    const size_t line_start = body.rfind('\n', at) == std::string_view::npos ? 0 : body.rfind('\n', at) + 1;
    const std::string_view before = body.substr(line_start, at - line_start);
    if (before.find("cvta") != std::string_view::npos) return true;
    if (!before.empty() && before.back() == '[') return true;
    at = end;
  }
  return false;
}

}  // namespace

std::vector<PtxEntry> ParsePtxEntries(std::string_view ptx_text) {
  const std::string ptx = StripComments(ptx_text);
  // Module-level dynamic shared memory: ".extern .shared .align 16 .b8 scratch[];".
  std::vector<std::string> dynamic_shared;
  for (size_t at = 0; (at = ptx.find(".extern", at)) != std::string::npos; at += 7) {
    const size_t end = ptx.find(';', at);
    if (end == std::string::npos) break;
    const std::string_view declaration(ptx.data() + at, end - at);
    if (declaration.find(".shared") == std::string_view::npos) continue;
    const size_t bracket = declaration.find('[');
    std::string_view head = Trim(declaration.substr(0, bracket));
    const size_t space = head.find_last_of(" \t");
    dynamic_shared.emplace_back(space == std::string_view::npos ? head : head.substr(space + 1));
  }
  std::vector<PtxEntry> entries;
  for (size_t at = 0; (at = ptx.find(".entry", at)) != std::string::npos;) {
    const bool word_start = at == 0 || !IsIdentifierChar(ptx[at - 1]);
    at += 6;
    if (!word_start || at >= ptx.size() || IsIdentifierChar(ptx[at])) continue;
    const size_t open = ptx.find('(', at);
    const size_t brace = ptx.find('{', at);
    if (brace == std::string::npos) break;
    PtxEntry entry;
    const size_t name_end = open != std::string::npos && open < brace ? open : brace;
    entry.name = std::string(Trim(std::string_view(ptx).substr(at, name_end - at)));
    // The body: from the entry's '{' to its matching '}'.
    size_t depth = 0;
    size_t close = brace;
    for (; close < ptx.size(); ++close) {
      if (ptx[close] == '{') ++depth;
      if (ptx[close] == '}' && --depth == 0) break;
    }
    const std::string_view body = std::string_view(ptx).substr(brace, close - brace);
    if (open != std::string::npos && open < brace) {
      const size_t params_end = ptx.find(')', open);
      const std::string_view params = std::string_view(ptx).substr(open + 1, params_end - open - 1);
      size_t from = 0;
      while (from <= params.size()) {
        size_t comma = params.find(',', from);
        if (comma == std::string_view::npos) comma = params.size();
        const std::string_view param = Trim(params.substr(from, comma - from));
        from = comma + 1;
        if (param.empty()) continue;
        const std::vector<std::string_view> tokens = Tokens(param);
        ArgumentDeclaration a;
        std::string_view name = tokens.back();
        uint32_t size = 0;
        uint32_t element = 0;
        bool pointer_annotation = false;
        for (const std::string_view t : tokens) {
          if (t == ".ptr") pointer_annotation = true;
          if (element == 0) element = TypeSize(t);
        }
        const size_t bracket = name.find('[');
        if (bracket != std::string_view::npos) {  // ".param .align 8 .b8 name[16]": a by-value struct
          size = element * static_cast<uint32_t>(std::atoi(std::string(name.substr(bracket + 1)).c_str()));
          name = name.substr(0, bracket);
        } else {
          size = element;
        }
        a.name = std::string(name);
        bool buffer = false;
        if (bracket == std::string_view::npos && element == 8) {
          const std::vector<std::string> registers = LoadedRegisters(body, name);
          buffer = pointer_annotation || registers.empty();
          for (const std::string& reg : registers) buffer = buffer || UsedAsAddress(body, reg);
        }
        if (buffer) {
          a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
          a.access = ACCEL_ACCESS_READ_WRITE;
          a.size = 0;
        } else {
          a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
          a.access = ACCEL_ACCESS_READ;
          a.size = size;
        }
        entry.arguments.push_back(std::move(a));
      }
    }
    for (const std::string& shared : dynamic_shared) {
      if (HasWord(body, shared)) {
        ArgumentDeclaration a;
        a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
        a.access = ACCEL_ACCESS_READ_WRITE;
        a.name = shared;
        entry.arguments.push_back(std::move(a));
        break;
      }
    }
    entries.push_back(std::move(entry));
    at = close;
  }
  return entries;
}

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
