// The entry point: ABI negotiation, the function table, and the context that one Accel instance opens: the CUDA
// driver (libcuda.so.1 by dlopen, never linked; ACCEL_CUDA_LIBRARY names another file), its entry points through
// cuGetProcAddress_v2 at CUDA 12.0, every device with its attributes and retained primary context, peer access
// between them, and NVML's NVLink table (libnvidia-ml.so.1, optional). A missing or stub driver, or no device, is
// ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason, which the loader report shows.
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/gpu_api.h"
#include "cuda_backend.h"

namespace accel::cuda {

// One opened instance of the backend: the core's services, the driver, the devices, and what NVML and
// cuDeviceCanAccessPeer said about the links between them. Immutable after creation; destroyed once, after every
// object it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services, kBackendName) {}
  ~Context() {
    for (auto& device : devices) {
      if (device->primary != nullptr) runtime->cu.cuDevicePrimaryCtxRelease(device->device);
    }
    if (runtime != nullptr && runtime->library != nullptr) dlclose(runtime->library);  // RTLD_NODELETE: stays mapped
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Host host;
  std::unique_ptr<Runtime> runtime;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::vector<NvLinkEnd>> nvlinks;  // per device; empty without NVML
  std::vector<std::string> pci_bus_ids;         // per device
  std::vector<std::vector<bool>> peer;          // peer[a][b]: cuDeviceCanAccessPeer(a, b)
  std::vector<std::string> cliques;             // per device; "" none
};

// --- Shared helpers ----------------------------------------------------------------------------------------------

namespace {

const char* OwnErrorName(CUresult code) {
  switch (code) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
    case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_UNKNOWN: return "CUDA_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

}  // namespace

std::string CuErrorName(const CuApi& cu, CUresult code) {
  const char* name = nullptr;
  if (cu.cuGetErrorName != nullptr && cu.cuGetErrorName(code, &name) != CUDA_SUCCESS) name = nullptr;
  if (name == nullptr) name = OwnErrorName(code);
  if (name == nullptr) return "CUDA error " + std::to_string(code);
  return std::string(name) + " (" + std::to_string(code) + ")";
}

std::string CuFailure(const CuApi& cu, std::string_view call, CUresult code) {
  std::string text = std::string(call) + " failed with " + CuErrorName(cu, code);
  const char* description = nullptr;
  if (cu.cuGetErrorString != nullptr && cu.cuGetErrorString(code, &description) == CUDA_SUCCESS &&
      description != nullptr) {
    text += std::string(": ") + description;
  }
  return text;
}

accel_status_t StatusFromCu(CUresult code) {
  switch (code) {
    case CUDA_SUCCESS: return ACCEL_SUCCESS;
    case CUDA_ERROR_NOT_READY: return ACCEL_NOT_READY;
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_INVALID_VALUE: return ACCEL_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NOT_SUPPORTED: return ACCEL_ERROR_UNSUPPORTED;
    case CUDA_ERROR_NOT_FOUND: return ACCEL_ERROR_NOT_FOUND;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_DEINITIALIZED: return ACCEL_ERROR_DEVICE_LOST;
    default: return ACCEL_ERROR_INTERNAL;
  }
}

ScopedContext::ScopedContext(const Device* device) : cu_(&device->runtime->cu) {
  CUcontext current = nullptr;
  if (cu_->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == device->primary) return;
  result_ = cu_->cuCtxPushCurrent(device->primary);
  pushed_ = result_ == CUDA_SUCCESS;
}

ScopedContext::~ScopedContext() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  cu_->cuCtxPopCurrent(&popped);
}

accel_device_link_t LinkBetween(const Device& a, const Device& b) {
  const Context& c = *a.context;
  const bool peer = c.peer[a.index][b.index] && c.peer[b.index][a.index];
  return NvLinkBetween(c.nvlinks, c.pci_bus_ids, a.index, b.index, NvLinkGeneration(a.attributes.cc_major), peer);
}

std::string CliqueOf(const Device& device) {
  const Context& c = *device.context;
  return device.index < c.cliques.size() ? c.cliques[device.index] : std::string();
}

namespace {

// --- Loading the driver ------------------------------------------------------------------------------------------

// Opens the driver named by ACCEL_CUDA_LIBRARY (default libcuda.so.1), initialises it and resolves its entry points.
// ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason when it is missing, a stub, too old or finds no device.
accel_status_t OpenRuntime(Context& context, std::string* reason) {
  const char* configured = context.host.Setting("ACCEL_CUDA_LIBRARY");
  auto runtime = std::make_unique<Runtime>();
  runtime->library_name = configured != nullptr && configured[0] != '\0' ? configured : kDriverLibraryName;
  const std::string& name = runtime->library_name;
  dlerror();
  runtime->library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (runtime->library == nullptr) {
    const char* why = dlerror();
    *reason = "cannot load the CUDA driver " + name + ": " + (why != nullptr ? why : "unknown error") +
              " (install the NVIDIA driver, or name its libcuda.so.1 in ACCEL_CUDA_LIBRARY)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  CuApi& cu = runtime->cu;
  cu.cuInit = reinterpret_cast<CuInitFn>(dlsym(runtime->library, "cuInit"));
  cu.cuGetErrorName = reinterpret_cast<CuGetErrorNameFn>(dlsym(runtime->library, "cuGetErrorName"));
  auto get_proc = reinterpret_cast<CuGetProcAddressV2Fn>(dlsym(runtime->library, "cuGetProcAddress_v2"));
  if (cu.cuInit == nullptr || get_proc == nullptr) {
    *reason = name + " does not export " + (cu.cuInit == nullptr ? "cuInit" : "cuGetProcAddress_v2") +
              ": it is not a CUDA driver of CUDA 12.0 or newer, which the backend needs";
    dlclose(runtime->library);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const CUresult init = cu.cuInit(0);
  if (init != CUDA_SUCCESS) {
    *reason = CuFailure(cu, "cuInit", init);
    if (init == CUDA_ERROR_STUB_LIBRARY) {
      *reason += ": " + name +
                 " is the CUDA toolkit's stub library, not the NVIDIA driver's (take the stubs folder off "
                 "LD_LIBRARY_PATH, or install the driver)";
    } else if (init == CUDA_ERROR_NO_DEVICE) {
      *reason += ": the driver sees no CUDA device (none installed, or CUDA_VISIBLE_DEVICES hides them all)";
    } else if (init == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) {
      *reason += ": the user-space driver does not match the kernel module";
    }
    dlclose(runtime->library);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const auto resolve = [&](const char* symbol, void** out, int version) -> CUresult {
    int status = 0;
    *out = nullptr;
    const CUresult r = get_proc(symbol, out, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (r == CUDA_SUCCESS && *out == nullptr) return CUDA_ERROR_NOT_FOUND;
    return r;
  };
#define ACCEL_CUDA_RESOLVE(symbol, type)                                                                            \
  {                                                                                                                 \
    void* address = nullptr;                                                                                        \
    const CUresult r = resolve(#symbol, &address, kCudaApiVersion);                                                 \
    if (r != CUDA_SUCCESS) {                                                                                        \
      *reason = CuFailure(cu, "cuGetProcAddress_v2(\"" #symbol "\", " + std::to_string(kCudaApiVersion) + ")", r) + \
                ": the driver " + name + " lacks an entry point of CUDA 12.0";                                      \
      dlclose(runtime->library);                                                                                    \
      return ACCEL_ERROR_BACKEND_UNAVAILABLE;                                                                       \
    }                                                                                                               \
    cu.symbol = reinterpret_cast<type>(address);                                                                    \
  }
  ACCEL_CUDA_ENTRY_POINTS(ACCEL_CUDA_RESOLVE)
#undef ACCEL_CUDA_RESOLVE
#define ACCEL_CUDA_RESOLVE_OPTIONAL(symbol, type)                                     \
  {                                                                                   \
    void* address = nullptr;                                                          \
    if (resolve(#symbol, &address, kCudaApiVersionOptional) == CUDA_SUCCESS) {        \
      cu.symbol = reinterpret_cast<type>(address);                                    \
    } else {                                                                          \
      context.host.Log(ACCEL_LOG_LEVEL_DEBUG, "the driver has no " #symbol            \
                                              " (CUDA 12.4): cubin "                  \
                                              "and fatbin modules cannot be listed"); \
    }                                                                                 \
  }
  ACCEL_CUDA_OPTIONAL_ENTRY_POINTS(ACCEL_CUDA_RESOLVE_OPTIONAL)
#undef ACCEL_CUDA_RESOLVE_OPTIONAL
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

// Reads every attribute of `device` the descriptor needs; false with `*why` when a query fails.
bool QueryAttributes(const CuApi& cu, CUdevice device, DeviceAttributes* a, std::string* why) {
  char name[256] = {};
  CUresult r = cu.cuDeviceGetName(name, sizeof(name) - 1, device);
  if (r != CUDA_SUCCESS) {
    *why = CuFailure(cu, "cuDeviceGetName", r);
    return false;
  }
  a->name = name;
  size_t total = 0;
  r = cu.cuDeviceTotalMem(&total, device);
  if (r != CUDA_SUCCESS) {
    *why = CuFailure(cu, "cuDeviceTotalMem", r);
    return false;
  }
  a->total_memory = total;
  struct Query {
    int attribute;
    const char* name;
    int* out;
  };
  int values[24] = {};
  const Query queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", &values[0]},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", &values[1]},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", &values[2]},
      {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE", &values[3]},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE", &values[4]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "MAX_SHARED_MEMORY_PER_BLOCK", &values[5]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", &values[6]},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK", &values[7]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "MAX_BLOCK_DIM_X", &values[8]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "MAX_BLOCK_DIM_Y", &values[9]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "MAX_BLOCK_DIM_Z", &values[10]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "MAX_GRID_DIM_X", &values[11]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "MAX_GRID_DIM_Y", &values[12]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "MAX_GRID_DIM_Z", &values[13]},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE", &values[14]},
      {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, "PCI_DOMAIN_ID", &values[15]},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, "PCI_BUS_ID", &values[16]},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, "PCI_DEVICE_ID", &values[17]},
      {CU_DEVICE_ATTRIBUTE_INTEGRATED, "INTEGRATED", &values[18]},
      {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "CAN_MAP_HOST_MEMORY", &values[19]},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "UNIFIED_ADDRESSING", &values[20]},
  };
  for (const Query& q : queries) {
    r = cu.cuDeviceGetAttribute(q.out, q.attribute, device);
    if (r != CUDA_SUCCESS) {
      *why = CuFailure(cu, (std::string("cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_") + q.name + ")").c_str(), r);
      return false;
    }
  }
  const auto u = [&](int i) { return static_cast<uint32_t>(values[i] < 0 ? 0 : values[i]); };
  a->cc_major = values[0];
  a->cc_minor = values[1];
  a->multiprocessors = u(2);
  a->clock_khz = u(3);
  a->l2_bytes = u(4);
  a->shared_per_block = u(5);
  a->shared_per_block_optin = u(6);
  a->max_threads_per_block = u(7);
  for (int d = 0; d < 3; ++d) {
    a->max_block[d] = u(8 + d);
    a->max_grid[d] = u(11 + d);
  }
  a->warp_size = u(14);
  a->pci_domain = u(15);
  a->pci_bus = u(16);
  a->pci_device = u(17);
  a->integrated = values[18] != 0;
  a->can_map_host_memory = values[19] != 0;
  a->unified_addressing = values[20] != 0;
  CUuuid uuid{};
  if (cu.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS) std::memcpy(a->uuid.data(), uuid.bytes, 16);
  int driver = 0;
  if (cu.cuDriverGetVersion(&driver) == CUDA_SUCCESS) a->driver_version = driver;
  a->pci_product = PciProductId(PciBusId(a->pci_domain, a->pci_bus, a->pci_device));
  return true;
}

// Reads each device's active NVLinks from NVML (ACCEL_CUDA_NVML_LIBRARY, default libnvidia-ml.so.1). Without NVML
// the links stay empty: the core then classifies pairs from the PCI tree.
void ReadNvLinks(Context& context) {
  context.nvlinks.assign(context.devices.size(), {});
  const char* configured = context.host.Setting("ACCEL_CUDA_NVML_LIBRARY");
  const std::string name = configured != nullptr && configured[0] != '\0' ? configured : kNvmlLibraryName;
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* why = dlerror();
    context.host.Log(ACCEL_LOG_LEVEL_INFO, "no NVLink information: cannot load NVML " + name + ": " +
                                               (why != nullptr ? why : "unknown error"));
    return;
  }
  NvmlApi nvml;
  nvml.nvmlInit_v2 = reinterpret_cast<decltype(nvml.nvmlInit_v2)>(dlsym(library, "nvmlInit_v2"));
  nvml.nvmlShutdown = reinterpret_cast<decltype(nvml.nvmlShutdown)>(dlsym(library, "nvmlShutdown"));
  nvml.nvmlDeviceGetHandleByPciBusId_v2 = reinterpret_cast<decltype(nvml.nvmlDeviceGetHandleByPciBusId_v2)>(
      dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml.nvmlDeviceGetNvLinkState =
      reinterpret_cast<decltype(nvml.nvmlDeviceGetNvLinkState)>(dlsym(library, "nvmlDeviceGetNvLinkState"));
  nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2 = reinterpret_cast<decltype(nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2)>(
      dlsym(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
  if (nvml.nvmlInit_v2 == nullptr || nvml.nvmlShutdown == nullptr || nvml.nvmlDeviceGetHandleByPciBusId_v2 == nullptr ||
      nvml.nvmlDeviceGetNvLinkState == nullptr || nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2 == nullptr) {
    context.host.Log(ACCEL_LOG_LEVEL_INFO, "no NVLink information: " + name + " lacks the NVLink queries");
    dlclose(library);
    return;
  }
  const nvmlReturn_t init = nvml.nvmlInit_v2();
  if (init != NVML_SUCCESS) {
    context.host.Log(ACCEL_LOG_LEVEL_INFO, "no NVLink information: nvmlInit_v2 failed with " + std::to_string(init));
    dlclose(library);
    return;
  }
  for (size_t i = 0; i < context.devices.size(); ++i) {
    nvmlDevice_t handle = nullptr;
    if (nvml.nvmlDeviceGetHandleByPciBusId_v2(context.pci_bus_ids[i].c_str(), &handle) != NVML_SUCCESS) continue;
    for (unsigned int link = 0; link < kNvmlNvLinkMaxLinks; ++link) {
      int active = 0;
      if (nvml.nvmlDeviceGetNvLinkState(handle, link, &active) != NVML_SUCCESS) continue;
      if (active != NVML_FEATURE_ENABLED) continue;
      nvmlPciInfo_t remote{};
      if (nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2(handle, link, &remote) != NVML_SUCCESS) continue;
      context.nvlinks[i].push_back(NvLinkEnd{PciBusId(remote.domain, remote.bus, remote.device)});
    }
    context.host.Log(ACCEL_LOG_LEVEL_DEBUG, "device " + std::to_string(i) + ": " +
                                                std::to_string(context.nvlinks[i].size()) + " active NVLink(s)");
  }
  nvml.nvmlShutdown();
  dlclose(library);
}

// Lists the devices, retains their primary contexts and enables peer access where the driver allows it.
accel_status_t OpenDevices(Context& context, std::string* reason) {
  const CuApi& cu = context.runtime->cu;
  int count = 0;
  CUresult r = cu.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count <= 0) {
    *reason = r != CUDA_SUCCESS ? CuFailure(cu, "cuDeviceGetCount", r)
                                : "the CUDA driver reports no device (cuDeviceGetCount: 0; CUDA_VISIBLE_DEVICES may "
                                  "hide them)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::vector<std::string> skipped;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto device = std::make_unique<Device>();
    device->host = &context.host;
    device->runtime = context.runtime.get();
    device->context = &context;
    const std::string label = "CUDA device " + std::to_string(ordinal);
    r = cu.cuDeviceGet(&device->device, ordinal);
    if (r != CUDA_SUCCESS) {
      skipped.push_back(label + ": " + CuFailure(cu, "cuDeviceGet", r));
      continue;
    }
    std::string why;
    if (!QueryAttributes(cu, device->device, &device->attributes, &why)) {
      skipped.push_back(label + ": " + why);
      continue;
    }
    r = cu.cuDevicePrimaryCtxRetain(&device->primary, device->device);
    if (r != CUDA_SUCCESS) {
      device->primary = nullptr;
      skipped.push_back(label + " (" + device->attributes.name + "): " + CuFailure(cu, "cuDevicePrimaryCtxRetain", r));
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
    *reason = "no usable CUDA device: " + all;
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  const size_t n = context.devices.size();
  context.peer.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      Device& from = *context.devices[a];
      const Device& to = *context.devices[b];
      int can = 0;
      if (cu.cuDeviceCanAccessPeer(&can, from.device, to.device) != CUDA_SUCCESS || can == 0) continue;
      ScopedContext scope(&from);
      r = scope.result() == CUDA_SUCCESS ? cu.cuCtxEnablePeerAccess(to.primary, 0) : scope.result();
      if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        context.peer[a][b] = true;
      } else {
        context.host.Log(ACCEL_LOG_LEVEL_WARN, from.label + " -> " + to.label + ": " +
                                                   CuFailure(cu, "cuCtxEnablePeerAccess", r) +
                                                   "; copies between them are staged by the driver");
      }
    }
  }
  ReadNvLinks(context);
  context.cliques = NvLinkCliques(context.nvlinks, context.pci_bus_ids);
  for (auto& device : context.devices) {
    DeviceAttributes& a = device->attributes;
    for (size_t b = 0; b < n; ++b) {
      if (b != device->index && context.peer[device->index][b]) a.can_access_a_peer = true;
    }
    device->capabilities = Describe(a);
    context.host.Log(ACCEL_LOG_LEVEL_INFO, device->label + ": " + ArchitectureOf(a.cc_major, a.cc_minor) + ", " +
                                               std::to_string(a.multiprocessors) + " SMs, " +
                                               std::to_string(a.total_memory) + " bytes, PCI " +
                                               context.pci_bus_ids[device->index] + ", driver " +
                                               DriverVersionString(a.driver_version));
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
}  // namespace accel::cuda

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::cuda::kApi, accel::cuda::kBackendName);
}
