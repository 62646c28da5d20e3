// A Vulkan physical device's properties, features and limits mapped to Accel's
// capability descriptor (docs/capability-keys.md): small pure functions over
// PhysicalDeviceFacts, unit-tested in tests/vulkan. Also the two device slots
// and the capacity counters.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "symbols.h"

namespace accel::vulkan {

void CopyString(char* destination, size_t capacity, const std::string& source) {
  const size_t length = std::min(source.size(), capacity - 1);
  std::memcpy(destination, source.data(), length);
  std::memset(destination + length, 0, capacity - length);
}

std::string VendorName(uint32_t vendor_id, const std::string& driver_name) {
  switch (vendor_id) {
    case 0x1002: return "AMD";
    case 0x1010: return "Imagination Technologies";
    case 0x106B: return "Apple";
    case 0x10DE: return "NVIDIA";
    case 0x13B5: return "ARM";
    case 0x14E4: return "Broadcom";
    case 0x5143: return "Qualcomm";
    case 0x8086: return "Intel";
    case VK_VENDOR_ID_MESA: return "Mesa";
    case VK_VENDOR_ID_VIV: return "Vivante";
    case VK_VENDOR_ID_VSI: return "VeriSilicon";
    case VK_VENDOR_ID_KAZAN: return "Kazan";
    case VK_VENDOR_ID_CODEPLAY: return "Codeplay";
    case VK_VENDOR_ID_POCL: return "PoCL";
    default: break;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "vendor 0x%x", vendor_id);
  return driver_name.empty() ? std::string(text) : driver_name + " (" + text + ")";
}

std::string DriverVersionString(const PhysicalDeviceFacts& facts) {
  // The driver's own words where Vulkan 1.2 gives them ("Mesa 22.3.6 (LLVM 15.0.6)"); else driverVersion decoded
  // by the vendor's packing (NVIDIA 10.8.8.6 bits; everyone else VK_MAKE_VERSION's 10.10.12).
  if (!facts.driver_info.empty()) return facts.driver_info;
  const uint32_t v = facts.properties.driverVersion;
  char text[64];
  if (facts.properties.vendorID == 0x10DE) {
    std::snprintf(text, sizeof(text), "%u.%u.%u.%u", (v >> 22) & 0x3FF, (v >> 14) & 0xFF, (v >> 6) & 0xFF, v & 0x3F);
  } else {
    std::snprintf(text, sizeof(text), "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                  VK_API_VERSION_PATCH(v));
  }
  return facts.driver_name.empty() ? std::string(text) : facts.driver_name + " " + text;
}

std::string NormalisedSku(const std::string& name) {
  // Lowercase letters and digits; a parenthesised part ("(LLVM 15.0.6, 256 bits)") is a build detail, not the part;
  // every other run of characters becomes one '-'.
  std::string out;
  int depth = 0;
  bool dash = false;
  for (char c : name) {
    if (c == '(') {
      ++depth;
      continue;
    }
    if (c == ')') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth > 0) continue;
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      dash = true;
    }
  }
  if (out.empty()) out = "vulkan-device";
  if (out.size() >= ACCEL_SHORT_STRING_SIZE) out.resize(ACCEL_SHORT_STRING_SIZE - 1);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

bool UuidIsUnique(const PhysicalDeviceFacts& facts) {
  // A UUID counts as unique across machines only for a real GPU whose driver reports the chip's own UUID: NVIDIA's
  // (the same UUID CUDA and NVML report). Mesa's drivers (lavapipe: "mesa" plus the Mesa version; radv, anv: PCI ids
  // and bus position) and AMD's derive it from what any machine of the same build or slot shares.
  const VkPhysicalDeviceType type = facts.properties.deviceType;
  if (!facts.has_device_uuid) return false;
  if (type != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU && type != VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) return false;
  bool zero = true;
  for (uint8_t b : facts.device_uuid) zero = zero && b == 0;
  if (zero) return false;
  return facts.driver_id == VK_DRIVER_ID_NVIDIA_PROPRIETARY;
}

uint32_t ComputeUnits(const PhysicalDeviceFacts& facts) {
  // Vulkan has no core query for it. A CPU device (lavapipe) runs its work-groups on the host's CPUs: the logical
  // CPUs this process may use (llvmpipe sizes its thread pool from the same figure, at most 32 threads, unless
  // LP_NUM_THREADS says otherwise). A GPU: the vendor extensions that tell (NVIDIA SMs, AMD compute units), else 1.
  if (facts.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return std::max<uint32_t>(facts.host_cpu_count, 1);
  if (facts.nv_sm_count != 0) return facts.nv_sm_count;
  if (facts.amd_compute_unit_count != 0) return facts.amd_compute_unit_count;
  return 1;
}

uint64_t DeviceLocalBytes(const VkPhysicalDeviceMemoryProperties& memory) {
  uint64_t total = 0;
  for (uint32_t h = 0; h < memory.memoryHeapCount && h < VK_MAX_MEMORY_HEAPS; ++h) {
    if ((memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) total += memory.memoryHeaps[h].size;
  }
  return total;
}

uint32_t MaxArgumentSize(const VkPhysicalDeviceLimits& limits) {
  // Scalars go in push constants or, past maxPushConstantsSize, in a uniform buffer written by vkCmdUpdateBuffer,
  // which takes at most 65536 bytes.
  const uint32_t uniform = std::min<uint32_t>(limits.maxUniformBufferRange, 65536);
  return std::max(limits.maxPushConstantsSize, uniform);
}

uint64_t ElapsedNanoseconds(uint64_t from, uint64_t to, uint32_t valid_bits, double period) {
  const uint64_t ticks = valid_bits >= 64 ? (to > from ? to - from : 0) : MaskTicks(to - from, valid_bits);
  const double ns = static_cast<double>(ticks) * period;
  if (!(ns >= 0.0)) return ticks == 0 ? 0 : UINT64_MAX;  // a negative or NaN period: no meaningful figure
  // 2^64 is the first double past UINT64_MAX: converting it or more is undefined.
  return ns >= 18446744073709551616.0 ? UINT64_MAX : static_cast<uint64_t>(ns);
}

std::string PciBusId(const PhysicalDeviceFacts& facts) {
  if (!facts.has_pci_bus_info) return std::string();
  char text[ACCEL_PCI_BUS_ID_SIZE];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", facts.pci_domain & 0xFFFF, facts.pci_bus & 0xFF,
                facts.pci_device & 0x1F, facts.pci_function & 0x7);
  return text;
}

namespace {

accel_device_kind_t KindOf(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return ACCEL_DEVICE_KIND_CPU;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return ACCEL_DEVICE_KIND_GPU;
    default: return ACCEL_DEVICE_KIND_GPU;  // OTHER: Vulkan compute runs on some GPU-like part
  }
}

bool HostVisibleMemoryExists(const VkPhysicalDeviceMemoryProperties& memory) {
  for (uint32_t t = 0; t < memory.memoryTypeCount && t < VK_MAX_MEMORY_TYPES; ++t) {
    if ((memory.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) return true;
  }
  return false;
}

}  // namespace

accel_device_capabilities_t DescribeDevice(const PhysicalDeviceFacts& facts) {
  const VkPhysicalDeviceProperties& p = facts.properties;
  const VkPhysicalDeviceLimits& l = p.limits;
  accel_device_capabilities_t out{};
  out.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  out.struct_size = sizeof(out);
  out.kind = KindOf(p.deviceType);
  // vendorID is a PCI vendor id below 0x10000; above it is a Khronos vendor id (Mesa 0x10005), which is not.
  out.vendor_id = p.vendorID <= 0xFFFF ? p.vendorID : 0;
  out.device_id = out.vendor_id != 0 ? p.deviceID : 0;
  out.flags = UuidIsUnique(facts) ? ACCEL_DEVICE_FLAG_UUID_UNIQUE : 0;
  if (facts.has_device_uuid) std::memcpy(out.uuid, facts.device_uuid.data(), ACCEL_UUID_SIZE);

  // Memory: what this access path exposes is its device-local heaps. The largest buffer is Vulkan 1.1's
  // maxMemoryAllocationSize (and 1.3's maxBufferSize), never more than that memory; one kernel argument binds at
  // most maxStorageBufferRange.
  out.memory_total = DeviceLocalBytes(facts.memory);
  uint64_t max_allocation = facts.max_memory_allocation_size != 0 ? facts.max_memory_allocation_size : out.memory_total;
  if (facts.max_buffer_size != 0) max_allocation = std::min(max_allocation, facts.max_buffer_size);
  out.max_allocation = std::min(max_allocation, out.memory_total);
  out.max_buffer_range = std::min<uint64_t>(l.maxStorageBufferRange, out.max_allocation);
  out.local_memory_size = l.maxComputeSharedMemorySize;

  out.numeric_formats = ACCEL_NUMERIC_FORMAT_FP32;
  if (facts.shader_float64) out.numeric_formats |= ACCEL_NUMERIC_FORMAT_FP64;
  if (facts.shader_float16) out.numeric_formats |= ACCEL_NUMERIC_FORMAT_FP16;
  if (facts.shader_int8) out.numeric_formats |= ACCEL_NUMERIC_FORMAT_INT8;
  if (facts.shader_int64) out.numeric_formats |= ACCEL_NUMERIC_FORMAT_INT64;
  out.kernel_formats = ACCEL_KERNEL_FORMAT_SPIRV_VULKAN;
  out.modeled_kernel_formats = 0;

  out.features = 0;
  if (HostVisibleMemoryExists(facts.memory)) out.features |= ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  if (facts.timeline_semaphore) out.features |= ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS;
  if (facts.buffer_int64_atomics) out.features |= ACCEL_DEVICE_FEATURE_ATOMICS_64;
  if ((facts.subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 &&
      (facts.subgroup_operations & VK_SUBGROUP_FEATURE_BASIC_BIT) != 0 && facts.subgroup_size != 0) {
    out.features |= ACCEL_DEVICE_FEATURE_SUBGROUPS;
  }
  if (facts.buffer_device_address) out.features |= ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES;
  // Timestamps on the queue the backend uses: timestampValidBits of its family (timestampComputeAndGraphics says
  // every compute queue has them; without it the family's own bits decide).
  if (facts.timestamp_valid_bits > 0 && l.timestampPeriod > 0.0f) out.features |= ACCEL_DEVICE_FEATURE_EVENT_TIMING;

  out.compute_units = ComputeUnits(facts);
  out.clock_mhz = 0;  // Vulkan does not say
  out.max_work_group_size = l.maxComputeWorkGroupInvocations;
  for (int d = 0; d < 3; ++d) {
    out.max_work_group_dims[d] = std::min(l.maxComputeWorkGroupSize[d], l.maxComputeWorkGroupInvocations);
    out.max_grid_dims[d] = l.maxComputeWorkGroupCount[d];
  }
  out.max_argument_size = MaxArgumentSize(l);
  out.subgroup_size = (out.features & ACCEL_DEVICE_FEATURE_SUBGROUPS) != 0 ? facts.subgroup_size : 0;
  out.numa_node = -1;  // the core finds it from the PCI bus id

  CopyString(out.name, sizeof(out.name), p.deviceName);
  CopyString(out.vendor, sizeof(out.vendor), VendorName(p.vendorID, facts.driver_name));
  // Vulkan names no architecture: a CPU device is the host's; a GPU's stays empty.
  CopyString(out.architecture, sizeof(out.architecture), out.kind == ACCEL_DEVICE_KIND_CPU ? facts.host_machine : "");
  CopyString(out.sku, sizeof(out.sku), NormalisedSku(p.deviceName));
  CopyString(out.driver_version, sizeof(out.driver_version), DriverVersionString(facts));
  CopyString(out.pci_bus_id, sizeof(out.pci_bus_id), PciBusId(facts));
  return out;
}

// --- Capacity ------------------------------------------------------------------------------------------------------

bool Device::Reserve(uint32_t heap, uint64_t size, uint64_t* out_free) {
  std::lock_guard lock(capacity_mutex_);
  const uint64_t total = facts.memory.memoryHeaps[heap].size;
  const uint64_t free = total - std::min(total, heap_used_[heap]);
  if (out_free != nullptr) *out_free = free;
  if (size > free) return false;
  heap_used_[heap] += size;
  return true;
}

void Device::Unreserve(uint32_t heap, uint64_t size) {
  std::lock_guard lock(capacity_mutex_);
  heap_used_[heap] -= std::min(size, heap_used_[heap]);
}

uint64_t Device::DeviceLocalUsed() {
  std::lock_guard lock(capacity_mutex_);
  uint64_t used = 0;
  for (uint32_t h = 0; h < facts.memory.memoryHeapCount && h < VK_MAX_MEMORY_HEAPS; ++h) {
    if ((facts.memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0) used += heap_used_[h];
  }
  return used;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
  // The core passes a zeroed struct of its own size: an older core's smaller struct gets the fields it knows.
  // stable_id and backend_name, the last fields of 1.0, are the core's.
  WritePrefix(&Unwrap(handle)->capabilities, out, out->struct_size, offsetof(accel_device_capabilities_t, stable_id));
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  // The backend's own accounting of what its buffers hold in the device-local heaps; other processes' use of the
  // device is not seen (VK_EXT_memory_budget would tell; see README.md).
  Device* device = Unwrap(handle);
  const uint64_t total = device->capabilities.memory_total;
  const uint64_t used = device->DeviceLocalUsed();
  if (out_total != nullptr) *out_total = total;
  if (out_free != nullptr) *out_free = total - std::min(total, used);
  return ACCEL_SUCCESS;
}

}  // namespace accel::vulkan
