// The Level Zero backend's property mapping (backends/level_zero/attributes.h): recorded property tables of the Intel
// Data Center GPU Max 1550, from Intel's public specifications, to Accel's descriptor and its normalised SKU id. The
// NVIDIA H100, H200 and A100 tables are in tests/cuda/attributes_test.cc, the AMD MI300X's in
// tests/hip/attributes_test.cc. No loader needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "attributes.h"

namespace accel::level_zero {
namespace {

// What zeDeviceGetProperties and friends answer for a Max 1550 shown as one device (COMPOSITE hierarchy). From
// Intel's product specifications (ark.intel.com, "Intel Data Center GPU Max 1550"): 128 Xe-cores (two stacks of 64),
// 8 vector engines (EUs) per Xe-core (1024 in all), 128 GB HBM2e, 1600 MHz max clock, Xe-HPC; PCI product id 0x0bd5
// (PCI ID Repository, 8086:0bd5). From Intel's oneAPI GPU Optimization Guide (the Max Series architecture): 8
// threads per vector engine, SIMD16 vector engines (sub-groups of 16 and 32), 128 KiB of shared local memory per
// Xe-core, work-groups of up to 1024 work-items. maxMemAllocSize is the driver's allocation limit without the
// relaxed-allocation extension (4 GiB) — a driver setting rather than a specification, recorded as such.
DeviceAttributes Max1550() {
  DeviceAttributes a;
  a.name = "Intel(R) Data Center GPU Max 1550";
  a.type = 1;  // ZE_DEVICE_TYPE_GPU
  a.vendor_id = 0x8086;
  a.device_id = 0x0bd5;
  a.sub_device_count = 2;
  a.core_clock_mhz = 1600;
  a.max_mem_alloc_size = 4ull << 30;
  a.slices = 2;
  a.subslices_per_slice = 64;
  a.eus_per_subslice = 8;
  a.threads_per_eu = 8;
  a.eu_simd_width = 16;
  a.timer_resolution_ns = 1;
  a.kernel_timestamp_bits = 32;
  for (int i = 0; i < 16; ++i) a.uuid[i] = static_cast<uint8_t>(0x86 + i);
  a.max_group_size_total = 1024;
  a.max_group_size[0] = a.max_group_size[1] = a.max_group_size[2] = 1024;
  a.max_group_count[0] = a.max_group_count[1] = a.max_group_count[2] = 0xffffffffu;
  a.max_shared_local_memory = 128 << 10;
  a.subgroup_sizes = {16, 32};
  a.spirv_version = (1u << 16) | (4u << 8);
  a.fp16 = a.fp64 = a.int64_atomics = a.dp4a = true;
  a.max_arguments_size = 2048;
  a.total_memory = 128ull << 30;  // 128 GB HBM2e
  a.has_pci = true;
  a.pci_domain = 0;
  a.pci_bus = 0x18;
  a.driver_version = 0x01036b1d;
  return a;
}

// One stack of it, as the FLAT hierarchy (the driver's default since 2023) shows each stack as a device: 64 Xe-cores
// and 64 GB, the sub-device flag set, on the card's PCI function.
DeviceAttributes Max1550Stack() {
  DeviceAttributes a = Max1550();
  a.sub_device = true;
  a.sub_device_count = 0;
  a.slices = 1;
  a.total_memory = 64ull << 30;
  return a;
}

constexpr accel_numeric_formats_t kXeHpcFormats = ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 |
                                                  ACCEL_NUMERIC_FORMAT_FP16 | ACCEL_NUMERIC_FORMAT_BF16 |
                                                  ACCEL_NUMERIC_FORMAT_TF32 | ACCEL_NUMERIC_FORMAT_INT8;

TEST(LevelZeroAttributes, Max1550Descriptor) {
  const accel_device_capabilities_t c = Describe(Max1550());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_GPU);
  EXPECT_STREQ(c.name, "Intel(R) Data Center GPU Max 1550");
  EXPECT_STREQ(c.vendor, "Intel");
  EXPECT_EQ(c.vendor_id, 0x8086u);
  EXPECT_EQ(c.device_id, 0x0bd5u);
  EXPECT_STREQ(c.sku, "intel-data-center-gpu-max-1550");
  EXPECT_STREQ(c.architecture, "xe-hpc");
  EXPECT_STREQ(c.driver_version, "1.3.27421");
  EXPECT_EQ(c.memory_total, 137438953472ull);
  EXPECT_EQ(c.max_allocation, 4ull << 30);
  EXPECT_EQ(c.max_buffer_range, 4ull << 30);
  EXPECT_EQ(c.compute_units, 128u) << "Xe-cores";
  EXPECT_EQ(c.clock_mhz, 1600u);
  EXPECT_EQ(c.local_memory_size, 131072u);
  EXPECT_EQ(c.max_work_group_size, 1024u);
  EXPECT_EQ(c.max_work_group_dims[2], 1024u);
  EXPECT_EQ(c.max_grid_dims[0], 0xffffffffu);
  EXPECT_EQ(c.max_argument_size, 2048u);
  EXPECT_EQ(c.subgroup_size, 16u) << "the SIMD width, among the sizes offered";
  EXPECT_EQ(c.numeric_formats, kXeHpcFormats);
  EXPECT_EQ(c.numeric_formats & (ACCEL_NUMERIC_FORMAT_FP8_E4M3 | ACCEL_NUMERIC_FORMAT_FP8_E5M2), 0u)
      << "Xe-HPC's matrix engines have no fp8";
  EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_SPIRV_OPENCL);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_ATOMICS_64, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_SUBGROUPS, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, 0u);
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY, 0u) << "discrete";
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u) << "no peer among the backend's devices";
  EXPECT_STREQ(c.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u) << "Intel's UUID is made of the PCI address";
  EXPECT_EQ(c.uuid[0], 0x86);
  EXPECT_EQ(c.numa_node, -1);
}

TEST(LevelZeroAttributes, StackOfMax1550KeepsTheCardsSkuWithoutPciBusId) {
  const accel_device_capabilities_t c = Describe(Max1550Stack());
  EXPECT_STREQ(c.sku, "intel-data-center-gpu-max-1550");
  EXPECT_EQ(c.compute_units, 64u);
  EXPECT_EQ(c.memory_total, 64ull << 30);
  EXPECT_STREQ(c.pci_bus_id, "") << "the two stacks share one PCI function: the core must not merge them";
}

TEST(LevelZeroAttributes, PeerAccessAndIntegratedSetTheirFeatures) {
  DeviceAttributes a = Max1550();
  a.can_access_a_peer = true;
  EXPECT_NE(Describe(a).features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u);
  a.integrated = true;
  const accel_device_capabilities_t c = Describe(a);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY, 0u);
  EXPECT_STREQ(c.pci_bus_id, "") << "an integrated GPU has no PCI identity of its own to merge by";
}

TEST(LevelZeroAttributes, SkuFromTableNameOrProductId) {
  EXPECT_EQ(SkuOf(0x8086, 0x0bd5, "anything"), "intel-data-center-gpu-max-1550");
  EXPECT_EQ(SkuOf(0x8086, 0x56a0, "Intel(R) Arc(TM) A770 Graphics"), "intel-arc-tm-a770-graphics");
  EXPECT_EQ(SkuOf(0x8086, 0x0bda, "Intel(R) Data Center GPU Max 1100"), "intel-data-center-gpu-max-1100");
  EXPECT_EQ(SkuOf(0x8086, 0x1234, "Intel(R)"), "intel-1234");
  EXPECT_EQ(SkuOf(0x8086, 0x1234, ""), "intel-1234");
}

TEST(LevelZeroAttributes, ArchitectureByProductRange) {
  EXPECT_EQ(ArchitectureOf(0x8086, 0x0bd5), "xe-hpc");
  EXPECT_EQ(ArchitectureOf(0x8086, 0x56a0), "xe-hpg");
  EXPECT_EQ(ArchitectureOf(0x8086, 0x9a49), "");
  EXPECT_EQ(ArchitectureOf(0x10de, 0x0bd5), "") << "another vendor's id";
}

TEST(LevelZeroAttributes, NumericFormatsFollowModulePropertiesAndArchitecture) {
  DeviceAttributes a = Max1550();
  a.fp64 = false;
  a.dp4a = false;
  EXPECT_EQ(NumericFormatsOf(a), kXeHpcFormats & ~(ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_INT8));
  a.device_id = 0x56a0;  // Arc A770: Xe-HPG
  a.fp64 = false;
  a.dp4a = true;
  EXPECT_EQ(NumericFormatsOf(a), ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_FP16 | ACCEL_NUMERIC_FORMAT_INT8 |
                                     ACCEL_NUMERIC_FORMAT_BF16 | ACCEL_NUMERIC_FORMAT_INT4);
}

TEST(LevelZeroAttributes, NoSpirvNoKernelFormat) {
  DeviceAttributes a = Max1550();
  a.spirv_version = 0;
  EXPECT_EQ(Describe(a).kernel_formats, 0u);
}

TEST(LevelZeroAttributes, DriverVersionAndSubgroupSize) {
  EXPECT_EQ(DriverVersionString(0), "");
  EXPECT_EQ(DriverVersionString(0x01036b1d), "1.3.27421");
  DeviceAttributes a = Max1550();
  a.eu_simd_width = 8;
  EXPECT_EQ(DefaultSubgroupSize(a), 16u) << "the smallest size offered when the SIMD width is not one";
  a.subgroup_sizes.clear();
  EXPECT_EQ(DefaultSubgroupSize(a), 0u);
  EXPECT_EQ(Describe(a).features & ACCEL_DEVICE_FEATURE_SUBGROUPS, 0u);
}

TEST(LevelZeroAttributes, PciBusIdAndKinds) {
  EXPECT_EQ(PciBusId(0x0fa, 0x21, 0x1f, 3), "00fa:21:1f.3");
  DeviceAttributes a = Max1550();
  a.type = 5;  // VPU: Intel's NPU
  EXPECT_EQ(Describe(a).kind, ACCEL_DEVICE_KIND_NPU);
  a.type = 2;
  EXPECT_EQ(Describe(a).kind, ACCEL_DEVICE_KIND_CPU);
}

}  // namespace
}  // namespace accel::level_zero
