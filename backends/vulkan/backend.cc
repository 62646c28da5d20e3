// The entry point: ABI negotiation, the function table, and the context that
// one Accel instance opens: the Vulkan loader (dlopen), a VkInstance, and a
// VkDevice with one compute queue for each compute-capable physical device.
// A missing loader, no driver or no usable device is not a crash: the context
// fails with ACCEL_ERROR_BACKEND_UNAVAILABLE and the reason, which the loader
// report shows (docs/loader.md).
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "symbols.h"

namespace accel::vulkan {

std::string ResultName(VkResult result) {
  switch (result) {
#define ACCEL_VK_RESULT(name) \
  case name: return #name;
    ACCEL_VK_RESULT(VK_SUCCESS)
    ACCEL_VK_RESULT(VK_NOT_READY)
    ACCEL_VK_RESULT(VK_TIMEOUT)
    ACCEL_VK_RESULT(VK_EVENT_SET)
    ACCEL_VK_RESULT(VK_EVENT_RESET)
    ACCEL_VK_RESULT(VK_INCOMPLETE)
    ACCEL_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    ACCEL_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ACCEL_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    ACCEL_VK_RESULT(VK_ERROR_DEVICE_LOST)
    ACCEL_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    ACCEL_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    ACCEL_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    ACCEL_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    ACCEL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    ACCEL_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    ACCEL_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ACCEL_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    ACCEL_VK_RESULT(VK_ERROR_UNKNOWN)
    ACCEL_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    ACCEL_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    ACCEL_VK_RESULT(VK_ERROR_FRAGMENTATION)
    ACCEL_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    ACCEL_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    ACCEL_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef ACCEL_VK_RESULT
    default: return "VkResult " + std::to_string(static_cast<int>(result));
  }
}

accel_status_t StatusOf(VkResult result) {
  switch (result) {
    case VK_SUCCESS: return ACCEL_SUCCESS;
    case VK_TIMEOUT: return ACCEL_ERROR_TIMEOUT;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION: return ACCEL_ERROR_RESOURCE_EXHAUSTED;
    case VK_ERROR_DEVICE_LOST: return ACCEL_ERROR_DEVICE_LOST;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED: return ACCEL_ERROR_BACKEND_UNAVAILABLE;
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return ACCEL_ERROR_UNSUPPORTED;
    case VK_ERROR_INVALID_SHADER_NV: return ACCEL_ERROR_INVALID_ARGUMENT;
    default: return ACCEL_ERROR_INTERNAL;
  }
}

Status VkFailure(const char* what, VkResult result) {
  return {StatusOf(result), std::string(what) + " failed: " + ResultName(result)};
}

namespace {

std::string VersionText(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::vector<std::string> DeviceExtensions(const Context& context, VkPhysicalDevice physical) {
  uint32_t count = 0;
  std::vector<std::string> out;
  if (context.vki.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) != VK_SUCCESS) return out;
  std::vector<VkExtensionProperties> extensions(count);
  if (context.vki.vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()) != VK_SUCCESS) {
    return out;
  }
  for (uint32_t i = 0; i < count; ++i) out.emplace_back(extensions[i].extensionName);
  return out;
}

bool Has(const std::vector<std::string>& names, const char* name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

uint32_t HostCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<uint32_t>(online) : 1;
}

std::string HostMachine() {
  struct utsname u {};
  return uname(&u) == 0 ? std::string(u.machine) : std::string();
}

}  // namespace

bool ReadFacts(const Context& context, VkPhysicalDevice physical, PhysicalDeviceFacts* out, std::string* reason) {
  const InstanceFunctions& vki = context.vki;
  PhysicalDeviceFacts f;
  vki.vkGetPhysicalDeviceProperties(physical, &f.properties);
  f.api_version = std::min(f.properties.apiVersion, context.instance_version);
  if (f.api_version < VK_API_VERSION_1_1) {
    *reason = "Vulkan " + VersionText(f.api_version) + " (the backend needs Vulkan 1.1)";
    return false;
  }
  const std::vector<std::string> extensions = DeviceExtensions(context, physical);
  const bool v12 = f.api_version >= VK_API_VERSION_1_2;
  const bool v13 = f.api_version >= VK_API_VERSION_1_3;

  // Properties: 1.1 (ids, subgroups, maintenance3), 1.2 (driver), 1.3 (maintenance4), and extensions.
  VkPhysicalDeviceProperties2 properties2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties maintenance4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCoreProperties2AMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  void** tail = &properties2.pNext;
  auto chain = [&tail](auto* s) {
    *tail = s;
    tail = &s->pNext;
  };
  chain(&id);
  chain(&subgroup);
  chain(&maintenance3);
  if (v12 || Has(extensions, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME)) chain(&driver);
  if (v13 || Has(extensions, VK_KHR_MAINTENANCE_4_EXTENSION_NAME)) chain(&maintenance4);
  const bool has_pci = Has(extensions, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  if (has_pci) chain(&pci);
  const bool has_sm = Has(extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  if (has_sm) chain(&sm);
  const bool has_amd = Has(extensions, VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME);
  if (has_amd) chain(&amd);
  vki.vkGetPhysicalDeviceProperties2(physical, &properties2);
  std::memcpy(f.device_uuid.data(), id.deviceUUID, VK_UUID_SIZE);
  f.has_device_uuid = true;
  f.subgroup_size = subgroup.subgroupSize;
  f.subgroup_stages = subgroup.supportedStages;
  f.subgroup_operations = subgroup.supportedOperations;
  f.max_memory_allocation_size = maintenance3.maxMemoryAllocationSize;
  f.max_buffer_size = maintenance4.maxBufferSize;
  f.driver_id = driver.driverID;
  f.driver_name = std::string(driver.driverName, strnlen(driver.driverName, VK_MAX_DRIVER_NAME_SIZE));
  f.driver_info = std::string(driver.driverInfo, strnlen(driver.driverInfo, VK_MAX_DRIVER_INFO_SIZE));
  if (has_pci) {
    f.has_pci_bus_info = true;
    f.pci_domain = pci.pciDomain;
    f.pci_bus = pci.pciBus;
    f.pci_device = pci.pciDevice;
    f.pci_function = pci.pciFunction;
  }
  if (has_sm) f.nv_sm_count = sm.shaderSMCount;
  if (has_amd) f.amd_compute_unit_count = amd.activeComputeUnitCount;

  // Features: 1.0 and, on 1.2 devices, the 1.1 and 1.2 blocks.
  VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  if (v12) {
    features2.pNext = &f11;
    f11.pNext = &f12;
  }
  vki.vkGetPhysicalDeviceFeatures2(physical, &features2);
  f.shader_float64 = features2.features.shaderFloat64 == VK_TRUE;
  f.shader_int64 = features2.features.shaderInt64 == VK_TRUE;
  f.shader_int16 = features2.features.shaderInt16 == VK_TRUE;
  if (v12) {
    f.shader_float16 = f12.shaderFloat16 == VK_TRUE;
    f.shader_int8 = f12.shaderInt8 == VK_TRUE;
    f.storage_buffer_8bit = f12.storageBuffer8BitAccess == VK_TRUE;
    f.storage_buffer_16bit = f11.storageBuffer16BitAccess == VK_TRUE;
    f.buffer_int64_atomics = f12.shaderBufferInt64Atomics == VK_TRUE;
    f.timeline_semaphore = f12.timelineSemaphore == VK_TRUE;
    f.buffer_device_address = f12.bufferDeviceAddress == VK_TRUE;
  }

  vki.vkGetPhysicalDeviceMemoryProperties(physical, &f.memory);

  // The queue: the first family with compute and timestamps, else the first with compute.
  uint32_t families = 0;
  vki.vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> family(families);
  vki.vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, family.data());
  int chosen = -1;
  for (uint32_t i = 0; i < families; ++i) {
    if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0 || family[i].queueCount == 0) continue;
    if (chosen < 0 ||
        (family[static_cast<uint32_t>(chosen)].timestampValidBits == 0 && family[i].timestampValidBits > 0)) {
      chosen = static_cast<int>(i);
    }
  }
  if (chosen < 0) {
    *reason = "no queue family with VK_QUEUE_COMPUTE_BIT";
    return false;
  }
  f.queue_family = static_cast<uint32_t>(chosen);
  f.queue_count = family[f.queue_family].queueCount;
  f.timestamp_valid_bits = family[f.queue_family].timestampValidBits;

  f.host_cpu_count = HostCpuCount();
  f.host_machine = HostMachine();
  *out = std::move(f);
  return true;
}

namespace {

// The memory type for `use` among all types (any buffer's memoryTypeBits are checked at allocation).
int32_t ChooseMemoryType(const VkPhysicalDeviceMemoryProperties& m, MemoryUse use) {
  constexpr VkMemoryPropertyFlags kVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr VkMemoryPropertyFlags kCoherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  constexpr VkMemoryPropertyFlags kLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  int32_t best = -1;
  int best_score = -1;
  // The largest device-local heap: device buffers go there, not into a small host-visible window of it.
  uint32_t big_heap = 0;
  for (uint32_t h = 1; h < m.memoryHeapCount; ++h) {
    const bool local = (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    const bool big_local = (m.memoryHeaps[big_heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    if ((local && !big_local) || (local == big_local && m.memoryHeaps[h].size > m.memoryHeaps[big_heap].size)) {
      big_heap = h;
    }
  }
  for (uint32_t t = 0; t < m.memoryTypeCount; ++t) {
    const VkMemoryPropertyFlags flags = m.memoryTypes[t].propertyFlags;
    int score = 0;
    if (use == MemoryUse::kDevice) {
      if ((flags & kLocal) == 0 || m.memoryTypes[t].heapIndex != big_heap) continue;
      score = ((flags & kVisible) != 0 ? 2 : 0) + ((flags & kCoherent) != 0 ? 1 : 0);
    } else {
      if ((flags & kVisible) == 0) continue;
      score = ((flags & kCoherent) != 0 ? 4 : 0) + ((flags & kCached) != 0 ? 2 : 0) +
              (use == MemoryUse::kHost && (flags & kLocal) == 0 ? 1 : 0);
    }
    if (score > best_score) {
      best = static_cast<int32_t>(t);
      best_score = score;
    }
  }
  if (best < 0 && use == MemoryUse::kDevice) {
    // No device-local type in the largest heap (a CPU driver without the flag): any type.
    best = m.memoryTypeCount > 0 ? 0 : -1;
  }
  return best;
}

template <typename T>
bool Resolve(PFN_vkGetDeviceProcAddr get, VkDevice device, const char* name, bool required, T* out,
             std::string* reason) {
  *out = reinterpret_cast<T>(get(device, name));
  if (*out == nullptr && required) {
    *reason = std::string("the driver lacks ") + name;
    return false;
  }
  return true;
}

}  // namespace

bool OpenDevice(Context* context, VkPhysicalDevice physical, uint32_t index, std::unique_ptr<Device>* out,
                std::string* reason) {
  auto device = std::make_unique<Device>();
  device->context = context;
  device->host = &context->host;
  device->index = index;
  device->vki = &context->vki;
  device->physical = physical;
  if (!ReadFacts(*context, physical, &device->facts, reason)) return false;
  PhysicalDeviceFacts& f = device->facts;
  device->label = "device " + std::to_string(index) + " (" + f.properties.deviceName + ")";

  // Enable what kernels may use and what the backend needs.
  VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features2.features.shaderFloat64 = f.shader_float64 ? VK_TRUE : VK_FALSE;
  features2.features.shaderInt64 = f.shader_int64 ? VK_TRUE : VK_FALSE;
  features2.features.shaderInt16 = f.shader_int16 ? VK_TRUE : VK_FALSE;
  if (f.api_version >= VK_API_VERSION_1_2) {
    features2.pNext = &f11;
    f11.pNext = &f12;
    f11.storageBuffer16BitAccess = f.storage_buffer_16bit ? VK_TRUE : VK_FALSE;
    f12.storageBuffer8BitAccess = f.storage_buffer_8bit ? VK_TRUE : VK_FALSE;
    f12.shaderFloat16 = f.shader_float16 ? VK_TRUE : VK_FALSE;
    f12.shaderInt8 = f.shader_int8 ? VK_TRUE : VK_FALSE;
    f12.shaderBufferInt64Atomics = f.buffer_int64_atomics ? VK_TRUE : VK_FALSE;
    f12.timelineSemaphore = f.timeline_semaphore ? VK_TRUE : VK_FALSE;
    f12.bufferDeviceAddress = f.buffer_device_address ? VK_TRUE : VK_FALSE;
  }
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = f.queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  // A portability driver (MoltenVK) must be told that the application knows it is one.
  std::vector<const char*> extensions;
  if (Has(DeviceExtensions(*context, physical), "VK_KHR_portability_subset")) {
    extensions.push_back("VK_KHR_portability_subset");
  }
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features2;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = context->vki.vkCreateDevice(physical, &info, nullptr, &device->device);
  if (r != VK_SUCCESS) {
    device->device = VK_NULL_HANDLE;
    *reason = "vkCreateDevice failed: " + ResultName(r);
    return false;
  }
  DeviceFunctions& vk = device->vk;
  const PFN_vkGetDeviceProcAddr get = context->vki.vkGetDeviceProcAddr;
#define ACCEL_VK_RESOLVE(name, required) \
  if (!Resolve(get, device->device, #name, required, &vk.name, reason)) return false;
  ACCEL_VK_DEVICE_FUNCTIONS(ACCEL_VK_RESOLVE)
#undef ACCEL_VK_RESOLVE
  vk.vkGetDeviceQueue(device->device, f.queue_family, 0, &device->queue);
  device->timeline = f.timeline_semaphore && vk.vkWaitSemaphores != nullptr && vk.vkGetSemaphoreCounterValue != nullptr;
  device->device_address = f.buffer_device_address && vk.vkGetBufferDeviceAddress != nullptr;
  if (!device->device_address) f.buffer_device_address = false;
  device->force_staging = TextOf(context->host.Setting("ACCEL_VULKAN_STAGING")) == "always";
  device->device_memory_type = ChooseMemoryType(f.memory, MemoryUse::kDevice);
  device->host_memory_type = ChooseMemoryType(f.memory, MemoryUse::kHost);
  if (device->device_memory_type < 0) {
    *reason = "the device reports no memory types";
    return false;
  }

  // The utility command buffer (buffer_map through a staging copy).
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = f.queue_family;
  r = vk.vkCreateCommandPool(device->device, &pool, nullptr, &device->utility_pool);
  if (r != VK_SUCCESS) {
    *reason = "vkCreateCommandPool failed: " + ResultName(r);
    return false;
  }
  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = device->utility_pool;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  r = vk.vkAllocateCommandBuffers(device->device, &allocate, &device->utility_commands);
  if (r != VK_SUCCESS) {
    *reason = "vkAllocateCommandBuffers failed: " + ResultName(r);
    return false;
  }
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vk.vkCreateFence(device->device, &fence, nullptr, &device->utility_fence);
  if (r != VK_SUCCESS) {
    *reason = "vkCreateFence failed: " + ResultName(r);
    return false;
  }

  device->capabilities = DescribeDevice(f);
  if (!device->device_address) device->capabilities.features &= ~ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES;
  if (!device->timeline) device->capabilities.features &= ~ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS;
  if (device->host_memory_type < 0) device->capabilities.features &= ~ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  LoadPipelineCache(device.get());
  *out = std::move(device);
  return true;
}

Device::~Device() {
  // Also runs for a device that OpenDevice gave up on half-way: only what was made is destroyed.
  if (device == VK_NULL_HANDLE) return;
  if (vk.vkDeviceWaitIdle != nullptr) vk.vkDeviceWaitIdle(device);
  if (pipeline_cache != VK_NULL_HANDLE) {
    SavePipelineCache(this);
    vk.vkDestroyPipelineCache(device, pipeline_cache, nullptr);
  }
  if (utility_fence != VK_NULL_HANDLE) vk.vkDestroyFence(device, utility_fence, nullptr);
  if (utility_pool != VK_NULL_HANDLE) vk.vkDestroyCommandPool(device, utility_pool, nullptr);
  if (vk.vkDestroyDevice != nullptr) vk.vkDestroyDevice(device, nullptr);
}

Context::~Context() {
  devices.clear();
  if (instance != VK_NULL_HANDLE && vki.vkDestroyInstance != nullptr) vki.vkDestroyInstance(instance, nullptr);
  if (library != nullptr) dlclose(library);
}

namespace {

// Steers Mesa's on-disk shader cache under ACCEL_CACHE_DIR, unless the user chose a place already. Mesa reads the
// variable when a device is created, so this runs before the loader opens any driver.
void SteerMesaCache(const Host& host) {
  const std::string cache_dir = TextOf(host.cache_dir());
  if (cache_dir.empty()) return;
  const std::filesystem::path mesa = std::filesystem::path(cache_dir) / "mesa";
  if (std::getenv("MESA_SHADER_CACHE_DIR") != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    host.Log(ACCEL_LOG_LEVEL_DEBUG, "MESA_SHADER_CACHE_DIR is set: Mesa's shader cache stays where it says");
    return;
  }
  std::error_code error;
  std::filesystem::create_directories(mesa, error);
  if (error) {
    host.Log(ACCEL_LOG_LEVEL_WARN,
             "cannot create the Mesa shader cache folder " + mesa.string() + ": " + error.message());
    return;
  }
  setenv("MESA_SHADER_CACHE_DIR", mesa.c_str(), 0);  // NOLINT(concurrency-mt-unsafe): does not replace a user's
  host.Log(ACCEL_LOG_LEVEL_DEBUG, "MESA_SHADER_CACHE_DIR=" + mesa.string());
}

bool OpenRuntime(Context* context, std::string* reason);

// The shared objects loaded in the process, by path.
std::set<std::string> LoadedObjects() {
  std::set<std::string> out;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::set<std::string>*>(data)->insert(info->dlpi_name);
        }
        return 0;
      },
      &out);
  return out;
}

// Keeps every shared object loaded since `before` (the Vulkan loader, its layers, the driver and what the driver
// pulled in: Mesa, LLVM) resident until the process exits. Mesa and LLVM do not support being unloaded (their
// one-time initialisation and exit handlers outlive a dlclose), and reloading them for every Accel instance is
// slow; the loader dlcloses drivers at vkDestroyInstance, so they are marked RTLD_NODELETE here.
void PinNewObjects(const Host& host, const std::set<std::string>& before) {
  for (const std::string& path : LoadedObjects()) {
    if (before.contains(path)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    if (handle == nullptr) continue;
    host.Log(ACCEL_LOG_LEVEL_DEBUG, "keeping " + path + " loaded");
    dlclose(handle);  // the reference just taken; RTLD_NODELETE stays
  }
}

// Opens the loader, the instance and the devices; false with `*reason` when the backend cannot run here.
bool Open(Context* context, std::string* reason) {
  const std::set<std::string> before = LoadedObjects();
  const bool opened = OpenRuntime(context, reason);
  PinNewObjects(context->host, before);
  return opened;
}

bool OpenRuntime(Context* context, std::string* reason) {
  const Host& host = context->host;
  std::string loader = TextOf(host.Setting("ACCEL_VULKAN_LOADER"));
  if (loader.empty()) loader = kDefaultLoader;
  SteerMesaCache(host);
  dlerror();
  context->library = dlopen(loader.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (context->library == nullptr) {
    const char* why = dlerror();
    *reason = "cannot load the Vulkan loader " + loader + ": " + (why != nullptr ? why : "unknown error");
    return false;
  }
  context->vkg.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(context->library, "vkGetInstanceProcAddr"));
  if (context->vkg.vkGetInstanceProcAddr == nullptr) {
    *reason = "the Vulkan loader " + loader + " does not export vkGetInstanceProcAddr";
    return false;
  }
  GlobalFunctions& vkg = context->vkg;
#define ACCEL_VK_RESOLVE(name, required)                                                     \
  vkg.name = reinterpret_cast<PFN_##name>(vkg.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name)); \
  if (vkg.name == nullptr && (required)) {                                                   \
    *reason = "the Vulkan loader " + loader + " lacks " #name;                               \
    return false;                                                                            \
  }
  ACCEL_VK_GLOBAL_FUNCTIONS(ACCEL_VK_RESOLVE)
#undef ACCEL_VK_RESOLVE
  uint32_t version = VK_API_VERSION_1_0;
  if (vkg.vkEnumerateInstanceVersion != nullptr) vkg.vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_1) {
    *reason =
        "the Vulkan loader " + loader + " implements Vulkan " + VersionText(version) + "; the backend needs Vulkan 1.1";
    return false;
  }
  // The backend uses what Vulkan 1.3 offers where the device has it.
  context->instance_version = std::min<uint32_t>(version, VK_API_VERSION_1_3);

  std::vector<const char*> extensions;
  uint32_t count = 0;
  VkInstanceCreateFlags flags = 0;
  if (vkg.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) == VK_SUCCESS) {
    std::vector<VkExtensionProperties> available(count);
    if (vkg.vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data()) == VK_SUCCESS) {
      for (uint32_t i = 0; i < count; ++i) {
        if (std::strcmp(available[i].extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0) {
          extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
          flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
        }
      }
    }
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "accel";
  app.applicationVersion = 1;
  app.pEngineName = "accel-vulkan-backend";
  app.engineVersion = 1;
  app.apiVersion = context->instance_version;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkg.vkCreateInstance(&info, nullptr, &context->instance);
  if (r != VK_SUCCESS) {
    context->instance = VK_NULL_HANDLE;
    *reason = "vkCreateInstance failed: " + ResultName(r);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
      *reason += " (no Vulkan driver was found; VK_DRIVER_FILES or VK_ICD_FILENAMES name the driver manifests)";
    }
    return false;
  }
  InstanceFunctions& vki = context->vki;
#define ACCEL_VK_RESOLVE(name, required)                                                        \
  vki.name = reinterpret_cast<PFN_##name>(vkg.vkGetInstanceProcAddr(context->instance, #name)); \
  if (vki.name == nullptr && (required)) {                                                      \
    *reason = "the Vulkan instance lacks " #name;                                               \
    return false;                                                                               \
  }
  ACCEL_VK_INSTANCE_FUNCTIONS(ACCEL_VK_RESOLVE)
#undef ACCEL_VK_RESOLVE

  count = 0;
  r = vki.vkEnumeratePhysicalDevices(context->instance, &count, nullptr);
  std::vector<VkPhysicalDevice> physical(count);
  if (r == VK_SUCCESS && count > 0) r = vki.vkEnumeratePhysicalDevices(context->instance, &count, physical.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    *reason = "vkEnumeratePhysicalDevices failed: " + ResultName(r);
    if (r == VK_ERROR_INITIALIZATION_FAILED) {
      *reason += " (no driver found a device it can run on; VK_DRIVER_FILES or VK_ICD_FILENAMES select drivers)";
    }
    return false;
  }
  physical.resize(count);
  if (physical.empty()) {
    *reason = "the Vulkan loader found no physical device (VK_DRIVER_FILES or VK_ICD_FILENAMES select drivers)";
    return false;
  }
  std::string skipped;
  for (uint32_t i = 0; i < physical.size(); ++i) {
    std::unique_ptr<Device> device;
    std::string why;
    VkPhysicalDeviceProperties p{};
    vki.vkGetPhysicalDeviceProperties(physical[i], &p);
    if (OpenDevice(context, physical[i], static_cast<uint32_t>(context->devices.size()), &device, &why)) {
      host.Log(ACCEL_LOG_LEVEL_DEBUG, "physical device " + std::to_string(i) + " (" + p.deviceName +
                                          "): " + device->capabilities.driver_version);
      context->devices.push_back(std::move(device));
    } else {
      const std::string line = "physical device " + std::to_string(i) + " (" + p.deviceName + "): " + why;
      host.Log(ACCEL_LOG_LEVEL_INFO, "skipped " + line);
      skipped += (skipped.empty() ? "" : "; ") + line;
    }
  }
  if (context->devices.empty()) {
    *reason = "no compute-capable Vulkan device: " + skipped;
    return false;
  }
  return true;
}

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out_context) noexcept {
  if (desc == nullptr || !ACCEL_BACKEND_HAS_FIELD(desc, accel_bk_context_desc_t, host) || desc->host == nullptr) {
    return ACCEL_ERROR_INVALID_ARGUMENT;  // no host services to report through
  }
  const Host host(desc->host, kBackendName);
  return Guard(host, "context_create", [&] {
    auto context = std::make_unique<Context>(desc->host);
    std::string reason;
    if (!Open(context.get(), &reason)) {
      context->host.Log(ACCEL_LOG_LEVEL_INFO, "no devices: " + reason);
      return host.Fail(ACCEL_ERROR_BACKEND_UNAVAILABLE, reason);
    }
    *out_context = Wrap(context.release());
    return ACCEL_SUCCESS;
  });
}

void ContextDestroy(accel_bk_context_t context) noexcept { std::unique_ptr<Context> owned(Unwrap(context)); }

accel_status_t ContextGetDevices(accel_bk_context_t handle, uint32_t* inout_count,
                                 accel_bk_device_t* out_devices) noexcept {
  Context* context = Unwrap(handle);
  return Guard(context->host, "context_get_devices", [&] {
    const auto count = static_cast<uint32_t>(context->devices.size());
    if (out_devices == nullptr) {
      *inout_count = count;
      return ACCEL_SUCCESS;
    }
    if (*inout_count < count) {
      *inout_count = count;
      return context->host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                                "room for fewer devices than the backend has (" + std::to_string(count) + ")");
    }
    for (uint32_t i = 0; i < count; ++i) out_devices[i] = Wrap(context->devices[i].get());
    *inout_count = count;
    return ACCEL_SUCCESS;
  });
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
    // memory interop (docs/interop.md): exports VULKAN_BUFFER; no imports yet
    .buffer_import = nullptr,
    .buffer_export = BufferExport,
    .buffer_get_host_address = BufferGetHostAddress,
    .buffer_get_device_address = BufferGetDeviceAddress,
    // topology.cc: links between two Vulkan devices go through the host; no fabric, NICs or domains of its own
    .device_get_topology = DeviceGetTopology,
    .device_get_link = DeviceGetLink,
    .device_get_clique = nullptr,
    .context_get_nics = nullptr,
    .device_get_nic_link = nullptr,
    .device_get_domains = nullptr,
    // stream.cc
    .stream_get_copy_statistics = StreamGetCopyStatistics,
    // 1.1 prepared launches: the core keeps each checked launch and enqueues it through stream_launch_kernel
    .kernel_prepare_launch = nullptr,
    .prepared_launch_destroy = nullptr,
    .stream_launch_prepared = nullptr,
};

}  // namespace
}  // namespace accel::vulkan

// The one exported symbol (hidden visibility and the linker version script hide everything else).
extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  return accel::backend::NegotiateApi(args, &accel::vulkan::kApi, accel::vulkan::kBackendName);
}
