// The entry point: ABI negotiation, the function table, and the context that one Accel instance opens: the HIP
// runtime (libamdhip64.so.6, else libamdhip64.so.5, by dlopen, never linked; ACCEL_HIP_LIBRARY names another file),
// its entry points by dlsym, every device with its attributes, peer access between them, and the xGMI links
// (hipExtGetLinkTypeAndHopCount, optional). A missing runtime, or no device, is ACCEL_ERROR_BACKEND_UNAVAILABLE with
// the reason, which the loader report shows.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/gpu_api.h"
#include "hip_backend.h"

namespace accel::hip {

// One opened instance of the backend: the core's services, the runtime, the devices, and what
// hipExtGetLinkTypeAndHopCount and hipDeviceCanAccessPeer said about the pairs. Immutable after creation; destroyed
// once, after every object it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services, kBackendName) {}
  ~Context() {
    if (runtime != nullptr && runtime->library != nullptr) dlclose(runtime->library);  // RTLD_NODELETE: stays mapped
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Host host;
  std::unique_ptr<Runtime> runtime;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::string> pci_bus_ids;      // per device
  std::vector<std::vector<bool>> peer;       // peer[a][b]: hipDeviceCanAccessPeer(a, b) and enabled
  std::vector<std::vector<LinkInfo>> links;  // links[a][b]: hipExtGetLinkTypeAndHopCount(a, b)
  std::vector<std::string> cliques;          // per device; "" none
};

// --- Shared helpers ----------------------------------------------------------------------------------------------

namespace {

const char* OwnErrorName(hipError_t code) {
  switch (code) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorNotInitialized: return "hipErrorNotInitialized";
    case hipErrorDeinitialized: return "hipErrorDeinitialized";
    case hipErrorInsufficientDriver: return "hipErrorInsufficientDriver";
    case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
    case hipErrorInvalidImage: return "hipErrorInvalidImage";
    case hipErrorInvalidContext: return "hipErrorInvalidContext";
    case hipErrorNoBinaryForGpu: return "hipErrorNoBinaryForGpu";
    case hipErrorInvalidKernelFile: return "hipErrorInvalidKernelFile";
    case hipErrorSharedObjectInitFailed: return "hipErrorSharedObjectInitFailed";
    case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
    case hipErrorNotFound: return "hipErrorNotFound";
    case hipErrorNotReady: return "hipErrorNotReady";
    case hipErrorIllegalAddress: return "hipErrorIllegalAddress";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorNotSupported: return "hipErrorNotSupported";
    case hipErrorUnknown: return "hipErrorUnknown";
    default: return nullptr;
  }
}

}  // namespace

std::string HipErrorName(const HipApi& hip, hipError_t code) {
  const char* name = hip.hipGetErrorName != nullptr ? hip.hipGetErrorName(code) : nullptr;
  // HIP answers an unknown code with "hipErrorUnknown" (or "unknown error" strings): keep the code visible.
  if (name == nullptr || name[0] == '\0') name = OwnErrorName(code);
  if (name == nullptr) return "HIP error " + std::to_string(code);
  return std::string(name) + " (" + std::to_string(code) + ")";
}

std::string HipFailure(const HipApi& hip, std::string_view call, hipError_t code) {
  std::string text = std::string(call) + " failed with " + HipErrorName(hip, code);
  const char* description = hip.hipGetErrorString != nullptr ? hip.hipGetErrorString(code) : nullptr;
  if (description != nullptr && description[0] != '\0') text += std::string(": ") + description;
  return text;
}

accel_status_t StatusFromHip(hipError_t code) {
  switch (code) {
    case hipSuccess: return ACCEL_SUCCESS;
    case hipErrorNotReady: return ACCEL_NOT_READY;
    case hipErrorOutOfMemory:
    case hipErrorLaunchOutOfResources: return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    case hipErrorInvalidImage:
    case hipErrorInvalidKernelFile:
    case hipErrorNoBinaryForGpu:
    case hipErrorInvalidSource:
    case hipErrorSharedObjectInitFailed:
    case hipErrorInvalidValue: return ACCEL_ERROR_INVALID_ARGUMENT;
    case hipErrorNotSupported: return ACCEL_ERROR_UNSUPPORTED;
    case hipErrorNotFound: return ACCEL_ERROR_NOT_FOUND;
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorLaunchTimeOut:
    case hipErrorECCNotCorrectable:
    case hipErrorDeinitialized: return ACCEL_ERROR_DEVICE_LOST;
    default: return ACCEL_ERROR_INTERNAL;
  }
}

ScopedDevice::ScopedDevice(const Device* device) : hip_(&device->runtime->hip) {
  int current = -1;
  if (hip_->hipGetDevice(&current) == hipSuccess && current == device->ordinal) return;
  result_ = hip_->hipSetDevice(device->ordinal);
  if (result_ == hipSuccess) previous_ = current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) hip_->hipSetDevice(previous_);
}

accel_device_link_t LinkBetween(const Device& a, const Device& b) {
  const Context& c = *a.context;
  const bool peer = c.peer[a.index][b.index] && c.peer[b.index][a.index];
  return XgmiLinkBetween(c.links[a.index][b.index], c.links[b.index][a.index],
                         ArchitectureOf(a.attributes.gcn_arch_name), peer);
}

std::string CliqueOf(const Device& device) {
  const Context& c = *device.context;
  return device.index < c.cliques.size() ? c.cliques[device.index] : std::string();
}

namespace {

// --- Loading the runtime -----------------------------------------------------------------------------------------

// Opens the runtime named by ACCEL_HIP_LIBRARY (default libamdhip64.so.6, then libamdhip64.so.5), initialises it and
// looks up its entry points. ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason when it is missing, incomplete or finds
// no device.
accel_status_t OpenRuntime(Context& context, std::string* reason) {
  const char* configured = context.host.Setting("ACCEL_HIP_LIBRARY");
  auto runtime = std::make_unique<Runtime>();
  std::vector<std::string> candidates;
  if (configured != nullptr && configured[0] != '\0') {
    candidates.emplace_back(configured);
  } else {
    for (const char* name : kRuntimeLibraryNames) candidates.emplace_back(name);
  }
  std::string failures;
  for (const std::string& name : candidates) {
    dlerror();
    runtime->library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (runtime->library != nullptr) {
      runtime->library_name = name;
      break;
    }
    const char* why = dlerror();
    failures += (failures.empty() ? "" : "; ") + std::string(why != nullptr ? why : name + ": unknown error");
  }
  if (runtime->library == nullptr) {
    std::string tried;
    for (const std::string& name : candidates) tried += (tried.empty() ? "" : " or ") + name;
    *reason = "cannot load the HIP runtime " + tried + ": " + failures +
              " (install ROCm's HIP runtime, or name its libamdhip64.so in ACCEL_HIP_LIBRARY)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const std::string& name = runtime->library_name;
  HipApi& hip = runtime->hip;
  hip.hipGetErrorName = reinterpret_cast<HipGetErrorNameFn>(dlsym(runtime->library, "hipGetErrorName"));
#define ACCEL_HIP_RESOLVE(symbol, type)                                                 \
  hip.symbol = reinterpret_cast<type>(dlsym(runtime->library, #symbol));                \
  if (hip.symbol == nullptr) {                                                          \
    *reason = name + " does not export " #symbol                                        \
                     ": it is not a HIP runtime of ROCm 5 or newer, which the backend " \
                     "needs";                                                           \
    dlclose(runtime->library);                                                          \
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;                                             \
  }
  ACCEL_HIP_ENTRY_POINTS(ACCEL_HIP_RESOLVE)
#undef ACCEL_HIP_RESOLVE
#define ACCEL_HIP_RESOLVE_OPTIONAL(symbol, type)                                                           \
  hip.symbol = reinterpret_cast<type>(dlsym(runtime->library, #symbol));                                   \
  if (hip.symbol == nullptr) {                                                                             \
    context.host.Log(ACCEL_LOG_LEVEL_DEBUG, name + " has no " #symbol ": the descriptor goes without it"); \
  }
  ACCEL_HIP_OPTIONAL_ENTRY_POINTS(ACCEL_HIP_RESOLVE_OPTIONAL)
#undef ACCEL_HIP_RESOLVE_OPTIONAL
  // hipDeviceProp_t's layout: ROCm 6 exports hipGetDevicePropertiesR0600; ROCm 5 only the older layout.
  if (void* r0600 = dlsym(runtime->library, "hipGetDevicePropertiesR0600"); r0600 != nullptr) {
    hip.get_device_properties = reinterpret_cast<HipGetDevicePropertiesFn>(r0600);
    hip.props_arch_offset = kPropsR0600GcnArchNameOffset;
  } else if (void* r0000 = dlsym(runtime->library, "hipGetDeviceProperties"); r0000 != nullptr) {
    hip.get_device_properties = reinterpret_cast<HipGetDevicePropertiesFn>(r0000);
    hip.props_arch_offset = kPropsR0000GcnArchNameOffset;
  }
  const hipError_t init = hip.hipInit(0);
  if (init != hipSuccess) {
    *reason = HipFailure(hip, "hipInit", init);
    if (init == hipErrorNoDevice) {
      *reason +=
          ": the HIP runtime sees no AMD GPU (none installed, the amdgpu kernel driver not loaded, no access to "
          "/dev/kfd, or HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES hides them all)";
    } else if (init == hipErrorInsufficientDriver) {
      *reason += ": the amdgpu kernel driver is older than this HIP runtime needs";
    }
    dlclose(runtime->library);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  context.runtime = std::move(runtime);
  return ACCEL_SUCCESS;
}

// The PCI product id of the device at `pci_bus_id`, from sysfs; 0 unknown.
uint32_t PciProductId(const std::string& pci_bus_id) {
  std::ifstream in("/sys/bus/pci/devices/" + pci_bus_id + "/device");
  std::string text;
  if (!(in >> text)) return 0;
  try {
    return static_cast<uint32_t>(std::stoul(text, nullptr, 16));
  } catch (const std::exception&) {
    return 0;
  }
}

// Reads every attribute of device `ordinal` the descriptor needs; false with `*why` when a query fails.
bool QueryAttributes(const HipApi& hip, int ordinal, hipDevice_t device, DeviceAttributes* a, std::string* why) {
  char name[256] = {};
  hipError_t r = hip.hipDeviceGetName(name, sizeof(name) - 1, device);
  if (r != hipSuccess) {
    *why = HipFailure(hip, "hipDeviceGetName", r);
    return false;
  }
  a->name = name;
  size_t total = 0;
  r = hip.hipDeviceTotalMem(&total, device);
  if (r != hipSuccess) {
    *why = HipFailure(hip, "hipDeviceTotalMem", r);
    return false;
  }
  a->total_memory = total;
  struct Query {
    int attribute;
    const char* name;
  };
  const Query queries[] = {
      {hipDeviceAttributeMultiprocessorCount, "MultiprocessorCount"},
      {hipDeviceAttributeClockRate, "ClockRate"},
      {hipDeviceAttributeL2CacheSize, "L2CacheSize"},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, "MaxSharedMemoryPerBlock"},
      {hipDeviceAttributeMaxThreadsPerBlock, "MaxThreadsPerBlock"},
      {hipDeviceAttributeMaxBlockDimX, "MaxBlockDimX"},
      {hipDeviceAttributeMaxBlockDimY, "MaxBlockDimY"},
      {hipDeviceAttributeMaxBlockDimZ, "MaxBlockDimZ"},
      {hipDeviceAttributeMaxGridDimX, "MaxGridDimX"},
      {hipDeviceAttributeMaxGridDimY, "MaxGridDimY"},
      {hipDeviceAttributeMaxGridDimZ, "MaxGridDimZ"},
      {hipDeviceAttributeWarpSize, "WarpSize"},
      {hipDeviceAttributePciDomainId, "PciDomainId"},
      {hipDeviceAttributePciBusId, "PciBusId"},
      {hipDeviceAttributePciDeviceId, "PciDeviceId"},
      {hipDeviceAttributeIntegrated, "Integrated"},
      {hipDeviceAttributeCanMapHostMemory, "CanMapHostMemory"},
      {hipDeviceAttributeUnifiedAddressing, "UnifiedAddressing"},
  };
  int values[std::size(queries)] = {};
  for (size_t i = 0; i < std::size(queries); ++i) {
    r = hip.hipDeviceGetAttribute(&values[i], queries[i].attribute, ordinal);
    if (r != hipSuccess) {
      *why = HipFailure(hip, std::string("hipDeviceGetAttribute(hipDeviceAttribute") + queries[i].name + ")", r);
      return false;
    }
  }
  const auto u = [&](size_t i) { return static_cast<uint32_t>(values[i] < 0 ? 0 : values[i]); };
  a->compute_units = u(0);
  a->clock_khz = u(1);
  a->l2_bytes = u(2);
  a->shared_per_block = u(3);
  a->max_threads_per_block = u(4);
  for (size_t d = 0; d < 3; ++d) {
    a->max_block[d] = u(5 + d);
    a->max_grid[d] = u(8 + d);
  }
  a->warp_size = u(11);
  a->pci_domain = u(12);
  a->pci_bus = u(13);
  a->pci_device = u(14);
  a->integrated = values[15] != 0;
  a->can_map_host_memory = values[16] != 0;
  a->unified_addressing = values[17] != 0;
  if (hip.get_device_properties != nullptr) {
    std::vector<char> props(kPropsBufferSize, 0);
    if (hip.get_device_properties(props.data(), ordinal) == hipSuccess) {
      const char* arch = props.data() + hip.props_arch_offset;
      a->gcn_arch_name.assign(arch, strnlen(arch, kPropsGcnArchNameSize));
    }
  }
  hipUUID uuid{};
  if (hip.hipDeviceGetUuid != nullptr && hip.hipDeviceGetUuid(&uuid, device) == hipSuccess) {
    std::memcpy(a->uuid.data(), uuid.bytes, 16);
  }
  int version = 0;
  if (hip.hipRuntimeGetVersion(&version) == hipSuccess) a->runtime_version = version;
  // hipDeviceGetPCIBusId gives the full address where the attributes lack the domain on some runtimes.
  char bus_id[64] = {};
  unsigned int domain = 0, bus = 0, slot = 0, function = 0;
  if (hip.hipDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, ordinal) == hipSuccess &&
      std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) == 4) {
    a->pci_domain = domain;
    a->pci_bus = bus;
    a->pci_device = slot;
  }
  a->pci_product = PciProductId(PciBusId(a->pci_domain, a->pci_bus, a->pci_device));
  return true;
}

// Lists the devices, enables peer access where the runtime allows it and reads the xGMI links.
accel_status_t OpenDevices(Context& context, std::string* reason) {
  const HipApi& hip = context.runtime->hip;
  int count = 0;
  hipError_t r = hip.hipGetDeviceCount(&count);
  if (r != hipSuccess || count <= 0) {
    *reason = r != hipSuccess ? HipFailure(hip, "hipGetDeviceCount", r)
                              : "the HIP runtime reports no device (hipGetDeviceCount: 0; HIP_VISIBLE_DEVICES may "
                                "hide them)";
    if (r == hipErrorNoDevice) *reason += ": the HIP runtime sees no AMD GPU";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::vector<std::string> skipped;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto device = std::make_unique<Device>();
    device->host = &context.host;
    device->runtime = context.runtime.get();
    device->context = &context;
    device->ordinal = ordinal;
    const std::string label = "HIP device " + std::to_string(ordinal);
    hipDevice_t handle = 0;
    r = hip.hipDeviceGet(&handle, ordinal);
    if (r != hipSuccess) {
      skipped.push_back(label + ": " + HipFailure(hip, "hipDeviceGet", r));
      continue;
    }
    std::string why;
    if (!QueryAttributes(hip, ordinal, handle, &device->attributes, &why)) {
      skipped.push_back(label + ": " + why);
      continue;
    }
    device->index = static_cast<uint32_t>(context.devices.size());
    device->label = "device " + std::to_string(device->index) + " (" + device->attributes.name + ")";
    context.pci_bus_ids.push_back(
        PciBusId(device->attributes.pci_domain, device->attributes.pci_bus, device->attributes.pci_device));
    context.devices.push_back(std::move(device));
  }
  for (const std::string& s : skipped) context.host.Log(ACCEL_LOG_LEVEL_WARN, "skipped " + s);
  if (context.devices.empty()) {
    std::string all;
    for (const std::string& s : skipped) all += (all.empty() ? "" : "; ") + s;
    *reason = "no usable HIP device: " + all;
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const size_t n = context.devices.size();
  context.peer.assign(n, std::vector<bool>(n, false));
  context.links.assign(n, std::vector<LinkInfo>(n));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const Device& from = *context.devices[a];
      const Device& to = *context.devices[b];
      LinkInfo& link = context.links[a][b];
      if (hip.hipExtGetLinkTypeAndHopCount != nullptr) {
        link.known = hip.hipExtGetLinkTypeAndHopCount(from.ordinal, to.ordinal, &link.type, &link.hops) == hipSuccess;
      }
      int can = 0;
      if (hip.hipDeviceCanAccessPeer(&can, from.ordinal, to.ordinal) != hipSuccess || can == 0) continue;
      ScopedDevice scope(&from);
      r = scope.result() == hipSuccess ? hip.hipDeviceEnablePeerAccess(to.ordinal, 0) : scope.result();
      if (r == hipSuccess || r == hipErrorPeerAccessAlreadyEnabled) {
        context.peer[a][b] = true;
      } else {
        context.host.Log(ACCEL_LOG_LEVEL_WARN, from.label + " -> " + to.label + ": " +
                                                   HipFailure(hip, "hipDeviceEnablePeerAccess", r) +
                                                   "; copies between them are staged by the runtime");
      }
    }
  }
  context.cliques = XgmiCliques(context.links, context.pci_bus_ids);
  for (auto& device : context.devices) {
    DeviceAttributes& a = device->attributes;
    for (size_t b = 0; b < n; ++b) {
      if (b != device->index && context.peer[device->index][b]) a.can_access_a_peer = true;
    }
    device->capabilities = Describe(a);
    context.host.Log(ACCEL_LOG_LEVEL_INFO,
                     device->label + ": " + device->capabilities.architecture + ", " + std::to_string(a.compute_units) +
                         " CUs, " + std::to_string(a.total_memory) + " bytes, PCI " +
                         context.pci_bus_ids[device->index] + ", HIP " + RuntimeVersionString(a.runtime_version));
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
  api.device_get_clique = DeviceGetClique;
  return api;
}

constexpr accel_backend_api_t kApi = MakeApi();

}  // namespace
}  // namespace accel::hip

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::hip::kApi, accel::hip::kBackendName);
}
