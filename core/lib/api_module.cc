// C entry points: modules, kernels and their queries (docs/kernels.md).
#include <fcntl.h>
#include <unistd.h>

#include <bit>

#include "api_common.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace accel::core {

std::string FormatList(accel_kernel_formats_t formats) {
  std::string out;
  for (int bit = 0; bit < 64; ++bit) {
    const accel_kernel_formats_t f = accel_kernel_formats_t{1} << bit;
    if ((formats & f) == 0) continue;
    const char* name = accel_kernel_format_name(f);
    if (!out.empty()) out += ", ";
    out += name != nullptr ? name : fmt::format("format bit {}", bit);
  }
  return out.empty() ? "none" : out;
}

}  // namespace accel::core

namespace {

// Checks one source and normalises it to this core's struct size.
Status ReadSource(const accel_module_desc_t& d, uint32_t index, accel_module_source_t* out) {
  const std::string argument = fmt::format("desc->sources[{}]", index);
  const accel_module_source_t* element = nullptr;
  ACCEL_TRY(ArrayElement(d.sources, d.source_count, index, "desc->sources", &element));
  ACCEL_TRY(ReadInStruct(element, ACCEL_STRUCTURE_TYPE_MODULE_SOURCE, argument.c_str(), out));
  if (std::popcount(out->format) != 1) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.format' 0x{:x} must be exactly one ACCEL_KERNEL_FORMAT_* bit",
                 argument, out->format);
  }
  if (accel_kernel_format_name(out->format) == nullptr) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.format' 0x{:x} is not a kernel format this version knows", argument,
                 out->format);
  }
  if ((out->data == nullptr) == (out->path == nullptr)) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}' must set exactly one of 'data' and 'path'", argument);
  }
  if (out->data != nullptr && out->size == 0) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'{}.size' is 0 with 'data' set", argument);
  }
  return Status::Ok();
}

Status CheckReadable(const accel_module_source_t& source, uint32_t index) {
  if (source.path == nullptr) return Status::Ok();
  const int fd = ::open(source.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ACCEL_ERROR_NOT_FOUND, "'desc->sources[{}].path' '{}' cannot be read: {}", index, source.path,
                 std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

}  // namespace

extern "C" {

ACCEL_API const char* accel_kernel_format_name(accel_kernel_formats_t format) {
  switch (format) {
    case ACCEL_KERNEL_FORMAT_NATIVE_HOST: return "native-host";
    case ACCEL_KERNEL_FORMAT_SPIRV_VULKAN: return "spirv-vulkan";
    case ACCEL_KERNEL_FORMAT_OPENCL_C: return "opencl-c";
    case ACCEL_KERNEL_FORMAT_SPIR: return "spir";
    case ACCEL_KERNEL_FORMAT_SPIRV_OPENCL: return "spirv-opencl";
    case ACCEL_KERNEL_FORMAT_PTX: return "ptx";
    case ACCEL_KERNEL_FORMAT_CUBIN: return "cubin";
    case ACCEL_KERNEL_FORMAT_HSACO: return "hsaco";
    default: return nullptr;
  }
}

ACCEL_API accel_status_t accel_module_create(accel_device_t device, const accel_module_desc_t* desc,
                                             accel_module_t* out_module) {
  return GuardedOutput(__func__, out_module, [&]() -> Status {
    ACCEL_RESOLVE(dev, Device, device);
    ACCEL_NOT_NULL(desc);
    ACCEL_NOT_NULL(out_module);
    accel_module_desc_t d{};
    ACCEL_TRY(ReadInStruct(desc, ACCEL_STRUCTURE_TYPE_MODULE_DESC, "desc", &d));
    ACCEL_REQUIRE(d.flags == 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->flags' 0x{:x} must be 0", d.flags);
    ACCEL_REQUIRE(d.source_count > 0, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->source_count' is 0");
    ACCEL_REQUIRE(d.sources != nullptr, ACCEL_ERROR_INVALID_ARGUMENT, "'desc->sources' is NULL");
    // Grown as each source reads well: a count of 2^32 - 1 allocated 240 GB of zeroes before looking at one.
    std::vector<accel_module_source_t> sources;
    sources.reserve(std::min<uint32_t>(d.source_count, 16));
    accel_kernel_formats_t available = 0;
    for (uint32_t i = 0; i < d.source_count; ++i) {
      accel_module_source_t source{};
      ACCEL_TRY(ReadSource(d, i, &source));
      available |= source.format;
      sources.push_back(source);
    }
    const accel_kernel_formats_t executes = dev->caps.kernel_formats;
    if ((available & executes) == 0) {
      return Error(ACCEL_ERROR_UNSUPPORTED, "{}: the module{} has {}; the device executes {}", dev->label,
                   d.name != nullptr ? fmt::format(" '{}'", d.name) : std::string(), FormatList(available),
                   FormatList(executes));
    }
    auto module = std::make_shared<Module>();
    module->device = dev;
    module->name = d.name != nullptr ? d.name : "";
    module->available_formats = available;
    std::string failures;
    Status last = Status::Ok();
    for (uint32_t i = 0; i < d.source_count; ++i) {
      if ((sources[i].format & executes) == 0) continue;
      ACCEL_TRY(CheckReadable(sources[i], i));
      Status s = ACCEL_SLOT(*dev->backend, module_create, dev->bk, &sources[i], &module->bk);
      if (s.ok()) {
        module->format = sources[i].format;
        module->source_index = i;
        last = Status::Ok();
        break;
      }
      if (s.code() == ACCEL_ERROR_UNIMPLEMENTED) return OnDevice(*dev, s);
      failures += fmt::format("{}'desc->sources[{}]' ({}): {}", failures.empty() ? "" : "; ", i,
                              accel_kernel_format_name(sources[i].format), s.message());
      last = s;
      module->bk = nullptr;
    }
    if (!last.ok()) return OnDevice(*dev, Status(last.code(), failures));

    std::vector<const char*> names;
    ACCEL_TRY(OnDevice(
        *dev, dev->backend->Enumerate("module_enumerate_kernels", dev->backend->api().module_enumerate_kernels,
                                      module->bk, kMaxModuleKernels, static_cast<const char*>(nullptr), &names)));
    for (const char* name : names) module->kernel_names.emplace_back(name != nullptr ? name : "");
    *out_module = ToHandle<accel_module_t>(InstanceOf(*dev).Adopt(HandleType::kModule, module));
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_module_destroy(accel_module_t module) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Module, module);
    Instance& instance = InstanceOf(*self->device);
    std::shared_ptr<Object> owned = instance.Forget(self->handle());
    ACCEL_REQUIRE(owned != nullptr, ACCEL_ERROR_INVALID_HANDLE,
                  "'module' is a stale module handle (already destroyed)");
    std::map<std::string, uint64_t> kernels;
    {
      std::lock_guard lock(self->mutex);
      self->destroyed = true;
      kernels.swap(self->kernels);
    }
    for (const auto& [name, handle] : kernels) instance.Forget(handle);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_module_get_properties(accel_module_t module, accel_module_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Module, module);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES, "out_properties"));
    accel_module_properties_t p{};
    p.format = self->format;
    p.available_formats = self->available_formats;
    p.source_index = self->source_index;
    p.kernel_count = static_cast<uint32_t>(self->kernel_names.size());
    p.device = ToHandle<accel_device_t>(self->device->handle());
    p.name = self->name.c_str();
    FillOutStruct(out_properties, p);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_module_get_kernel_name(accel_module_t module, uint32_t index, const char** out_name) {
  return GuardedOutput(__func__, out_name, [&]() -> Status {
    ACCEL_RESOLVE(self, Module, module);
    ACCEL_NOT_NULL(out_name);
    ACCEL_REQUIRE(index < self->kernel_names.size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: the module has {} kernel(s)", index, self->kernel_names.size());
    *out_name = self->kernel_names[index].c_str();
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_module_get_kernel(accel_module_t module, const char* name, accel_kernel_t* out_kernel) {
  return GuardedOutput(__func__, out_kernel, [&]() -> Status {
    ACCEL_RESOLVE(self, Module, module);
    ACCEL_NOT_NULL(name);
    ACCEL_NOT_NULL(out_kernel);
    const Device& dev = *self->device;
    std::lock_guard lock(self->mutex);
    ACCEL_REQUIRE(!self->destroyed, ACCEL_ERROR_INVALID_HANDLE, "'module' is a stale module handle (being destroyed)");
    if (auto it = self->kernels.find(name); it != self->kernels.end()) {
      *out_kernel = ToHandle<accel_kernel_t>(it->second);
      return Status::Ok();
    }
    if (std::find(self->kernel_names.begin(), self->kernel_names.end(), name) == self->kernel_names.end()) {
      std::string known;
      for (const std::string& k : self->kernel_names) known += (known.empty() ? "'" : ", '") + k + "'";
      return Error(ACCEL_ERROR_NOT_FOUND, "{}: module{} has no kernel '{}'; it has {}", dev.label,
                   self->name.empty() ? std::string() : " '" + self->name + "'", name,
                   known.empty() ? std::string("none") : known);
    }
    auto kernel = std::make_shared<Kernel>();
    kernel->device = self->device;
    kernel->module = self;
    kernel->name = name;
    ACCEL_TRY(OnDevice(dev, ACCEL_SLOT(*dev.backend, module_get_kernel, self->bk, name, &kernel->bk)));
    accel_kernel_properties_t& p = kernel->properties;
    p.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    p.struct_size = sizeof(p);
    ACCEL_TRY(OnDevice(dev, ACCEL_SLOT(*dev.backend, kernel_get_properties, kernel->bk, &p)));
    p.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    p.struct_size = sizeof(p);
    p.next = nullptr;
    p.name = kernel->name.c_str();
    p.module = ToHandle<accel_module_t>(self->handle());
    // The lower of the kernel's and the device's, where each gives one (a device's 0 says nothing, and must not
    // erase the kernel's own limit).
    if (p.max_work_group_size == 0 ||
        (dev.caps.max_work_group_size != 0 && p.max_work_group_size > dev.caps.max_work_group_size)) {
      p.max_work_group_size = dev.caps.max_work_group_size;
    }
    kernel->arguments.resize(p.argument_count);
    kernel->argument_names.resize(p.argument_count);
    for (uint32_t i = 0; i < p.argument_count; ++i) {
      accel_kernel_argument_info_t& a = kernel->arguments[i];
      a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
      a.struct_size = sizeof(a);
      ACCEL_TRY(OnDevice(dev, ACCEL_SLOT(*dev.backend, kernel_get_argument_info, kernel->bk, i, &a)));
      a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO;
      a.struct_size = sizeof(a);
      a.next = nullptr;
      kernel->argument_names[i] = a.name != nullptr ? a.name : "";
      a.name = kernel->argument_names[i].c_str();
    }
    const uint64_t handle = InstanceOf(dev).Adopt(HandleType::kKernel, kernel);
    try {
      self->kernels.emplace(name, handle);
    } catch (...) {  // out of host memory: no live handle the module does not list
      InstanceOf(dev).Forget(handle);
      throw;
    }
    *out_kernel = ToHandle<accel_kernel_t>(handle);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_kernel_get_properties(accel_kernel_t kernel, accel_kernel_properties_t* out_properties) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Kernel, kernel);
    ACCEL_TRY(CheckOutStruct(out_properties, ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES, "out_properties"));
    FillOutStruct(out_properties, self->properties);
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_kernel_get_argument_info(accel_kernel_t kernel, uint32_t index,
                                                        accel_kernel_argument_info_t* out_info) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, Kernel, kernel);
    ACCEL_TRY(CheckOutStruct(out_info, ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO, "out_info"));
    ACCEL_REQUIRE(index < self->arguments.size(), ACCEL_ERROR_INVALID_ARGUMENT,
                  "'index' {} is out of range: kernel '{}' takes {} argument(s)", index, self->name,
                  self->arguments.size());
    FillOutStruct(out_info, self->arguments[index]);
    return Status::Ok();
  });
}

}  // extern "C"
