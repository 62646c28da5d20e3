// native-host modules: loading a kernel table (in-process, from a shared
// library's file or from its ELF bytes through a memfd), validating and copying
// it, the module and kernel slots, and running a launch's work-groups.
#include "module.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <utility>

#include "device.h"
#include "memory.h"
#include "thread_pool.h"

namespace accel::host {

// A shared library opened with dlopen, and the memfd it was opened from when it came as bytes. The descriptor stays
// open while the library is loaded, so no other library gets the same "/proc/self/fd/<n>" name meanwhile (the dynamic
// loader would take it for the library already loaded).
// Immutable; destroyed once, by whoever drops the last reference.
class Library {
 public:
  explicit Library(int fd) : fd_(fd) {}
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
    if (fd_ >= 0) close(fd_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  void* handle() const { return handle_; }
  void set_handle(void* handle) { handle_ = handle; }

 private:
  void* handle_ = nullptr;
  int fd_;
};

namespace {

constexpr uint32_t kHeaderSize = sizeof(accel_struct_header_t);
constexpr unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};

// An accel_status_t with its message, for the loading steps below.
struct Outcome {
  accel_status_t status = ACCEL_SUCCESS;
  std::string message;
  bool ok() const { return status == ACCEL_SUCCESS; }
};

Outcome Invalid(std::string message) { return {ACCEL_ERROR_INVALID_ARGUMENT, std::move(message)}; }

accel_struct_header_t ReadHeader(const void* source) { return ReadPrefix<accel_struct_header_t>(source, kHeaderSize); }

bool KnownKind(accel_kernel_arg_kind_t kind) {
  return kind >= ACCEL_KERNEL_ARG_KIND_BUFFER && kind <= ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
}

bool KnownAccess(accel_access_t access) { return access >= ACCEL_ACCESS_READ && access <= ACCEL_ACCESS_READ_WRITE; }

// The element `index` of a peer's array whose stride is its first element's struct_size (docs/abi.md), checked
// like the core checks its own arrays. On success `*out` points at the element.
Outcome ArrayElement(const void* array, uint32_t index, const std::string& name, uint32_t expected_stype,
                     const char* type_name, const char** out) {
  const uint32_t stride = ReadHeader(array).struct_size;
  if (stride < kHeaderSize) {
    return Invalid("'" + name + "[0].struct_size' is " + std::to_string(stride) + ", smaller than the " +
                   std::to_string(kHeaderSize) + "-byte header");
  }
  const char* element = static_cast<const char*>(array) + size_t{index} * stride;
  const accel_struct_header_t header = ReadHeader(element);
  const std::string item = name + "[" + std::to_string(index) + "]";
  if (header.struct_size != stride) {
    return Invalid("'" + item + ".struct_size' is " + std::to_string(header.struct_size) + ", but '" + name +
                   "[0]' has " + std::to_string(stride) + ": the elements of one array share one size");
  }
  if (header.stype != expected_stype) {
    return Invalid("'" + item + ".stype' is " + std::to_string(header.stype) + ", expected " +
                   std::to_string(expected_stype) + " (" + type_name + ")");
  }
  *out = element;
  return {};
}

Outcome CopyArgument(const void* arguments, uint32_t index, const std::string& kernel, KernelDecl* decl) {
  const std::string name = kernel + ".arguments";
  const char* element = nullptr;
  Outcome outcome = ArrayElement(arguments, index, name, ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO,
                                 "ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO", &element);
  if (!outcome.ok()) return outcome;
  const auto info = ReadPrefix<accel_kernel_argument_info_t>(element, ReadHeader(element).struct_size);
  const std::string item = name + "[" + std::to_string(index) + "]";
  if (!KnownKind(info.kind)) {
    return Invalid("'" + item + ".kind' is " + std::to_string(static_cast<int>(info.kind)) +
                   ", not an accel_kernel_arg_kind_t");
  }
  if (!KnownAccess(info.access)) {
    return Invalid("'" + item + ".access' is " + std::to_string(static_cast<int>(info.access)) +
                   ", not an accel_access_t (non-buffer arguments declare ACCEL_ACCESS_READ)");
  }
  if (info.kind != ACCEL_KERNEL_ARG_KIND_SCALAR && info.size != 0) {
    return Invalid("'" + item + ".size' is " + std::to_string(info.size) +
                   "; only SCALAR arguments declare a size, the others 0");
  }
  accel_kernel_argument_info_t copy{};
  copy.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
  copy.struct_size = sizeof(copy);
  copy.kind = info.kind;
  copy.access = info.access;
  copy.size = info.size;
  copy.name = info.name;  // replaced by a pointer into argument_names once the image is complete
  decl->arguments.push_back(copy);
  decl->argument_names.emplace_back(info.name != nullptr ? info.name : "");
  return {};
}

Outcome CopyKernel(const accel_native_kernel_desc_t& desc, const std::string& item,
                   const accel_device_capabilities_t& caps, KernelDecl* decl) {
  if (desc.name == nullptr) return Invalid("'" + item + ".name' is NULL");
  if (desc.name[0] == '\0') return Invalid("'" + item + ".name' is empty");
  decl->name = desc.name;
  if (desc.function == nullptr) return Invalid("'" + item + ".function' of kernel '" + decl->name + "' is NULL");
  decl->function = desc.function;
  if (desc.argument_count > 0 && desc.arguments == nullptr) {
    return Invalid("'" + item + ".arguments' is NULL with 'argument_count' " + std::to_string(desc.argument_count));
  }
  decl->arguments.reserve(desc.argument_count);
  decl->argument_names.reserve(desc.argument_count);
  for (uint32_t i = 0; i < desc.argument_count; ++i) {
    Outcome outcome = CopyArgument(desc.arguments, i, item, decl);
    if (!outcome.ok()) return outcome;
  }

  const uint32_t* required = desc.required_work_group_size;
  const bool any_required = required[0] != 0 || required[1] != 0 || required[2] != 0;
  const auto dims = [required] {
    return "{" + std::to_string(required[0]) + ", " + std::to_string(required[1]) + ", " + std::to_string(required[2]) +
           "}";
  };
  uint64_t required_items = 1;
  if (any_required) {
    for (int i = 0; i < 3; ++i) {
      if (required[i] == 0) {
        return Invalid("'" + item + ".required_work_group_size' is " + dims() + ": all 0 (any size) or all >= 1");
      }
      if (required[i] > caps.max_work_group_dims[i]) {
        return Invalid("'" + item + ".required_work_group_size' " + dims() + " is past the device's work-group " +
                       "dimensions {" + std::to_string(caps.max_work_group_dims[0]) + ", " +
                       std::to_string(caps.max_work_group_dims[1]) + ", " +
                       std::to_string(caps.max_work_group_dims[2]) + "}");
      }
      required_items *= required[i];
    }
  }
  // A declared maximum past the device's is the device's: no launch can be larger anyway.
  uint32_t max_items = desc.max_work_group_size;
  if (max_items == 0 || max_items > caps.max_work_group_size) max_items = caps.max_work_group_size;
  if (any_required && required_items > max_items) {
    return Invalid("'" + item + ".required_work_group_size' " + dims() + " has " + std::to_string(required_items) +
                   " work-items, past the maximum work-group size " + std::to_string(max_items) +
                   (desc.max_work_group_size != 0 && desc.max_work_group_size <= caps.max_work_group_size
                        ? std::string(" it declares")
                        : std::string(" of the device")));
  }
  if (desc.local_memory_size > caps.local_memory_size) {
    return Invalid("'" + item + ".local_memory_size' is " + std::to_string(desc.local_memory_size) +
                   " bytes, past the device's " + std::to_string(caps.local_memory_size) + " bytes of local memory");
  }
  decl->max_work_group_size = max_items;
  for (int i = 0; i < 3; ++i) decl->required_work_group_size[i] = required[i];
  decl->local_memory_size = desc.local_memory_size;
  return {};
}

// Validates `table` (whose struct_size the caller checked to be at least the header) and copies it into `image`.
// Messages name the field ("'kernels[2].arguments[1].kind' is 9, ...").
Outcome CopyTable(const void* table, const accel_device_capabilities_t& caps, ModuleImage* image) {
  const accel_struct_header_t header = ReadHeader(table);
  if (header.stype != ACCEL_STRUCTURE_TYPE_NATIVE_MODULE) {
    return Invalid("'stype' is " + std::to_string(header.stype) + ", expected " +
                   std::to_string(ACCEL_STRUCTURE_TYPE_NATIVE_MODULE) + " (ACCEL_STRUCTURE_TYPE_NATIVE_MODULE)");
  }
  if (header.struct_size < kHeaderSize) {
    return Invalid("'struct_size' is " + std::to_string(header.struct_size) + ", smaller than the " +
                   std::to_string(kHeaderSize) + "-byte header");
  }
  const auto module = ReadPrefix<accel_native_module_t>(table, header.struct_size);
  if (module.kernel_count > 0 && module.kernels == nullptr) {
    return Invalid("'kernels' is NULL with 'kernel_count' " + std::to_string(module.kernel_count));
  }
  image->kernels.resize(module.kernel_count);
  for (uint32_t i = 0; i < module.kernel_count; ++i) {
    const char* element = nullptr;
    Outcome outcome = ArrayElement(module.kernels, i, "kernels", ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC,
                                   "ACCEL_STRUCTURE_TYPE_NATIVE_KERNEL_DESC", &element);
    if (!outcome.ok()) return outcome;
    const auto desc = ReadPrefix<accel_native_kernel_desc_t>(element, ReadHeader(element).struct_size);
    const std::string item = "kernels[" + std::to_string(i) + "]";
    outcome = CopyKernel(desc, item, caps, &image->kernels[i]);
    if (!outcome.ok()) return outcome;
    for (uint32_t j = 0; j < i; ++j) {
      if (image->kernels[j].name == image->kernels[i].name) {
        return Invalid("'" + item + ".name' '" + image->kernels[i].name + "' is also the name of kernels[" +
                       std::to_string(j) + "]");
      }
    }
  }
  // The vectors are final: point the names into them.
  image->names.reserve(image->kernels.size());
  for (KernelDecl& decl : image->kernels) {
    image->names.push_back(decl.name.c_str());
    for (size_t j = 0; j < decl.arguments.size(); ++j) {
      if (decl.arguments[j].name != nullptr) decl.arguments[j].name = decl.argument_names[j].c_str();
    }
  }
  return {};
}

// Opens the library at `path` and copies the table its entry point returns. `fd` (or -1) is the memfd behind `path`,
// owned from here on. `what` names the library in messages.
Outcome LoadLibrary(const std::string& path, int fd, const std::string& what, const accel_device_capabilities_t& caps,
                    ModuleImage* image) {
  std::shared_ptr<Library> library;
  try {
    library = std::make_shared<Library>(fd);
  } catch (...) {
    if (fd >= 0) close(fd);
    throw;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return Invalid(what + " cannot be loaded: " + (error != nullptr ? error : "dlopen failed"));
  }
  library->set_handle(handle);
  dlerror();  // clear any stale message
  void* symbol = dlsym(handle, ACCEL_NATIVE_MODULE_ENTRY_POINT_NAME);
  if (symbol == nullptr) {
    const char* error = dlerror();
    return Invalid(what + " does not export " ACCEL_NATIVE_MODULE_ENTRY_POINT_NAME ": " +
                   (error != nullptr ? error : "the symbol is NULL"));
  }
  const auto get = reinterpret_cast<accel_native_module_get_fn>(symbol);
  const accel_native_module_t* table = get();
  if (table == nullptr) return Invalid(what + ": " ACCEL_NATIVE_MODULE_ENTRY_POINT_NAME " returned NULL");
  Outcome outcome = CopyTable(table, caps, image);
  if (!outcome.ok()) {
    outcome.message = "the accel_native_module_t of " + what + ": " + outcome.message;
    return outcome;
  }
  image->library = std::move(library);
  return {};
}

// Writes an ELF image into a memfd and loads it from there, without touching the file system.
Outcome LoadElfImage(const void* data, uint64_t size, const accel_device_capabilities_t& caps, ModuleImage* image) {
  const int fd = memfd_create("accel-native-module", MFD_CLOEXEC);
  if (fd < 0) {
    return {ACCEL_ERROR_RESOURCE_EXHAUSTED,
            "cannot create a memfd for the shared library image: " + std::system_category().message(errno)};
  }
  const auto* bytes = static_cast<const char*>(data);
  uint64_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, bytes + written, static_cast<size_t>(std::min<uint64_t>(size - written, 1u << 30)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? std::system_category().message(errno) : "no progress";
      close(fd);
      return {ACCEL_ERROR_RESOURCE_EXHAUSTED,
              "cannot write the " + std::to_string(size) + "-byte shared library image to a memfd: " + reason};
    }
    written += static_cast<uint64_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return LoadLibrary(path, fd, "the shared library image (" + std::to_string(size) + " bytes, loaded as " + path + ")",
                     caps, image);
}

// `data` as the module's blob: an in-process table or the bytes of a shared library.
Outcome LoadBlob(const void* data, uint64_t size, const accel_device_capabilities_t& caps, ModuleImage* image) {
  if (size >= sizeof(kElfMagic) && std::memcmp(data, kElfMagic, sizeof(kElfMagic)) == 0) {
    return LoadElfImage(data, size, caps, image);
  }
  uint32_t stype = 0;
  if (size >= sizeof(stype)) std::memcpy(&stype, data, sizeof(stype));
  if (stype == ACCEL_STRUCTURE_TYPE_NATIVE_MODULE && size >= kHeaderSize) {
    const uint32_t struct_size = ReadHeader(data).struct_size;
    if (struct_size > size) {
      return Invalid("the accel_native_module_t at 'data' has struct_size " + std::to_string(struct_size) +
                     ", but 'size' is " + std::to_string(size) + " bytes");
    }
    Outcome outcome = CopyTable(data, caps, image);
    if (!outcome.ok()) outcome.message = "the accel_native_module_t at 'data': " + outcome.message;
    return outcome;
  }
  return Invalid("the " + std::to_string(size) + "-byte blob at 'data' is neither an accel_native_module_t (stype " +
                 std::to_string(ACCEL_STRUCTURE_TYPE_NATIVE_MODULE) + ") nor an ELF shared library");
}

}  // namespace

const KernelDecl* ModuleImage::Find(const char* name) const {
  for (const KernelDecl& decl : kernels) {
    if (decl.name == name) return &decl;
  }
  return nullptr;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const HostServices& host = *device->host;
  return Guard(host, "module_create", [&]() -> accel_status_t {
    const auto s = ReadPrefix<accel_module_source_t>(source, source->struct_size);
    if (s.format != ACCEL_KERNEL_FORMAT_NATIVE_HOST) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED,
                       std::string("the ") + host.backend_name() + " backend builds native-host modules only");
    }
    if ((s.data == nullptr) == (s.path == nullptr)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "exactly one of 'data' and 'path' must be set");
    }
    auto image = std::make_shared<ModuleImage>();
    Outcome outcome;
    if (s.data != nullptr) {
      outcome = LoadBlob(s.data, s.size, device->capabilities, image.get());
    } else {
      // A name without '/' would make dlopen search the library path; the path names a file, as for open().
      const std::string path = std::strchr(s.path, '/') != nullptr ? std::string(s.path) : "./" + std::string(s.path);
      outcome =
          LoadLibrary(path, -1, "the shared library '" + std::string(s.path) + "'", device->capabilities, image.get());
    }
    if (!outcome.ok()) return host.Fail(outcome.status, outcome.message);
    auto module = std::make_unique<Module>(Module{device, std::move(image)});
    *out_module = Wrap(module.release());
    return ACCEL_SUCCESS;
  });
}

void ModuleDestroy(accel_bk_module_t handle) noexcept {
  // Kernels and queued launches hold the image (and the library) on their own.
  Module* module = Unwrap(handle);
  if (module == nullptr) return;
  GuardVoid(*module->device->host, "module_destroy", [&] { std::unique_ptr<Module> owned(module); });
}

accel_status_t ModuleEnumerateKernels(accel_bk_module_t handle, uint32_t* inout_count,
                                      const char** out_names) noexcept {
  const Module* module = Unwrap(handle);
  const HostServices& host = *module->device->host;
  return Guard(host, "module_enumerate_kernels", [&]() -> accel_status_t {
    const std::vector<const char*>& names = module->image->names;
    const auto total = static_cast<uint32_t>(names.size());
    if (out_names == nullptr) {
      *inout_count = total;
      return ACCEL_SUCCESS;
    }
    if (*inout_count < total) {
      const uint32_t capacity = *inout_count;
      *inout_count = total;
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "room for " + std::to_string(capacity) +
                                                         " kernel names, the module has " + std::to_string(total));
    }
    std::copy(names.begin(), names.end(), out_names);
    *inout_count = total;
    return ACCEL_SUCCESS;
  });
}

accel_status_t ModuleGetKernel(accel_bk_module_t handle, const char* name, accel_bk_kernel_t* out_kernel) noexcept {
  const Module* module = Unwrap(handle);
  const HostServices& host = *module->device->host;
  return Guard(host, "module_get_kernel", [&]() -> accel_status_t {
    const KernelDecl* decl = module->image->Find(name);
    if (decl == nullptr) {
      std::string known;
      for (const char* kernel : module->image->names)
        known += (known.empty() ? "'" : ", '") + std::string(kernel) + "'";
      return host.Fail(ACCEL_ERROR_NOT_FOUND, "the module has no kernel '" + std::string(name) + "'; it has " +
                                                  (known.empty() ? std::string("none") : known));
    }
    auto kernel = std::make_unique<Kernel>(Kernel{module->device, module->image, decl});
    *out_kernel = Wrap(kernel.release());
    return ACCEL_SUCCESS;
  });
}

void KernelDestroy(accel_bk_kernel_t handle) noexcept {
  Kernel* kernel = Unwrap(handle);
  if (kernel == nullptr) return;
  GuardVoid(*kernel->device->host, "kernel_destroy", [&] { std::unique_ptr<Kernel> owned(kernel); });
}

accel_status_t KernelGetProperties(accel_bk_kernel_t handle, accel_kernel_properties_t* out_properties) noexcept {
  const Kernel* kernel = Unwrap(handle);
  const KernelDecl& decl = *kernel->decl;
  // Everything but `name` and `module`, which are the core's: they keep what the core put there.
  auto properties = ReadPrefix<accel_kernel_properties_t>(out_properties, out_properties->struct_size);
  properties.argument_count = static_cast<uint32_t>(decl.arguments.size());
  properties.max_work_group_size = decl.max_work_group_size;
  for (int i = 0; i < 3; ++i) properties.required_work_group_size[i] = decl.required_work_group_size[i];
  properties.reserved0 = 0;
  properties.local_memory_size = decl.local_memory_size;
  WritePrefix(properties, out_properties);
  return ACCEL_SUCCESS;
}

accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t handle, uint32_t index,
                                     accel_kernel_argument_info_t* out_info) noexcept {
  const Kernel* kernel = Unwrap(handle);
  const KernelDecl& decl = *kernel->decl;
  const HostServices& host = *kernel->device->host;
  return Guard(host, "kernel_get_argument_info", [&]() -> accel_status_t {
    if (index >= decl.arguments.size()) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "argument " + std::to_string(index) +
                                                         " is out of range: kernel '" + decl.name + "' takes " +
                                                         std::to_string(decl.arguments.size()));
    }
    WritePrefix(decl.arguments[index], out_info);
    return ACCEL_SUCCESS;
  });
}

// --- Launches ----------------------------------------------------------------------------------------------------

accel_status_t Launch::Create(const HostServices& host, const Kernel& kernel, const accel_bk_launch_t& launch,
                              std::unique_ptr<Launch>* out) {
  const KernelDecl& decl = *kernel.decl;
  const auto l = ReadPrefix<accel_bk_launch_t>(&launch, launch.struct_size);
  const auto fail = [&](accel_status_t status, const std::string& message) {
    return host.Fail(status, "kernel '" + decl.name + "': " + message);
  };
  if (l.arg_count != decl.arguments.size()) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                std::to_string(l.arg_count) + " arguments, the kernel takes " + std::to_string(decl.arguments.size()));
  }
  if (l.arg_count > 0 && l.args == nullptr) return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'args' is NULL");
  if (*out == nullptr) out->reset(new Launch());
  Launch* copy = out->get();
  copy->Release();
  copy->image_ = kernel.image;
  copy->decl_ = &decl;
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] == 0 || l.block[i] == 0) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT, "a grid or block dimension is 0");
    }
    copy->grid_[i] = l.grid[i];
    copy->block_[i] = l.block[i];
  }

  // First pass: read and check every argument; lay out scalars and local memory.
  const uint32_t stride = l.arg_count > 0 ? ReadPrefix<accel_struct_header_t>(l.args, kHeaderSize).struct_size : 0;
  if (l.arg_count > 0 && stride < kHeaderSize) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'args[0].struct_size' is smaller than the struct header");
  }
  uint64_t scalar_bytes = 0;
  uint64_t local_end = decl.local_memory_size;
  uint64_t local_asked = decl.local_memory_size;
  copy->args_.assign(l.arg_count, accel_native_arg_t{nullptr, 0});
  for (uint32_t i = 0; i < l.arg_count; ++i) {
    const char* element = reinterpret_cast<const char*>(l.args) + size_t{i} * stride;
    const auto a = ReadPrefix<accel_bk_kernel_arg_t>(element, stride);
    const auto arg_name = [i] { return "args[" + std::to_string(i) + "]"; };  // for messages only
    if (a.kind != decl.arguments[i].kind) {
      return fail(ACCEL_ERROR_INVALID_ARGUMENT,
                  "'" + arg_name() + ".kind' " + std::to_string(static_cast<int>(a.kind)) +
                      " differs from the declared " + std::to_string(static_cast<int>(decl.arguments[i].kind)));
    }
    accel_native_arg_t& native = copy->args_[i];
    switch (a.kind) {
      case ACCEL_KERNEL_ARG_KIND_BUFFER: {
        if (a.buffer == nullptr) return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'" + arg_name() + ".buffer' is NULL");
        std::shared_ptr<Storage> storage = Unwrap(a.buffer)->storage;
        if (a.offset > storage->size() || a.size > storage->size() - a.offset) {
          return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'" + arg_name() + "' binds past the buffer's end");
        }
        native.pointer = storage->data() + a.offset;
        native.size = a.size;
        copy->storages_.push_back(std::move(storage));
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_SCALAR:
        if (a.value == nullptr || a.size == 0) {
          return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'" + arg_name() + "' is a scalar without bytes");
        }
        copy->pending_scalars_.push_back(PendingScalar{i, scalar_bytes, a.value, a.size});
        scalar_bytes = AlignUp(scalar_bytes + a.size, alignof(std::max_align_t));
        native.size = a.size;
        break;
      case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: {
        if (a.size == 0) return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'" + arg_name() + ".size' is 0");
        const uint64_t offset = AlignUp(local_end, kScratchAlignment);
        copy->local_args_.emplace_back(i, offset);
        local_end = offset + a.size;
        local_asked += a.size;
        native.size = a.size;
        break;
      }
      case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS:
        native.pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(a.device_address));
        native.size = 0;
        break;
      default: return fail(ACCEL_ERROR_INVALID_ARGUMENT, "'" + arg_name() + ".kind' is unknown");
    }
  }
  // The limit counts the bytes asked for; the 64-byte alignment padding between regions is the backend's.
  const uint64_t limit = kernel.device->capabilities.local_memory_size;
  if (local_asked > limit) {
    return fail(ACCEL_ERROR_INVALID_ARGUMENT, std::to_string(local_asked) + " bytes of local memory per work-group; " +
                                                  "the device has " + std::to_string(limit));
  }
  copy->local_memory_size_ = local_end;

  // Second pass: the scalars' bytes, copied now (`value` is valid only for this call).
  copy->scalars_.resize(scalar_bytes);
  for (const PendingScalar& scalar : copy->pending_scalars_) {
    std::byte* bytes = copy->scalars_.data() + scalar.offset;
    std::memcpy(bytes, scalar.value, scalar.size);
    copy->args_[scalar.index].pointer = bytes;
  }
  copy->pending_scalars_.clear();
  return ACCEL_SUCCESS;
}

void Launch::Release() {
  image_.reset();
  decl_ = nullptr;
  storages_.clear();
  local_args_.clear();
  pending_scalars_.clear();
  local_memory_size_ = 0;
}

namespace {

std::string GroupText(const uint32_t id[3]) {
  return "work-group (" + std::to_string(id[0]) + "," + std::to_string(id[1]) + "," + std::to_string(id[2]) + ")";
}

bool KnownError(accel_status_t status) {
  return status <= ACCEL_ERROR_INVALID_ARGUMENT && status >= ACCEL_ERROR_INTERNAL;
}

// The first failure among the work-groups of one launch. Thread-safe.
class FirstFailure {
 public:
  // Records the failure unless one was recorded already. Never throws: without memory for the message, the
  // status is kept with a shorter one.
  void Set(accel_status_t status, const uint32_t id[3], const char* what, const char* detail) noexcept {
    std::lock_guard lock(mutex_);
    if (result_.status != ACCEL_SUCCESS) return;
    result_.status = status;
    try {
      result_.message = GroupText(id) + " " + what + detail;
    } catch (...) {
      result_.message.clear();
    }
  }

  LaunchResult Take() {
    std::lock_guard lock(mutex_);
    return std::move(result_);
  }

 private:
  std::mutex mutex_;
  LaunchResult result_;
};

}  // namespace

LaunchResult Launch::Run(ThreadPool& pool, Scratch& caller_scratch) const {
  const uint64_t gx = grid_[0];
  const uint64_t gy = grid_[1];
  const uint64_t count = gx * gy * grid_[2];
  // Each work-group's scratch: its argument array, then its local memory, both 64-byte aligned.
  const uint64_t args_bytes = AlignUp(args_.size() * sizeof(accel_native_arg_t), kScratchAlignment);
  const uint64_t scratch_size = args_bytes + local_memory_size_;
  const accel_native_kernel_fn function = decl_->function;
  FirstFailure failure;

  const auto body = [&](Scratch& scratch, uint64_t index) -> bool {
    const uint32_t id[3] = {static_cast<uint32_t>(index % gx), static_cast<uint32_t>((index / gx) % gy),
                            static_cast<uint32_t>(index / (gx * gy))};
    std::byte* base = nullptr;
    try {
      base = scratch.Reserve(scratch_size);
    } catch (...) {
      failure.Set(ACCEL_ERROR_RESOURCE_EXHAUSTED, id, "could not get its scratch memory: out of host memory", "");
      return false;
    }
    auto* args = reinterpret_cast<accel_native_arg_t*>(base);
    std::copy(args_.begin(), args_.end(), args);
    std::byte* local = local_memory_size_ != 0 ? base + args_bytes : nullptr;
    for (const auto& [arg, offset] : local_args_) args[arg].pointer = local + offset;

    accel_native_work_group_t group{};
    for (int i = 0; i < 3; ++i) {
      group.group_id[i] = id[i];
      group.group_size[i] = block_[i];
      group.grid_size[i] = grid_[i];
    }
    group.local_memory = local;
    group.local_memory_size = local_memory_size_;

    accel_status_t status = ACCEL_SUCCESS;
    try {
      status = function(&group, args);
    } catch (const std::exception& e) {
      failure.Set(ACCEL_ERROR_INTERNAL, id, "threw an exception: ", e.what());
      return false;
    } catch (...) {
      failure.Set(ACCEL_ERROR_INTERNAL, id, "threw an exception", "");
      return false;
    }
    if (status >= 0) return true;  // a negative return is the only failure
    if (KnownError(status)) {
      failure.Set(status, id, "returned ", StatusName(status));
    } else {
      char text[64];
      std::snprintf(text, sizeof(text), "%d, which is not an accel_status_t", static_cast<int>(status));
      failure.Set(ACCEL_ERROR_INTERNAL, id, "returned ", text);
    }
    return false;
  };
  pool.Run(count, caller_scratch, body);
  return failure.Take();
}

}  // namespace accel::host
