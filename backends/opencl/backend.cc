// The entry point: ABI negotiation, the function table, and the context that
// one Accel instance opens: the ICD loader (dlopen, never linked), PoCL's
// compiler cache steered under ACCEL_CACHE_DIR, and every usable device of
// every OpenCL platform, queried once into plain properties (device.cc maps
// them to Accel's descriptor).
#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "opencl_backend.h"

namespace accel::opencl {

// One opened instance of the backend: the core's services, the ICD loader, the platforms and the devices. Immutable
// after creation; destroyed once, after every object it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services, kBackendName) {}
  ~Context() {
    devices.clear();    // internal queues
    platforms.clear();  // cl_contexts
    if (runtime == nullptr) return;
    const int64_t alive = runtime->live_objects.load();
    if (alive != 0) {
      host.Log(ACCEL_LOG_LEVEL_WARN, "context_destroy: " + std::to_string(alive) +
                                         " OpenCL object(s) the backend created are still alive (a backend leak)");
    }
    // RTLD_NODELETE keeps the loader and its drivers mapped: their threads and exit handlers outlive this context.
    if (runtime->library != nullptr) dlclose(runtime->library);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Host host;
  std::unique_ptr<Runtime> runtime;
  std::vector<std::unique_ptr<Platform>> platforms;
  std::vector<std::unique_ptr<Device>> devices;
};

// --- Shared helpers ----------------------------------------------------------------------------------------------

std::string ClErrorName(cl_int code) {
  const char* name = nullptr;
  switch (code) {
#define ACCEL_OPENCL_ERROR(e) \
  case e: name = #e; break;
    ACCEL_OPENCL_ERROR(CL_SUCCESS)
    ACCEL_OPENCL_ERROR(CL_DEVICE_NOT_FOUND)
    ACCEL_OPENCL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ACCEL_OPENCL_ERROR(CL_OUT_OF_RESOURCES)
    ACCEL_OPENCL_ERROR(CL_OUT_OF_HOST_MEMORY)
    ACCEL_OPENCL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_MEM_COPY_OVERLAP)
    ACCEL_OPENCL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    ACCEL_OPENCL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    ACCEL_OPENCL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    ACCEL_OPENCL_ERROR(CL_MAP_FAILURE)
    ACCEL_OPENCL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    ACCEL_OPENCL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    ACCEL_OPENCL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    ACCEL_OPENCL_ERROR(CL_LINKER_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_LINK_PROGRAM_FAILURE)
    ACCEL_OPENCL_ERROR(CL_DEVICE_PARTITION_FAILED)
    ACCEL_OPENCL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    ACCEL_OPENCL_ERROR(CL_INVALID_VALUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_DEVICE_TYPE)
    ACCEL_OPENCL_ERROR(CL_INVALID_PLATFORM)
    ACCEL_OPENCL_ERROR(CL_INVALID_DEVICE)
    ACCEL_OPENCL_ERROR(CL_INVALID_CONTEXT)
    ACCEL_OPENCL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    ACCEL_OPENCL_ERROR(CL_INVALID_COMMAND_QUEUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_HOST_PTR)
    ACCEL_OPENCL_ERROR(CL_INVALID_MEM_OBJECT)
    ACCEL_OPENCL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    ACCEL_OPENCL_ERROR(CL_INVALID_IMAGE_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_SAMPLER)
    ACCEL_OPENCL_ERROR(CL_INVALID_BINARY)
    ACCEL_OPENCL_ERROR(CL_INVALID_BUILD_OPTIONS)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROGRAM)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL_NAME)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_INDEX)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_VALUE)
    ACCEL_OPENCL_ERROR(CL_INVALID_ARG_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_KERNEL_ARGS)
    ACCEL_OPENCL_ERROR(CL_INVALID_WORK_DIMENSION)
    ACCEL_OPENCL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    ACCEL_OPENCL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    ACCEL_OPENCL_ERROR(CL_INVALID_EVENT)
    ACCEL_OPENCL_ERROR(CL_INVALID_OPERATION)
    ACCEL_OPENCL_ERROR(CL_INVALID_GL_OBJECT)
    ACCEL_OPENCL_ERROR(CL_INVALID_BUFFER_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_MIP_LEVEL)
    ACCEL_OPENCL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    ACCEL_OPENCL_ERROR(CL_INVALID_PROPERTY)
    ACCEL_OPENCL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    ACCEL_OPENCL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    ACCEL_OPENCL_ERROR(CL_INVALID_LINKER_OPTIONS)
    ACCEL_OPENCL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef ACCEL_OPENCL_ERROR
    case kClPlatformNotFoundKhr: name = "CL_PLATFORM_NOT_FOUND_KHR"; break;
    default: break;
  }
  if (name == nullptr) return "OpenCL error " + std::to_string(code);
  return std::string(name) + " (" + std::to_string(code) + ")";
}

std::string ClFailure(const char* call, cl_int code) { return std::string(call) + " failed with " + ClErrorName(code); }

accel_status_t StatusFromCl(cl_int code) {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE: return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    case CL_DEVICE_NOT_AVAILABLE: return ACCEL_ERROR_DEVICE_LOST;
    default: return ACCEL_ERROR_INTERNAL;
  }
}

bool ResolveEntryPoints(void* library, ClApi* api, std::string* missing) {
#define ACCEL_OPENCL_RESOLVE(name)                                               \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(library, "cl" #name)); \
  if (api->name == nullptr) {                                                    \
    *missing = "cl" #name;                                                       \
    return false;                                                                \
  }
  ACCEL_OPENCL_ENTRY_POINTS(ACCEL_OPENCL_RESOLVE)
#undef ACCEL_OPENCL_RESOLVE
  api->CreateProgramWithIL = reinterpret_cast<ClApi::CreateProgramWithILFn>(dlsym(library, "clCreateProgramWithIL"));
  return true;
}

namespace {

// --- Queries -----------------------------------------------------------------------------------------------------

std::string PlatformString(const ClApi& cl, cl_platform_id platform, cl_platform_info key) {
  size_t size = 0;
  if (cl.GetPlatformInfo(platform, key, 0, nullptr, &size) != CL_SUCCESS || size == 0) return std::string();
  std::string value(size, '\0');
  if (cl.GetPlatformInfo(platform, key, size, value.data(), nullptr) != CL_SUCCESS) return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::string DeviceString(const ClApi& cl, cl_device_id device, cl_device_info key) {
  size_t size = 0;
  if (cl.GetDeviceInfo(device, key, 0, nullptr, &size) != CL_SUCCESS || size == 0) return std::string();
  std::string value(size, '\0');
  if (cl.GetDeviceInfo(device, key, size, value.data(), nullptr) != CL_SUCCESS) return std::string();
  value.resize(std::strlen(value.c_str()));
  return value;
}

// A fixed-size value; nullopt when the query fails or answers another size.
template <typename T>
std::optional<T> DeviceValue(const ClApi& cl, cl_device_id device, cl_device_info key) {
  T value{};
  size_t size = 0;
  if (cl.GetDeviceInfo(device, key, sizeof(T), &value, &size) != CL_SUCCESS || size != sizeof(T)) return std::nullopt;
  return value;
}

template <typename T>
T DeviceValueOr(const ClApi& cl, cl_device_id device, cl_device_info key, T fallback) {
  return DeviceValue<T>(cl, device, key).value_or(fallback);
}

// The PCI address where the device tells it: cl_khr_pci_bus_info, or NVIDIA's and AMD's attribute queries (the slot
// id of NVIDIA's holds device << 3 | function, as hwloc reads it).
std::optional<PciAddress> QueryPci(const ClApi& cl, cl_device_id device, const std::string& extensions) {
  if (HasExtension(extensions, "cl_khr_pci_bus_info")) {
    struct {
      cl_uint domain, bus, device, function;
    } info{};
    size_t size = 0;
    if (cl.GetDeviceInfo(device, kClDevicePciBusInfo, sizeof(info), &info, &size) == CL_SUCCESS &&
        size == sizeof(info)) {
      return PciAddress{info.domain, info.bus, info.device, info.function};
    }
  }
  if (HasExtension(extensions, "cl_nv_device_attribute_query")) {
    const auto bus = DeviceValue<cl_uint>(cl, device, kClDevicePciBusIdNv);
    const auto slot = DeviceValue<cl_uint>(cl, device, kClDevicePciSlotIdNv);
    if (bus && slot) {
      const cl_uint domain = DeviceValueOr<cl_uint>(cl, device, kClDevicePciDomainIdNv, 0);
      return PciAddress{domain, *bus, *slot >> 3, *slot & 7};
    }
  }
  if (HasExtension(extensions, "cl_amd_device_attribute_query")) {
    struct {
      cl_uint type;
      cl_uchar unused[17];
      cl_uchar bus, device, function;
    } topology{};
    static_assert(sizeof(topology) == 24, "cl_device_topology_amd is 24 bytes");
    size_t size = 0;
    constexpr cl_uint kTopologyTypePcieAmd = 1;
    if (cl.GetDeviceInfo(device, kClDeviceTopologyAmd, sizeof(topology), &topology, &size) == CL_SUCCESS &&
        size == sizeof(topology) && topology.type == kTopologyTypePcieAmd) {
      return PciAddress{0, topology.bus, topology.device, topology.function};
    }
  }
  return std::nullopt;
}

ClDeviceProperties QueryDevice(const ClApi& cl, const std::string& platform_name, const std::string& platform_version,
                               cl_device_id device) {
  ClDeviceProperties p;
  p.platform_name = platform_name;
  p.platform_version = platform_version;
  p.name = DeviceString(cl, device, CL_DEVICE_NAME);
  p.vendor = DeviceString(cl, device, CL_DEVICE_VENDOR);
  p.driver_version = DeviceString(cl, device, CL_DRIVER_VERSION);
  p.device_version = DeviceString(cl, device, CL_DEVICE_VERSION);
  p.opencl_c_version = DeviceString(cl, device, CL_DEVICE_OPENCL_C_VERSION);
  p.profile = DeviceString(cl, device, CL_DEVICE_PROFILE);
  p.extensions = DeviceString(cl, device, CL_DEVICE_EXTENSIONS);
  if (ParseVersion(p.device_version, "OpenCL ").AtLeast(2, 1) || HasExtension(p.extensions, "cl_khr_il_program")) {
    p.il_version = DeviceString(cl, device, kClDeviceIlVersion);
  }
  if (HasExtension(p.extensions, "cl_khr_spir")) p.spir_versions = DeviceString(cl, device, kClDeviceSpirVersions);
  p.type = DeviceValueOr<cl_device_type>(cl, device, CL_DEVICE_TYPE, 0);
  p.vendor_id = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_VENDOR_ID, 0);
  p.global_mem_size = DeviceValueOr<cl_ulong>(cl, device, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
  p.max_mem_alloc_size = DeviceValueOr<cl_ulong>(cl, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  p.local_mem_size = DeviceValueOr<cl_ulong>(cl, device, CL_DEVICE_LOCAL_MEM_SIZE, 0);
  p.compute_units = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_MAX_COMPUTE_UNITS, 0);
  p.clock_mhz = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_MAX_CLOCK_FREQUENCY, 0);
  p.address_bits = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_ADDRESS_BITS, 64);
  p.mem_base_addr_align_bits = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 0);
  p.max_work_group_size = DeviceValueOr<size_t>(cl, device, CL_DEVICE_MAX_WORK_GROUP_SIZE, 0);
  p.max_work_item_dimensions = DeviceValueOr<cl_uint>(cl, device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 0);
  if (p.max_work_item_dimensions > 0) {
    std::vector<size_t> sizes(p.max_work_item_dimensions, 0);
    if (cl.GetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes.size() * sizeof(size_t), sizes.data(), nullptr) ==
        CL_SUCCESS) {
      for (size_t d = 0; d < 3 && d < sizes.size(); ++d) p.max_work_item_sizes[d] = sizes[d];
    }
  }
  p.max_parameter_size = DeviceValueOr<size_t>(cl, device, CL_DEVICE_MAX_PARAMETER_SIZE, 0);
  p.available = DeviceValueOr<cl_bool>(cl, device, CL_DEVICE_AVAILABLE, CL_FALSE) == CL_TRUE;
  p.compiler_available = DeviceValueOr<cl_bool>(cl, device, CL_DEVICE_COMPILER_AVAILABLE, CL_FALSE) == CL_TRUE;
  p.profiling = (DeviceValueOr<cl_command_queue_properties>(cl, device, CL_DEVICE_QUEUE_PROPERTIES, 0) &
                 CL_QUEUE_PROFILING_ENABLE) != 0;
  p.double_fp_config = DeviceValueOr<cl_device_fp_config>(cl, device, CL_DEVICE_DOUBLE_FP_CONFIG, 0);
  if (HasExtension(p.extensions, "cl_khr_fp16")) {
    p.half_fp_config = DeviceValueOr<cl_device_fp_config>(cl, device, CL_DEVICE_HALF_FP_CONFIG, 0);
  }
  p.pci = QueryPci(cl, device, p.extensions);
  if (HasExtension(p.extensions, "cl_khr_device_uuid")) {
    std::array<uint8_t, 16> uuid{};
    size_t size = 0;
    if (cl.GetDeviceInfo(device, kClDeviceUuid, uuid.size(), uuid.data(), &size) == CL_SUCCESS && size == uuid.size()) {
      p.uuid = uuid;
    }
  }
  if (HasExtension(p.extensions, "cl_nv_device_attribute_query")) {
    const auto major = DeviceValue<cl_uint>(cl, device, kClDeviceComputeCapabilityMajorNv);
    const auto minor = DeviceValue<cl_uint>(cl, device, kClDeviceComputeCapabilityMinorNv);
    if (major && minor) p.nv_compute = std::pair<int, int>(static_cast<int>(*major), static_cast<int>(*minor));
  }
  return p;
}

// --- Opening the runtime -----------------------------------------------------------------------------------------

// Points PoCL's kernel compiler cache at <ACCEL_CACHE_DIR>/pocl, before the ICD loader loads PoCL, unless the user
// set POCL_CACHE_DIR. The environment is the process's: the first context that loads PoCL decides for the process.
void SteerCompilerCaches(const Host& host) {
  const char* cache_dir = host.cache_dir();
  if (cache_dir == nullptr || cache_dir[0] == '\0') return;
  // A vendor variable, not an ACCEL_* setting: read from the environment PoCL itself reads.
  const char* user = std::getenv("POCL_CACHE_DIR");  // NOLINT(concurrency-mt-unsafe)
  if (user != nullptr && user[0] != '\0') {
    host.Log(ACCEL_LOG_LEVEL_DEBUG,
             std::string("POCL_CACHE_DIR is set (") + user + "): PoCL's kernel cache stays there");
    return;
  }
  const std::string dir = std::string(cache_dir) + "/pocl";
  // PoCL creates the folder itself; making it here too keeps a missing parent from disabling the cache.
  for (size_t at = 0; at != std::string::npos;) {
    at = dir.find('/', at + 1);
    const std::string partial = dir.substr(0, at);
    ::mkdir(partial.c_str(), 0755);  // EEXIST and the like are fine
  }
  if (::setenv("POCL_CACHE_DIR", dir.c_str(), /*overwrite=*/0) != 0) {
    host.Log(ACCEL_LOG_LEVEL_WARN, "cannot set POCL_CACHE_DIR: " + std::string(std::strerror(errno)));
    return;
  }
  host.Log(ACCEL_LOG_LEVEL_DEBUG, "PoCL's kernel cache: " + dir + " (ACCEL_CACHE_DIR)");
}

// Loads the ICD loader named by the ACCEL_OPENCL_LIBRARY setting (default libOpenCL.so.1) and resolves its entry
// points. ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason when it is missing or older than OpenCL 1.2.
accel_status_t OpenRuntime(Context& context, std::string* reason) {
  const char* configured = context.host.Setting("ACCEL_OPENCL_LIBRARY");
  const std::string library_name = configured != nullptr && configured[0] != '\0' ? configured : kIcdLoaderName;
  auto runtime = std::make_unique<Runtime>();
  dlerror();
  runtime->library = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (runtime->library == nullptr) {
    const char* why = dlerror();
    *reason = "cannot load the OpenCL ICD loader " + library_name + ": " + (why != nullptr ? why : "unknown error") +
              " (install one, e.g. Debian's ocl-icd-libopencl1, and a driver such as pocl-opencl-icd)";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::string missing;
  if (!ResolveEntryPoints(runtime->library, &runtime->cl, &missing)) {
    *reason = library_name + " does not export " + missing + ": it is older than OpenCL 1.2, which the backend needs";
    dlclose(runtime->library);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  context.runtime = std::move(runtime);
  return ACCEL_SUCCESS;
}

// Opens every usable device of `platform` into `context`; appends why a device or the platform is skipped.
void OpenPlatform(Context& context, cl_platform_id platform_id, std::vector<std::string>* skipped) {
  const ClApi& cl = context.runtime->cl;
  auto platform = std::make_unique<Platform>();
  platform->id = platform_id;
  platform->name = PlatformString(cl, platform_id, CL_PLATFORM_NAME);
  const std::string version = PlatformString(cl, platform_id, CL_PLATFORM_VERSION);
  const std::string label = "platform '" + platform->name + "' (" + version + ")";
  if (!ParseVersion(version, "OpenCL ").AtLeast(1, 2)) {
    skipped->push_back(label + ": the backend needs OpenCL 1.2 or newer");
    return;
  }
  cl_uint count = 0;
  cl_int err = cl.GetDeviceIDs(platform_id, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && count == 0)) {
    skipped->push_back(label + ": no device");
    return;
  }
  if (err != CL_SUCCESS) {
    skipped->push_back(label + ": " + ClFailure("clGetDeviceIDs", err));
    return;
  }
  std::vector<cl_device_id> ids(count);
  err = cl.GetDeviceIDs(platform_id, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
  if (err != CL_SUCCESS) {
    skipped->push_back(label + ": " + ClFailure("clGetDeviceIDs", err));
    return;
  }
  std::vector<cl_device_id> usable;
  std::vector<ClDeviceProperties> properties;
  for (cl_device_id id : ids) {
    ClDeviceProperties p = QueryDevice(cl, platform->name, version, id);
    const std::string why = UnusableReason(p);
    if (!why.empty()) {
      skipped->push_back(label + ", device '" + p.name + "': " + why);
      continue;
    }
    usable.push_back(id);
    properties.push_back(std::move(p));
  }
  if (usable.empty()) return;
  const cl_context_properties context_properties[] = {CL_CONTEXT_PLATFORM,
                                                      reinterpret_cast<cl_context_properties>(platform_id), 0};
  cl_context cl_context =
      cl.CreateContext(context_properties, static_cast<cl_uint>(usable.size()), usable.data(), nullptr, nullptr, &err);
  if (cl_context == nullptr) {
    skipped->push_back(label + ": " + ClFailure("clCreateContext", err));
    return;
  }
  platform->context = ClContext(context.runtime.get(), cl_context);
  for (size_t i = 0; i < usable.size(); ++i) {
    auto device = std::make_unique<Device>();
    device->host = &context.host;
    device->runtime = context.runtime.get();
    device->platform = platform.get();
    device->id = usable[i];
    device->properties = std::move(properties[i]);
    const ClDeviceProperties& p = device->properties;
    cl_command_queue queue = cl.CreateCommandQueue(cl_context, usable[i], 0, &err);
    if (queue == nullptr) {
      skipped->push_back(label + ", device '" + p.name + "': " + ClFailure("clCreateCommandQueue", err));
      continue;
    }
    device->internal_queue = ClQueue(context.runtime.get(), queue);
    device->capabilities = Describe(p);
    device->base_alignment = p.mem_base_addr_align_bits >= 8 ? p.mem_base_addr_align_bits / 8 : 1;
    if (ParseVersion(version, "OpenCL ").AtLeast(2, 1) && cl.CreateProgramWithIL != nullptr) {
      device->create_program_with_il = cl.CreateProgramWithIL;
    } else if (HasExtension(p.extensions, "cl_khr_il_program")) {
      device->create_program_with_il = reinterpret_cast<ClApi::CreateProgramWithILFn>(
          cl.GetExtensionFunctionAddressForPlatform(platform_id, "clCreateProgramWithILKHR"));
    }
    device->index = static_cast<uint32_t>(context.devices.size());
    context.host.Log(ACCEL_LOG_LEVEL_INFO, "device " + std::to_string(device->index) + ": '" + p.name + "' of " +
                                               label + ", driver " + p.driver_version + ", " + p.opencl_c_version);
    context.devices.push_back(std::move(device));
  }
  context.platforms.push_back(std::move(platform));
}

// Lists the devices of every platform. ACCEL_ERROR_BACKEND_UNAVAILABLE with the reason when there is none: no
// platform registered with the ICD loader, or none with a usable device.
accel_status_t OpenDevices(Context& context, std::string* reason) {
  const ClApi& cl = context.runtime->cl;
  cl_uint count = 0;
  cl_int err = cl.GetPlatformIDs(0, nullptr, &count);
  if (err == kClPlatformNotFoundKhr || (err == CL_SUCCESS && count == 0)) {
    *reason = "the OpenCL ICD loader found no platform (clGetPlatformIDs: " +
              ClErrorName(err == CL_SUCCESS ? kClPlatformNotFoundKhr : err) +
              "): no OpenCL driver is registered in /etc/OpenCL/vendors or OCL_ICD_VENDORS";
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  if (err != CL_SUCCESS) {
    *reason = ClFailure("clGetPlatformIDs", err);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::vector<cl_platform_id> platforms(count);
  err = cl.GetPlatformIDs(count, platforms.data(), nullptr);
  if (err != CL_SUCCESS) {
    *reason = ClFailure("clGetPlatformIDs", err);
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  std::vector<std::string> skipped;
  for (cl_platform_id platform : platforms) OpenPlatform(context, platform, &skipped);
  for (const std::string& s : skipped) context.host.Log(ACCEL_LOG_LEVEL_WARN, "skipped " + s);
  if (context.devices.empty()) {
    std::string list;
    for (const std::string& s : skipped) list += (list.empty() ? "" : "; ") + s;
    *reason = "no usable OpenCL device among " + std::to_string(count) + " platform(s): " + list;
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  return ACCEL_SUCCESS;
}

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  if (desc == nullptr || !ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, host) || desc->host == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // no host services to report through
  }
  const Host host(desc->host, kBackendName);
  return Guard(host, "context_create", [&] {
    auto context = std::make_unique<Context>(desc->host);
    SteerCompilerCaches(context->host);
    // A missing runtime or driver: zero devices, the reason in the loader report (docs/loader.md).
    std::string reason;
    accel_status_t status = OpenRuntime(*context, &reason);
    if (status == ACCEL_SUCCESS) status = OpenDevices(*context, &reason);
    if (status != ACCEL_SUCCESS) {
      context->host.Log(ACCEL_LOG_LEVEL_INFO, "no devices: " + reason);
      return host.Fail(status, reason);
    }
    *out_context = Wrap(context.release());
    return ACCEL_SUCCESS;
  });
}

void ContextDestroy(accel_bk_context_t context) noexcept { std::unique_ptr<Context> owned(Unwrap(context)); }

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  const auto count = static_cast<uint32_t>(context->devices.size());
  if (out_devices == nullptr) {
    *inout_count = count;
    return ACCEL_SUCCESS;
  }
  if (*inout_count < count) {
    const uint32_t capacity = *inout_count;
    *inout_count = count;
    return context->host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "room for " + std::to_string(capacity) +
                                                                " devices, the backend has " + std::to_string(count));
  }
  for (uint32_t i = 0; i < count; ++i) out_devices[i] = Wrap(context->devices[i].get());
  *inout_count = count;
  return ACCEL_SUCCESS;
}

// The function table: static and immutable. A NULL slot means "not implemented": the core answers
// ACCEL_ERROR_UNIMPLEMENTED without calling it.
const accel_backend_api_t kApi = {
    .stype = ACCEL_STRUCTURE_TYPE_BACKEND_API,
    .struct_size = sizeof(accel_backend_api_t),
    .next = nullptr,
    .abi_version = ACCEL_BACKEND_ABI_VERSION,
    .reserved0 = 0,
    .name = kBackendName,
    .version = kBackendVersion,
    // backend.cc
    .context_create = ContextCreate,
    .context_destroy = ContextDestroy,
    .context_get_devices = ContextGetDevices,
    // device.cc
    .device_get_capabilities = DeviceGetCapabilities,
    .device_get_memory_info = DeviceGetMemoryInfo,
    // memory.cc
    .buffer_create = BufferCreate,
    .buffer_destroy = BufferDestroy,
    .buffer_map = BufferMap,
    .buffer_unmap = BufferUnmap,
    // stream.cc
    .stream_create = StreamCreate,
    .stream_destroy = StreamDestroy,
    .stream_copy_host_to_buffer = StreamCopyHostToBuffer,
    .stream_copy_buffer_to_host = StreamCopyBufferToHost,
    .stream_copy_buffer = StreamCopyBuffer,
    .stream_fill_buffer = StreamFillBuffer,
    .stream_enqueue_host_callback = StreamEnqueueHostCallback,
    .stream_free_buffer = StreamFreeBuffer,
    .stream_record_event = StreamRecordEvent,
    .stream_wait_event = StreamWaitEvent,
    .stream_query = StreamQuery,
    .stream_synchronize = StreamSynchronize,
    .stream_clear_error = StreamClearError,
    .event_create = EventCreate,
    .event_destroy = EventDestroy,
    .event_query = EventQuery,
    .event_synchronize = EventSynchronize,
    .event_elapsed_time = EventElapsedTime,
    // module.cc
    .module_create = ModuleCreate,
    .module_destroy = ModuleDestroy,
    .module_enumerate_kernels = ModuleEnumerateKernels,
    .module_get_kernel = ModuleGetKernel,
    .kernel_destroy = KernelDestroy,
    .kernel_get_properties = KernelGetProperties,
    .kernel_get_argument_info = KernelGetArgumentInfo,
    .stream_launch_kernel = StreamLaunchKernel,
    // memory interop (docs/interop.md): not implemented (README.md, "Known limits")
    .buffer_import = nullptr,
    .buffer_export = nullptr,
    .buffer_get_host_address = nullptr,
    .buffer_get_device_address = nullptr,
    // topology.cc: no fabric clique, no NICs or domains of its own
    .device_get_topology = DeviceGetTopology,
    .device_get_link = DeviceGetLink,
    .device_get_clique = nullptr,
    .context_get_nics = nullptr,
    .device_get_nic_link = nullptr,
    .device_get_domains = nullptr,
    // stream.cc
    .stream_get_copy_statistics = StreamGetCopyStatistics,
    // module.cc: 1.1 prepared launches
    .kernel_prepare_launch = KernelPrepareLaunch,
    .prepared_launch_destroy = PreparedLaunchDestroy,
    .stream_launch_prepared = StreamLaunchPrepared,
};

}  // namespace
}  // namespace accel::opencl

// The one exported symbol (hidden visibility and the kit's linker version script hide everything else).
extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::opencl::kApi, accel::opencl::kBackendName);
}
