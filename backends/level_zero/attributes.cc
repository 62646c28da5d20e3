// Level Zero device properties -> Accel's descriptors (attributes.h): pure functions, no loader call.
#include "attributes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace accel::level_zero {

using backend::CopyString;

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The PCI ID Repository's names (pci-ids.ucw.cz, vendor 8086) of data-centre parts whose product id names one part.
struct KnownPart {
  uint32_t product;
  const char* name;
};
constexpr KnownPart kKnownParts[] = {
    {0x0bd5, "Data Center GPU Max 1550"},
};

// ZE_DEVICE_TYPE_* -> Accel's kind: a memory-copy engine (MCA) runs no kernels; a VPU is Intel's NPU.
accel_device_kind_t KindOf(uint32_t type) {
  switch (type) {
    case 1: return ACCEL_DEVICE_KIND_GPU;
    case 2: return ACCEL_DEVICE_KIND_CPU;
    case 3: return ACCEL_DEVICE_KIND_FPGA;
    case 5: return ACCEL_DEVICE_KIND_NPU;
    default: return ACCEL_DEVICE_KIND_UNKNOWN;
  }
}

}  // namespace

std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu,
                function & 0x7u);
  return text;
}

std::string ArchitectureOf(uint32_t vendor_id, uint32_t device_id) {
  if (vendor_id != kIntelVendorId) return std::string();
  if (device_id >= 0x0bd0 && device_id <= 0x0bdb) return "xe-hpc";
  if (device_id >= 0x5690 && device_id <= 0x56cf) return "xe-hpg";
  return std::string();
}

std::string SkuOf(uint32_t vendor_id, uint32_t device_id, std::string_view name) {
  char fallback[32];
  std::snprintf(fallback, sizeof(fallback), "%04x-%04x", vendor_id & 0xffffu, device_id & 0xffffu);
  if (vendor_id != kIntelVendorId) {
    const std::string rest = NormaliseSku(name);
    return rest.empty() ? std::string(fallback) : rest;
  }
  for (const KnownPart& part : kKnownParts) {
    if (part.product == device_id) return "intel-" + NormaliseSku(part.name);
  }
  std::string rest = NormaliseSku(name);
  if (rest == "intel" || rest == "intel-r") rest.clear();
  for (std::string_view prefix : {"intel-r-", "intel-"}) {
    if (StartsWith(rest, prefix)) {
      rest.erase(0, prefix.size());
      break;
    }
  }
  if (!rest.empty()) return "intel-" + rest;
  return "intel-" + std::string(fallback).substr(5);
}

accel_numeric_formats_t NumericFormatsOf(const DeviceAttributes& a) {
  accel_numeric_formats_t formats = ACCEL_NUMERIC_FORMAT_FP32;
  if (a.fp64) formats |= ACCEL_NUMERIC_FORMAT_FP64;
  if (a.fp16) formats |= ACCEL_NUMERIC_FORMAT_FP16;
  if (a.dp4a) formats |= ACCEL_NUMERIC_FORMAT_INT8;
  const std::string arch = ArchitectureOf(a.vendor_id, a.device_id);
  if (arch == "xe-hpc") formats |= ACCEL_NUMERIC_FORMAT_BF16 | ACCEL_NUMERIC_FORMAT_TF32;
  if (arch == "xe-hpg") formats |= ACCEL_NUMERIC_FORMAT_BF16 | ACCEL_NUMERIC_FORMAT_INT4;
  return formats;
}

std::string DriverVersionString(uint32_t v) {
  if (v == 0) return std::string();
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xffu) + "." + std::to_string(v & 0xffffu);
}

uint32_t DefaultSubgroupSize(const DeviceAttributes& a) {
  if (a.subgroup_sizes.empty()) return 0;
  if (std::find(a.subgroup_sizes.begin(), a.subgroup_sizes.end(), a.eu_simd_width) != a.subgroup_sizes.end()) {
    return a.eu_simd_width;
  }
  return *std::min_element(a.subgroup_sizes.begin(), a.subgroup_sizes.end());
}

accel_device_capabilities_t Describe(const DeviceAttributes& a) {
  accel_device_capabilities_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  c.struct_size = sizeof(c);
  c.kind = KindOf(a.type);
  c.vendor_id = a.vendor_id;
  c.device_id = a.device_id;
  // Intel's UUID is made of the PCI address, product and stack: unique on a machine, not across machines (the core
  // derives the stable id then).
  std::memcpy(c.uuid, a.uuid.data(), sizeof(c.uuid));
  const std::string arch = ArchitectureOf(a.vendor_id, a.device_id);
  c.memory_total = a.total_memory;
  c.max_allocation = a.max_mem_alloc_size != 0 ? std::min(a.max_mem_alloc_size, a.total_memory) : a.total_memory;
  c.max_buffer_range = c.max_allocation;
  c.local_memory_size = a.max_shared_local_memory;
  c.numeric_formats = NumericFormatsOf(a);
  if (a.spirv_version != 0) c.kernel_formats = ACCEL_KERNEL_FORMAT_SPIRV_OPENCL;
  // Shared virtual addresses (USM): device and host allocations are reached by address; host allocations
  // (zeMemAllocHost) by every device of the context.
  c.features = ACCEL_DEVICE_FEATURE_EVENT_TIMING | ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES |
               ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  if (a.int64_atomics) c.features |= ACCEL_DEVICE_FEATURE_ATOMICS_64;
  if (!a.subgroup_sizes.empty()) c.features |= ACCEL_DEVICE_FEATURE_SUBGROUPS;
  if (a.integrated) c.features |= ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY;
  if (a.can_access_a_peer) c.features |= ACCEL_DEVICE_FEATURE_PEER_ACCESS;
  // Compute units are Xe-cores (sub-slices), the counterpart of SMs and CUs.
  c.compute_units = a.slices * a.subslices_per_slice;
  c.clock_mhz = a.core_clock_mhz;
  c.max_work_group_size = a.max_group_size_total;
  for (int d = 0; d < 3; ++d) {
    c.max_work_group_dims[d] = std::min(a.max_group_size[d], a.max_group_size_total);
    c.max_grid_dims[d] = a.max_group_count[d];
  }
  c.max_argument_size = a.max_arguments_size;
  c.subgroup_size = DefaultSubgroupSize(a);
  c.numa_node = -1;
  CopyString(c.name, sizeof(c.name), a.name);
  CopyString(c.vendor, sizeof(c.vendor), a.vendor_id == kIntelVendorId ? std::string("Intel") : std::string());
  CopyString(c.architecture, sizeof(c.architecture), arch);
  CopyString(c.sku, sizeof(c.sku), SkuOf(a.vendor_id, a.device_id, a.name));
  CopyString(c.driver_version, sizeof(c.driver_version), DriverVersionString(a.driver_version));
  // A stack shown as its own device shares its card's PCI function with the other stacks: no bus id, so that the
  // core does not merge the stacks into one physical device.
  if (a.has_pci && !a.integrated && !a.sub_device) {
    CopyString(c.pci_bus_id, sizeof(c.pci_bus_id), PciBusId(a.pci_domain, a.pci_bus, a.pci_device, a.pci_function));
  }
  return c;
}

}  // namespace accel::level_zero
