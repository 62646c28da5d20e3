// Modules and kernels (docs/kernels.md): AMDGPU code objects (`hsaco`, ELF) through hipModuleLoadData, kernels
// through hipModuleGetFunction, launches through hipModuleLaunchKernel. A module's kernels and their arguments come
// from the code object's metadata note (ParseCodeObject, pure, unit-tested): HIP has no call that lists a module's
// kernels.
//
// Arguments map to kernel parameters in order: BUFFER the device address of the bound range's first byte,
// DEVICE_ADDRESS the address as given, SCALAR its bytes; LOCAL_MEMORY arguments have no parameter: their sizes add up
// to the launch's dynamic LDS (sharedMemBytes).
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_kernels.h"
#include "hip_backend.h"

namespace accel::hip {

// --- Code-object reflection (pure) -------------------------------------------------------------------------------

namespace {

// A msgpack value, as much of it as the metadata needs (docs: github.com/msgpack/msgpack/blob/master/spec.md).
struct Value {
  enum class Type { kNil, kBool, kInt, kFloat, kString, kBinary, kArray, kMap } type = Type::kNil;
  int64_t integer = 0;
  bool boolean = false;
  std::string text;
  std::vector<Value> items;                            // kArray
  std::vector<std::pair<std::string, Value>> entries;  // kMap, string keys only (others are dropped)

  const Value* Find(std::string_view key) const {
    for (const auto& [k, v] : entries) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Read(Value* out, int depth = 0) {
    if (depth > 32 || at_ >= data_.size()) return false;
    const auto b = static_cast<uint8_t>(data_[at_++]);
    if (b <= 0x7f) return Int(out, b);
    if (b >= 0xe0) return Int(out, static_cast<int8_t>(b));
    if ((b & 0xf0) == 0x80) return Map(out, b & 0x0f, depth);
    if ((b & 0xf0) == 0x90) return Array(out, b & 0x0f, depth);
    if ((b & 0xe0) == 0xa0) return String(out, b & 0x1f, Value::Type::kString);
    uint64_t n = 0;
    switch (b) {
      case 0xc0: out->type = Value::Type::kNil; return true;
      case 0xc2:
      case 0xc3:
        out->type = Value::Type::kBool;
        out->boolean = b == 0xc3;
        return true;
      case 0xc4: return Unsigned(1, &n) && String(out, n, Value::Type::kBinary);
      case 0xc5: return Unsigned(2, &n) && String(out, n, Value::Type::kBinary);
      case 0xc6: return Unsigned(4, &n) && String(out, n, Value::Type::kBinary);
      case 0xca: out->type = Value::Type::kFloat; return Skip(4);
      case 0xcb: out->type = Value::Type::kFloat; return Skip(8);
      case 0xcc: return Unsigned(1, &n) && Int(out, static_cast<int64_t>(n));
      case 0xcd: return Unsigned(2, &n) && Int(out, static_cast<int64_t>(n));
      case 0xce: return Unsigned(4, &n) && Int(out, static_cast<int64_t>(n));
      case 0xcf: return Unsigned(8, &n) && Int(out, static_cast<int64_t>(n));
      case 0xd0: return Unsigned(1, &n) && Int(out, static_cast<int8_t>(n));
      case 0xd1: return Unsigned(2, &n) && Int(out, static_cast<int16_t>(n));
      case 0xd2: return Unsigned(4, &n) && Int(out, static_cast<int32_t>(n));
      case 0xd3: return Unsigned(8, &n) && Int(out, static_cast<int64_t>(n));
      case 0xd9: return Unsigned(1, &n) && String(out, n, Value::Type::kString);
      case 0xda: return Unsigned(2, &n) && String(out, n, Value::Type::kString);
      case 0xdb: return Unsigned(4, &n) && String(out, n, Value::Type::kString);
      case 0xdc: return Unsigned(2, &n) && Array(out, n, depth);
      case 0xdd: return Unsigned(4, &n) && Array(out, n, depth);
      case 0xde: return Unsigned(2, &n) && Map(out, n, depth);
      case 0xdf: return Unsigned(4, &n) && Map(out, n, depth);
      default: return false;  // ext types: not in code-object metadata
    }
  }

 private:
  bool Skip(size_t n) {
    if (data_.size() - at_ < n) return false;
    at_ += n;
    return true;
  }
  bool Unsigned(size_t bytes, uint64_t* out) {
    if (data_.size() - at_ < bytes) return false;
    *out = 0;
    for (size_t i = 0; i < bytes; ++i) *out = (*out << 8) | static_cast<uint8_t>(data_[at_++]);
    return true;
  }
  static bool Int(Value* out, int64_t v) {
    out->type = Value::Type::kInt;
    out->integer = v;
    return true;
  }
  bool String(Value* out, uint64_t n, Value::Type type) {
    if (data_.size() - at_ < n) return false;
    out->type = type;
    out->text.assign(data_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool Array(Value* out, uint64_t n, int depth) {
    out->type = Value::Type::kArray;
    if (n > data_.size() - at_) return false;  // every element takes a byte at least
    out->items.resize(n);
    for (Value& v : out->items) {
      if (!Read(&v, depth + 1)) return false;
    }
    return true;
  }
  bool Map(Value* out, uint64_t n, int depth) {
    out->type = Value::Type::kMap;
    if (n > data_.size() - at_) return false;
    for (uint64_t i = 0; i < n; ++i) {
      Value key;
      Value value;
      if (!Read(&key, depth + 1) || !Read(&value, depth + 1)) return false;
      if (key.type == Value::Type::kString) out->entries.emplace_back(std::move(key.text), std::move(value));
    }
    return true;
  }

  std::string_view data_;
  size_t at_ = 0;
};

uint32_t UintOf(const Value* v) {
  return v != nullptr && v->type == Value::Type::kInt && v->integer > 0 ? static_cast<uint32_t>(v->integer) : 0;
}
std::string TextOf(const Value* v) { return v != nullptr && v->type == Value::Type::kString ? v->text : ""; }

template <typename T>
bool Load(std::string_view image, uint64_t offset, T* out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(out, image.data() + offset, sizeof(T));
  return true;
}

}  // namespace

bool ParseCodeObjectMetadata(std::string_view msgpack, std::vector<CodeObjectKernel>* out, std::string* why) {
  Value root;
  Reader reader(msgpack);
  if (!reader.Read(&root) || root.type != Value::Type::kMap) {
    *why = "the code object's metadata is not a msgpack map";
    return false;
  }
  const Value* kernels = root.Find("amdhsa.kernels");
  if (kernels == nullptr || kernels->type != Value::Type::kArray) {
    *why = "the code object's metadata has no amdhsa.kernels list";
    return false;
  }
  for (const Value& k : kernels->items) {
    CodeObjectKernel kernel;
    kernel.name = TextOf(k.Find(".name"));
    if (kernel.name.empty()) {
      *why = "a kernel of the code object's metadata has no .name";
      return false;
    }
    kernel.max_flat_workgroup_size = UintOf(k.Find(".max_flat_workgroup_size"));
    kernel.group_segment_fixed_size = UintOf(k.Find(".group_segment_fixed_size"));
    if (const Value* args = k.Find(".args"); args != nullptr && args->type == Value::Type::kArray) {
      for (const Value& arg : args->items) {
        const std::string kind = TextOf(arg.Find(".value_kind"));
        ArgumentDeclaration a;
        a.name = TextOf(arg.Find(".name"));
        if (a.name.empty()) a.name = "arg_" + std::to_string(kernel.arguments.size());
        if (kind == "global_buffer") {
          a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
          const Value* is_const = arg.Find(".is_const");
          const std::string access = TextOf(arg.Find(".actual_access")).empty() ? TextOf(arg.Find(".access"))
                                                                                : TextOf(arg.Find(".actual_access"));
          const bool read_only = (is_const != nullptr && is_const->type == Value::Type::kBool && is_const->boolean) ||
                                 access == "read_only";
          a.access = read_only                ? ACCEL_ACCESS_READ
                     : access == "write_only" ? ACCEL_ACCESS_WRITE
                                              : ACCEL_ACCESS_READ_WRITE;
        } else if (kind == "by_value") {
          a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
          a.size = UintOf(arg.Find(".size"));
        } else if (kind == "dynamic_shared_pointer") {
          a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
          a.access = ACCEL_ACCESS_READ_WRITE;
        } else if (kind.rfind("hidden_", 0) == 0) {
          continue;  // filled by the runtime
        } else {
          *why = "kernel '" + kernel.name + "' has an argument of kind '" + kind + "', which Accel cannot bind";
          return false;
        }
        kernel.arguments.push_back(std::move(a));
      }
    }
    out->push_back(std::move(kernel));
  }
  return true;
}

bool ParseCodeObject(std::string_view image, std::vector<CodeObjectKernel>* out, std::string* why) {
  // ELF64 little-endian, e_machine EM_AMDGPU (224); the metadata is the "AMDGPU" note of type NT_AMDGPU_METADATA
  // (32) in a SHT_NOTE section (LLVM's AMDGPUUsage, "Code Object Metadata").
  constexpr uint16_t kEmAmdgpu = 224;
  constexpr uint32_t kShtNote = 7;
  constexpr uint32_t kNtAmdgpuMetadata = 32;
  if (image.size() < 64 || image.substr(0, 4) !=
                               "\x7f"
                               "ELF") {
    *why = image.substr(0, 24) == "__CLANG_OFFLOAD_BUNDLE__"
               ? "the image is a clang offload bundle: give the code object (hsaco) for the device's architecture"
               : "the image is not an ELF code object (hsaco)";
    return false;
  }
  uint16_t machine = 0;
  uint64_t shoff = 0;
  uint16_t shentsize = 0;
  uint16_t shnum = 0;
  if (image[4] != 2 || image[5] != 1 || !Load(image, 18, &machine) || !Load(image, 40, &shoff) ||
      !Load(image, 58, &shentsize) || !Load(image, 60, &shnum)) {
    *why = "the code object is not a 64-bit little-endian ELF file";
    return false;
  }
  if (machine != kEmAmdgpu) {
    *why = "the ELF file is for machine " + std::to_string(machine) + ", not AMDGPU (224)";
    return false;
  }
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t header = shoff + uint64_t{i} * shentsize;
    uint32_t type = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    if (!Load(image, header + 4, &type) || !Load(image, header + 24, &offset) || !Load(image, header + 32, &size)) {
      *why = "the code object's section headers are truncated";
      return false;
    }
    if (type != kShtNote || offset > image.size() || image.size() - offset < size) continue;
    for (uint64_t at = offset; at + 12 <= offset + size;) {
      uint32_t namesz = 0, descsz = 0, note_type = 0;
      Load(image, at, &namesz);
      Load(image, at + 4, &descsz);
      Load(image, at + 8, &note_type);
      const uint64_t name_at = at + 12;
      const uint64_t desc_at = name_at + ((uint64_t{namesz} + 3) & ~uint64_t{3});
      const uint64_t next = desc_at + ((uint64_t{descsz} + 3) & ~uint64_t{3});
      if (desc_at + descsz > offset + size) break;
      const std::string_view name = image.substr(name_at, namesz);
      if (note_type == kNtAmdgpuMetadata && name.substr(0, 6) == "AMDGPU") {
        return ParseCodeObjectMetadata(image.substr(desc_at, descsz), out, why);
      }
      at = next;
    }
  }
  *why = "the code object has no AMDGPU metadata note (code object v3 or newer is needed)";
  return false;
}

// --- Modules and kernels ---------------------------------------------------------------------------------------

namespace {

// A loaded hipModule_t, unloaded when the module handle and every launch of its kernels let go.
struct LoadedModule {
  LoadedModule(Device* d, hipModule_t m) : device(d), module(m) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  Device* device;
  hipModule_t module;
  ~LoadedModule() {
    ScopedDevice scope(device);
    device->runtime->hip.hipModuleUnload(module);
  }
};

}  // namespace

struct Module {
  Device* device;
  std::shared_ptr<LoadedModule> loaded;
  std::vector<CodeObjectKernel> kernels;
  std::vector<const char*> names;
};

struct Kernel {
  Device* device;
  std::shared_ptr<LoadedModule> loaded;
  const CodeObjectKernel* info;  // owned by the module, which outlives its kernels
  hipFunction_t function;
  uint32_t max_threads = 0;
  uint32_t static_shared = 0;
};

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "module_create", [&] {
    if (source->format != ACCEL_KERNEL_FORMAT_HSACO) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the HIP backend builds hsaco modules only");
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
    if (!ParseCodeObject(image, &result->kernels, &why)) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, why);
    const HipApi& hip = device->runtime->hip;
    ScopedDevice scope(device);
    if (scope.result() != hipSuccess) {
      return host.Fail(StatusFromHip(scope.result()), HipFailure(hip, "hipSetDevice", scope.result()));
    }
    hipModule_t module = nullptr;
    const hipError_t r = hip.hipModuleLoadData(&module, image.data());
    if (r != hipSuccess) {
      return host.Fail(StatusFromHip(r), HipFailure(hip, "hipModuleLoadData", r) + " loading a code object for " +
                                             std::string(device->capabilities.architecture));
    }
    result->loaded = std::make_shared<LoadedModule>(device, module);
    for (const CodeObjectKernel& k : result->kernels) result->names.push_back(k.name.c_str());
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
                                    [&](const CodeObjectKernel& k) { return k.name == name; });
    if (found == module->kernels.end()) {
      return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name + "'");
    }
    const HipApi& hip = device->runtime->hip;
    ScopedDevice scope(device);
    hipFunction_t function = nullptr;
    hipError_t r = hip.hipModuleGetFunction(&function, module->loaded->module, name);
    if (r != hipSuccess) return host.Fail(StatusFromHip(r), HipFailure(hip, "hipModuleGetFunction", r));
    int max_threads = 0;
    int static_shared = 0;
    r = hip.hipFuncGetAttribute(&max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    if (r == hipSuccess) r = hip.hipFuncGetAttribute(&static_shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function);
    if (r != hipSuccess) {
      // The metadata says the same: the runtime's figures are preferred where it gives them.
      host.Log(ACCEL_LOG_LEVEL_DEBUG,
               std::string("kernel '") + name + "': " + HipFailure(hip, "hipFuncGetAttribute", r));
      max_threads = static_cast<int>(found->max_flat_workgroup_size);
      static_shared = static_cast<int>(found->group_segment_fixed_size);
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
    const HipApi* hip = &kernel->device->runtime->hip;
    op.submit = [hip, function = kernel->function, grid = std::to_array(launch->grid),
                 block = std::to_array(launch->block),
                 shared = static_cast<unsigned int>(launch->dynamic_local_memory_size),
                 parameters = std::move(parameters)](hipStream_t s, std::string* message) mutable {
      void* inline_pointers[16];
      std::vector<void*> more;
      void** pointers = parameters.Pointers(inline_pointers, &more);
      const hipError_t r = hip->hipModuleLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                                      shared, s, pointers, nullptr);
      if (r == hipSuccess) return ACCEL_SUCCESS;
      *message = HipFailure(*hip, "hipModuleLaunchKernel", r);
      return StatusFromHip(r);
    };
    op.keep.push_back(kernel->loaded);
    return EnqueueOperation(stream, std::move(op));
  });
}

}  // namespace accel::hip
