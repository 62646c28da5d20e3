// Level Zero device properties -> Accel's descriptors, as pure functions over plain data (no loader call),
// unit-tested in tests/level_zero/attributes_test.cc against recorded property tables of the Intel Data Center GPU Max
// 1550 (as one device, and as the two stacks a FLAT hierarchy shows) from Intel's public specifications: the
// capability descriptor (docs/capability-keys.md), the normalised SKU id ("intel-data-center-gpu-max-1550"), the PCI
// bus id, the architecture and numeric formats of a part.
#ifndef ACCEL_LEVEL_ZERO_ATTRIBUTES_H_
#define ACCEL_LEVEL_ZERO_ATTRIBUTES_H_

#include <accel_backend.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/descriptor_text.h"

namespace accel::level_zero {

inline constexpr uint32_t kIntelVendorId = 0x8086;

// What the backend reads of one device (zeDeviceGetProperties, zeDeviceGetComputeProperties,
// zeDeviceGetModuleProperties, zeDeviceGetMemoryProperties, zeDevicePciGetPropertiesExt, zeDeviceGetSubDevices,
// zeDriverGetProperties): plain data, so that the mapping is a pure function. The zeros of a default value mean
// "not reported".
struct DeviceAttributes {
  std::string name;                    // "Intel(R) Data Center GPU Max 1550"
  uint32_t type = 1;                   // ZE_DEVICE_TYPE_*: 1 GPU, 2 CPU, 3 FPGA, 4 MCA, 5 VPU
  uint32_t vendor_id = 0;              // 0x8086
  uint32_t device_id = 0;              // the PCI product id, 0x0bd5
  bool integrated = false;             // ZE_DEVICE_PROPERTY_FLAG_INTEGRATED
  bool sub_device = false;             // ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE: a stack (tile) of a card
  uint32_t sub_device_count = 0;       // zeDeviceGetSubDevices: the stacks of a card shown as one device
  uint32_t core_clock_mhz = 0;         // coreClockRate
  uint64_t max_mem_alloc_size = 0;     // maxMemAllocSize
  uint32_t slices = 0;                 // numSlices
  uint32_t subslices_per_slice = 0;    // numSubslicesPerSlice: Xe-cores per slice
  uint32_t eus_per_subslice = 0;       // numEUsPerSubslice: vector engines per Xe-core
  uint32_t threads_per_eu = 0;         // numThreadsPerEU
  uint32_t eu_simd_width = 0;          // physicalEUSimdWidth
  uint64_t timer_resolution_ns = 0;    // timerResolution: nanoseconds per tick
  uint32_t kernel_timestamp_bits = 0;  // kernelTimestampValidBits
  std::array<uint8_t, 16> uuid{};
  uint32_t max_group_size_total = 0;  // maxTotalGroupSize
  uint32_t max_group_size[3] = {0, 0, 0};
  uint32_t max_group_count[3] = {0, 0, 0};
  uint32_t max_shared_local_memory = 0;  // bytes per work-group
  std::vector<uint32_t> subgroup_sizes;  // subGroupSizes[numSubGroupSizes]
  uint32_t spirv_version = 0;            // spirvVersionSupported: (major << 16) | (minor << 8); 0 none
  bool fp16 = false;                     // ZE_DEVICE_MODULE_FLAG_FP16
  bool fp64 = false;                     // ZE_DEVICE_MODULE_FLAG_FP64
  bool int64_atomics = false;            // ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS
  bool dp4a = false;                     // ZE_DEVICE_MODULE_FLAG_DP4A: int8 dot products
  uint32_t max_arguments_size = 0;       // maxArgumentsSize
  uint64_t total_memory = 0;             // the sum of zeDeviceGetMemoryProperties' totalSize
  bool has_pci = false;                  // zeDevicePciGetPropertiesExt answered
  uint32_t pci_domain = 0;
  uint32_t pci_bus = 0;
  uint32_t pci_device = 0;
  uint32_t pci_function = 0;
  uint32_t driver_version = 0;     // ze_driver_properties_t.driverVersion
  bool can_access_a_peer = false;  // zeDeviceCanAccessPeer answered true for another device of the backend
};

// "DDDD:BB:DD.F" in lowercase hex.
std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function);
// Lowercase letters and digits, every other run one '-' (common/descriptor_text.h).
using backend::NormaliseSku;
// The Xe architecture of an Intel PCI product id, from the PCI ID Repository's product ranges: "xe-hpc" for Ponte
// Vecchio (0x0bd0 to 0x0bdb: Data Center GPU Max), "xe-hpg" for DG2 (0x5690 to 0x56cf: Arc A-series, Data Center
// GPU Flex); "" for others (the descriptor then names no architecture).
std::string ArchitectureOf(uint32_t vendor_id, uint32_t device_id);
// The normalised SKU id: "intel-" and the part's name for the PCI product ids the table knows (0x0bd5 "Data Center
// GPU Max 1550"), else the normalised device name without its "Intel(R)" prefix, with "intel-" in front ("Intel(R)
// Arc(TM) A770 Graphics" -> "intel-arc-tm-a770-graphics"), else "<vendor>-<product id>". A stack of a card shown as
// its own device (FLAT hierarchy) has the card's SKU: it is the same part.
std::string SkuOf(uint32_t vendor_id, uint32_t device_id, std::string_view name);
// The formats the device computes natively: fp32 always; fp64 and fp16 as the module properties say; int8 where the
// device has DP4A; and the matrix engines' (XMX) formats of the architecture (Intel's Max and Arc product briefs):
// bf16 and tf32 on xe-hpc, bf16 and int4 on xe-hpg.
accel_numeric_formats_t NumericFormatsOf(const DeviceAttributes& attributes);
// The driver version as Intel's compute runtime encodes it, "major.minor.build" (driverVersion: major << 24 | minor
// << 16 | build, e.g. 0x01036b1d -> "1.3.27421"); "" for 0.
std::string DriverVersionString(uint32_t driver_version);
// The subgroup size kernels get by default: the physical SIMD width when the device offers it, else the smallest
// size offered; 0 when none is.
uint32_t DefaultSubgroupSize(const DeviceAttributes& attributes);
// The whole descriptor but stable_id and backend_name (the core's).
accel_device_capabilities_t Describe(const DeviceAttributes& attributes);

}  // namespace accel::level_zero

#endif  // ACCEL_LEVEL_ZERO_ATTRIBUTES_H_
