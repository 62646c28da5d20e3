// The entry point: ABI negotiation, the function table, and the context that one Accel instance opens: the Level
// Zero loader (libze_loader.so.1 by dlopen, never linked; ACCEL_LEVEL_ZERO_LIBRARY names another file), its entry
// points by dlsym, zeInit, one Level Zero context per driver, every device with its properties, and peer access
// between them. A missing loader, no driver or no device is ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason, which
// the loader report shows.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/gpu_api.h"
#include "level_zero_backend.h"

namespace accel::level_zero {

// One opened instance of the backend: the core's services, the loader, a Level Zero context per driver, the devices
// and what zeDeviceCanAccessPeer said about the pairs. Immutable after creation; destroyed once, after every object
// it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services, kBackendName) {}
  ~Context() {
    if (runtime == nullptr) return;
    const ZeApi& ze = runtime->ze;
    for (auto& device : devices) {
      if (device->sync_list != nullptr) ze.zeCommandListDestroy(device->sync_list);
    }
    for (ze_context_handle_t c : ze_contexts) ze.zeContextDestroy(c);
    if (runtime->library != nullptr) dlclose(runtime->library);  // RTLD_NODELETE: stays mapped
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Host host;
  std::unique_ptr<Runtime> runtime;
  std::vector<ze_context_handle_t> ze_contexts;  // one per driver with devices
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::vector<bool>> peer;  // peer[a][b]: zeDeviceCanAccessPeer(a, b), same driver
};

// --- Shared helpers ----------------------------------------------------------------------------------------------

namespace {

const char* OwnResultName(ze_result_t code) {
  switch (code) {
    case ZE_RESULT_SUCCESS: return "ZE_RESULT_SUCCESS";
    case ZE_RESULT_NOT_READY: return "ZE_RESULT_NOT_READY";
    case ZE_RESULT_ERROR_DEVICE_LOST: return "ZE_RESULT_ERROR_DEVICE_LOST";
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: return "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE";
    case ZE_RESULT_ERROR_MODULE_LINK_FAILURE: return "ZE_RESULT_ERROR_MODULE_LINK_FAILURE";
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: return "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET";
    case ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE: return "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE";
    case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS: return "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS";
    case ZE_RESULT_ERROR_NOT_AVAILABLE: return "ZE_RESULT_ERROR_NOT_AVAILABLE";
    case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE: return "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE";
    case ZE_RESULT_ERROR_UNINITIALIZED: return "ZE_RESULT_ERROR_UNINITIALIZED";
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return "ZE_RESULT_ERROR_UNSUPPORTED_VERSION";
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ZE_RESULT_ERROR_INVALID_ARGUMENT";
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return "ZE_RESULT_ERROR_INVALID_NULL_HANDLE";
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: return "ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE";
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER: return "ZE_RESULT_ERROR_INVALID_NULL_POINTER";
    case ZE_RESULT_ERROR_INVALID_SIZE: return "ZE_RESULT_ERROR_INVALID_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE: return "ZE_RESULT_ERROR_UNSUPPORTED_SIZE";
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT: return "ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT";
    case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT: return "ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT";
    case ZE_RESULT_ERROR_INVALID_ENUMERATION: return "ZE_RESULT_ERROR_INVALID_ENUMERATION";
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: return "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION";
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: return "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY";
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME: return "ZE_RESULT_ERROR_INVALID_KERNEL_NAME";
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION: return "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION";
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX: return "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX";
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE: return "ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE";
    case ZE_RESULT_ERROR_UNKNOWN: return "ZE_RESULT_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

}  // namespace

std::string ZeResultName(ze_result_t code) {
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%x", code);
  const char* name = OwnResultName(code);
  if (name == nullptr) return std::string("Level Zero result ") + hex;
  return std::string(name) + " (" + hex + ")";
}

std::string ZeFailure(std::string_view call, ze_result_t code) {
  return std::string(call) + " failed with " + ZeResultName(code);
}

accel_status_t StatusFromZe(ze_result_t code) {
  switch (code) {
    case ZE_RESULT_SUCCESS: return ACCEL_SUCCESS;
    case ZE_RESULT_NOT_READY: return ACCEL_NOT_READY;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
    case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
    case ZE_RESULT_ERROR_INVALID_SIZE:
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
    case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE: return ACCEL_ERROR_INVALID_ARGUMENT;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
    case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION: return ACCEL_ERROR_UNSUPPORTED;
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME: return ACCEL_ERROR_NOT_FOUND;
    case ZE_RESULT_ERROR_DEVICE_LOST:
    case ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET: return ACCEL_ERROR_DEVICE_LOST;
    default: return ACCEL_ERROR_INTERNAL;
  }
}

bool PeerAccess(const Device& a, const Device& b) {
  const Context& c = *a.context;
  return c.peer[a.index][b.index] && c.peer[b.index][a.index];
}

namespace {

// --- Loading the loader ------------------------------------------------------------------------------------------

// Opens the loader named by ACCEL_LEVEL_ZERO_LIBRARY (default libze_loader.so.1), looks up its entry points and
// calls zeInit. ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason when it is missing, incomplete or finds no driver.
accel_status_t OpenRuntime(Context& context, std::string* reason) {
  const char* configured = context.host.Setting("ACCEL_LEVEL_ZERO_LIBRARY");
  const std::string name = configured != nullptr && configured[0] != '\0' ? configured : kLoaderLibraryName;
  auto runtime = std::make_unique<Runtime>();
  dlerror();
  runtime->library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (runtime->library == nullptr) {
    const char* why = dlerror();
    *reason = "cannot load the Level Zero loader " + name + ": " + (why != nullptr ? why : "unknown error") +
              " (install it: Debian's libze1, or name a libze_loader.so in ACCEL_LEVEL_ZERO_LIBRARY)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  runtime->library_name = name;
  ZeApi& ze = runtime->ze;
#define ACCEL_ZE_RESOLVE(symbol, type)                                                                           \
  ze.symbol = reinterpret_cast<type>(dlsym(runtime->library, #symbol));                                          \
  if (ze.symbol == nullptr) {                                                                                    \
    *reason = name + " does not export " #symbol ": it is not a Level Zero 1.x loader, which the backend needs"; \
    dlclose(runtime->library);                                                                                   \
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;                                                                      \
  }
  ACCEL_ZE_ENTRY_POINTS(ACCEL_ZE_RESOLVE)
#undef ACCEL_ZE_RESOLVE
#define ACCEL_ZE_RESOLVE_OPTIONAL(symbol, type)                                                            \
  ze.symbol = reinterpret_cast<type>(dlsym(runtime->library, #symbol));                                    \
  if (ze.symbol == nullptr) {                                                                              \
    context.host.Log(ACCEL_LOG_LEVEL_DEBUG, name + " has no " #symbol ": the descriptor goes without it"); \
  }
  ACCEL_ZE_OPTIONAL_ENTRY_POINTS(ACCEL_ZE_RESOLVE_OPTIONAL)
#undef ACCEL_ZE_RESOLVE_OPTIONAL
  const ze_result_t init = ze.zeInit(0);
  if (init != ZE_RESULT_SUCCESS) {
    *reason = ZeFailure("zeInit", init);
    if (init == ZE_RESULT_ERROR_UNINITIALIZED) {
      *reason +=
          ": the Level Zero loader found no driver (no Intel GPU, no compute runtime such as "
          "intel-level-zero-gpu installed, no access to /dev/dri, or ZE_AFFINITY_MASK hides every device)";
    }
    dlclose(runtime->library);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  context.runtime = std::move(runtime);
  return ACCEL_SUCCESS;
}

// Reads every property of `device` the descriptor needs; false with `*why` when a query fails.
bool QueryAttributes(const ZeApi& ze, ze_device_handle_t device, uint32_t driver_version, DeviceAttributes* a,
                     std::string* why) {
  ze_device_properties_t p{};
  p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  ze_result_t r = ze.zeDeviceGetProperties(device, &p);
  if (r != ZE_RESULT_SUCCESS) {
    *why = ZeFailure("zeDeviceGetProperties", r);
    return false;
  }
  a->name.assign(p.name, strnlen(p.name, sizeof(p.name)));
  a->type = p.type;
  a->vendor_id = p.vendorId;
  a->device_id = p.deviceId;
  a->integrated = (p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0;
  a->sub_device = (p.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE) != 0;
  a->core_clock_mhz = p.coreClockRate;
  a->max_mem_alloc_size = p.maxMemAllocSize;
  a->slices = p.numSlices;
  a->subslices_per_slice = p.numSubslicesPerSlice;
  a->eus_per_subslice = p.numEUsPerSubslice;
  a->threads_per_eu = p.numThreadsPerEU;
  a->eu_simd_width = p.physicalEUSimdWidth;
  a->timer_resolution_ns = p.timerResolution;
  a->kernel_timestamp_bits = p.kernelTimestampValidBits;
  std::memcpy(a->uuid.data(), p.uuid, 16);
  ze_device_compute_properties_t compute{};
  compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  r = ze.zeDeviceGetComputeProperties(device, &compute);
  if (r != ZE_RESULT_SUCCESS) {
    *why = ZeFailure("zeDeviceGetComputeProperties", r);
    return false;
  }
  a->max_group_size_total = compute.maxTotalGroupSize;
  a->max_group_size[0] = compute.maxGroupSizeX;
  a->max_group_size[1] = compute.maxGroupSizeY;
  a->max_group_size[2] = compute.maxGroupSizeZ;
  a->max_group_count[0] = compute.maxGroupCountX;
  a->max_group_count[1] = compute.maxGroupCountY;
  a->max_group_count[2] = compute.maxGroupCountZ;
  a->max_shared_local_memory = compute.maxSharedLocalMemory;
  const uint32_t sizes = std::min<uint32_t>(compute.numSubGroupSizes, ZE_SUBGROUPSIZE_COUNT);
  a->subgroup_sizes.assign(compute.subGroupSizes, compute.subGroupSizes + sizes);
  ze_device_module_properties_t module{};
  module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  r = ze.zeDeviceGetModuleProperties(device, &module);
  if (r != ZE_RESULT_SUCCESS) {
    *why = ZeFailure("zeDeviceGetModuleProperties", r);
    return false;
  }
  a->spirv_version = module.spirvVersionSupported;
  a->fp16 = (module.flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
  a->fp64 = (module.flags & ZE_DEVICE_MODULE_FLAG_FP64) != 0;
  a->int64_atomics = (module.flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS) != 0;
  a->dp4a = (module.flags & ZE_DEVICE_MODULE_FLAG_DP4A) != 0;
  a->max_arguments_size = module.maxArgumentsSize;
  uint32_t count = 0;
  r = ze.zeDeviceGetMemoryProperties(device, &count, nullptr);
  std::vector<ze_device_memory_properties_t> memories(count);
  for (auto& m : memories) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  if (r == ZE_RESULT_SUCCESS && count > 0) r = ze.zeDeviceGetMemoryProperties(device, &count, memories.data());
  if (r != ZE_RESULT_SUCCESS) {
    *why = ZeFailure("zeDeviceGetMemoryProperties", r);
    return false;
  }
  a->total_memory = 0;
  for (uint32_t i = 0; i < count && i < memories.size(); ++i) a->total_memory += memories[i].totalSize;
  count = 0;
  if (ze.zeDeviceGetSubDevices(device, &count, nullptr) == ZE_RESULT_SUCCESS) a->sub_device_count = count;
  if (ze.zeDevicePciGetPropertiesExt != nullptr) {
    ze_pci_ext_properties_t pci{};
    pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
    if (ze.zeDevicePciGetPropertiesExt(device, &pci) == ZE_RESULT_SUCCESS) {
      a->has_pci = true;
      a->pci_domain = pci.domain;
      a->pci_bus = pci.bus;
      a->pci_device = pci.device;
      a->pci_function = pci.function;
    }
  }
  a->driver_version = driver_version;
  return true;
}

// Makes a device's synchronous immediate command list (the blocking copies of maps).
ze_result_t CreateSyncList(const ZeApi& ze, Device* device) {
  ze_command_queue_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  return ze.zeCommandListCreateImmediate(device->ze_context, device->device, &desc, &device->sync_list);
}

// Lists the drivers and their devices, makes a context per driver and reads peer access.
accel_status_t OpenDevices(Context& context, std::string* reason) {
  const ZeApi& ze = context.runtime->ze;
  uint32_t driver_count = 0;
  ze_result_t r = ze.zeDriverGet(&driver_count, nullptr);
  std::vector<ze_driver_handle_t> drivers(driver_count);
  if (r == ZE_RESULT_SUCCESS && driver_count > 0) r = ze.zeDriverGet(&driver_count, drivers.data());
  if (r != ZE_RESULT_SUCCESS || driver_count == 0) {
    *reason = r != ZE_RESULT_SUCCESS ? ZeFailure("zeDriverGet", r)
                                     : "the Level Zero loader reports no driver (zeDriverGet: 0)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::vector<std::string> skipped;
  std::vector<size_t> driver_of;  // per device: its driver's index
  for (uint32_t d = 0; d < driver_count; ++d) {
    const std::string driver_label = "Level Zero driver " + std::to_string(d);
    ze_driver_properties_t driver_properties{};
    driver_properties.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    const uint32_t driver_version = ze.zeDriverGetProperties(drivers[d], &driver_properties) == ZE_RESULT_SUCCESS
                                        ? driver_properties.driverVersion
                                        : 0;
    uint32_t count = 0;
    r = ze.zeDeviceGet(drivers[d], &count, nullptr);
    std::vector<ze_device_handle_t> handles(count);
    if (r == ZE_RESULT_SUCCESS && count > 0) r = ze.zeDeviceGet(drivers[d], &count, handles.data());
    if (r != ZE_RESULT_SUCCESS) {
      skipped.push_back(driver_label + ": " + ZeFailure("zeDeviceGet", r));
      continue;
    }
    if (count == 0) continue;
    ze_context_desc_t context_desc{};
    context_desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    ze_context_handle_t ze_context = nullptr;
    r = ze.zeContextCreate(drivers[d], &context_desc, &ze_context);
    if (r != ZE_RESULT_SUCCESS) {
      skipped.push_back(driver_label + ": " + ZeFailure("zeContextCreate", r));
      continue;
    }
    context.ze_contexts.push_back(ze_context);
    for (uint32_t i = 0; i < count && i < handles.size(); ++i) {
      const std::string label = driver_label + " device " + std::to_string(i);
      auto device = std::make_unique<Device>();
      device->host = &context.host;
      device->runtime = context.runtime.get();
      device->context = &context;
      device->device = handles[i];
      device->ze_context = ze_context;
      std::string why;
      if (!QueryAttributes(ze, handles[i], driver_version, &device->attributes, &why)) {
        skipped.push_back(label + ": " + why);
        continue;
      }
      if (device->attributes.type == ZE_DEVICE_TYPE_MCA) {
        skipped.push_back(label + " (" + device->attributes.name + "): a memory-copy engine runs no kernels");
        continue;
      }
      r = CreateSyncList(ze, device.get());
      if (r != ZE_RESULT_SUCCESS) {
        skipped.push_back(label + ": " + ZeFailure("zeCommandListCreateImmediate", r));
        continue;
      }
      device->index = static_cast<uint32_t>(context.devices.size());
      device->label = "device " + std::to_string(device->index) + " (" + device->attributes.name + ")";
      context.devices.push_back(std::move(device));
      driver_of.push_back(d);
    }
  }
  for (const std::string& s : skipped) context.host.Log(ACCEL_LOG_LEVEL_WARN, "skipped " + s);
  if (context.devices.empty()) {
    std::string all;
    for (const std::string& s : skipped) all += (all.empty() ? "" : "; ") + s;
    *reason = all.empty() ? "the Level Zero drivers report no device (zeDeviceGet: 0; ZE_AFFINITY_MASK may hide them)"
                          : "no usable Level Zero device: " + all;
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const size_t n = context.devices.size();
  context.peer.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b || driver_of[a] != driver_of[b]) continue;  // peer access needs one context
      ze_bool_t can = 0;
      if (ze.zeDeviceCanAccessPeer(context.devices[a]->device, context.devices[b]->device, &can) == ZE_RESULT_SUCCESS &&
          can != 0) {
        context.peer[a][b] = true;
      }
    }
  }
  for (auto& device : context.devices) {
    DeviceAttributes& a = device->attributes;
    for (size_t b = 0; b < n; ++b) {
      if (b != device->index && context.peer[device->index][b]) a.can_access_a_peer = true;
    }
    device->capabilities = Describe(a);
    context.host.Log(ACCEL_LOG_LEVEL_INFO, device->label + ": " + device->capabilities.sku + ", " +
                                               std::to_string(device->capabilities.compute_units) + " Xe-cores, " +
                                               std::to_string(a.total_memory) + " bytes, driver " +
                                               device->capabilities.driver_version);
  }
  return ACCEL_SUCCESS;
}

// --- Context slots -----------------------------------------------------------------------------------------------

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  const auto open = [](Context& context, std::string* reason) {
    const accel_status_t status = OpenRuntime(context, reason);
    return status == ACCEL_SUCCESS ? OpenDevices(context, reason) : status;
  };
  return backend::CreateGpuContext<Context>(desc, kBackendName, open, out_context);
}

void ContextDestroy(accel_bk_context_t context) noexcept { std::unique_ptr<Context> owned(Unwrap(context)); }

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  return backend::ListDevices(context->host, context->devices, inout_count, out_devices);
}

constexpr accel_backend_api_t MakeApi() {
  accel_backend_api_t api{};
  api.stype = ACCEL_STRUCTURE_TYPE_BACKEND_API;
  api.struct_size = sizeof(accel_backend_api_t);
  api.abi_version = ACCEL_BACKEND_ABI_VERSION;
  api.name = kBackendName;
  api.version = kBackendVersion;
  api.context_create = ContextCreate;
  api.context_destroy = ContextDestroy;
  api.context_get_devices = ContextGetDevices;
  backend::SetGpuSlots<GpuTraits>(&api);  // buffers, streams and events, device descriptor and topology
  api.device_get_memory_info = DeviceGetMemoryInfo;
  api.buffer_create = BufferCreate;
  api.stream_copy_host_to_buffer = StreamCopyHostToBuffer;
  api.stream_copy_buffer_to_host = StreamCopyBufferToHost;
  api.stream_copy_buffer = StreamCopyBuffer;
  api.stream_fill_buffer = StreamFillBuffer;
  api.module_create = ModuleCreate;
  api.module_destroy = ModuleDestroy;
  api.module_enumerate_kernels = ModuleEnumerateKernels;
  api.module_get_kernel = ModuleGetKernel;
  api.kernel_destroy = KernelDestroy;
  api.kernel_get_properties = KernelGetProperties;
  api.kernel_get_argument_info = KernelGetArgumentInfo;
  api.stream_launch_kernel = StreamLaunchKernel;
  api.device_get_link = DeviceGetLink;
  return api;
}

constexpr accel_backend_api_t kApi = MakeApi();

}  // namespace
}  // namespace accel::level_zero

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::level_zero::kApi, accel::level_zero::kBackendName);
}
