// Unit tests of the Vulkan backend's pure parts, compiled in from
// backends/vulkan: the mapping of a physical device's facts to Accel's
// descriptor (device.cc) and SPIR-V reflection (reflect.cc) over the corpus
// and the shaders of tests/vulkan/shaders. No Vulkan driver is needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "symbols.h"

namespace accel::vulkan {
namespace {

// lavapipe 22.3 as vulkaninfo shows it.
PhysicalDeviceFacts Lavapipe() {
  PhysicalDeviceFacts f;
  VkPhysicalDeviceProperties& p = f.properties;
  p.apiVersion = VK_API_VERSION_1_3;
  p.driverVersion = VK_MAKE_API_VERSION(0, 0, 0, 1);
  p.vendorID = VK_VENDOR_ID_MESA;
  p.deviceID = 0;
  p.deviceType = VK_PHYSICAL_DEVICE_TYPE_CPU;
  std::strcpy(p.deviceName, "llvmpipe (LLVM 15.0.6, 256 bits)");
  p.limits.maxStorageBufferRange = 134217728;
  p.limits.maxPushConstantsSize = 128;
  p.limits.maxUniformBufferRange = 65536;
  p.limits.maxComputeSharedMemorySize = 32768;
  p.limits.maxComputeWorkGroupInvocations = 1024;
  for (int d = 0; d < 3; ++d) {
    p.limits.maxComputeWorkGroupSize[d] = 1024;
    p.limits.maxComputeWorkGroupCount[d] = 65535;
  }
  p.limits.timestampPeriod = 1.0f;
  f.api_version = VK_API_VERSION_1_3;
  const uint8_t uuid[16] = {0x6d, 0x65, 0x73, 0x61, 0x32, 0x32, 0x2e, 0x33, 0x2e, 0x36};
  std::memcpy(f.device_uuid.data(), uuid, 16);
  f.has_device_uuid = true;
  f.driver_id = VK_DRIVER_ID_MESA_LLVMPIPE;
  f.driver_name = "llvmpipe";
  f.driver_info = "Mesa 22.3.6 (LLVM 15.0.6)";
  f.max_memory_allocation_size = uint64_t{2} << 30;
  f.max_buffer_size = uint64_t{2} << 30;
  f.subgroup_size = 8;
  f.subgroup_stages = VK_SHADER_STAGE_COMPUTE_BIT;
  f.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT;
  f.memory.memoryHeapCount = 1;
  f.memory.memoryHeaps[0] = {uint64_t{2} << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
  f.memory.memoryTypeCount = 1;
  f.memory.memoryTypes[0] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                             0};
  f.timestamp_valid_bits = 64;
  f.shader_float64 = f.shader_int64 = f.shader_float16 = f.shader_int8 = true;
  f.buffer_int64_atomics = f.timeline_semaphore = f.buffer_device_address = true;
  f.host_cpu_count = 6;
  f.host_machine = "x86_64";
  return f;
}

// A discrete NVIDIA GPU with 24 GiB of VRAM, a 256 MiB BAR window and host memory.
PhysicalDeviceFacts Nvidia() {
  PhysicalDeviceFacts f = Lavapipe();
  VkPhysicalDeviceProperties& p = f.properties;
  p.vendorID = 0x10DE;
  p.deviceID = 0x2684;
  p.deviceType = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  std::strcpy(p.deviceName, "NVIDIA GeForce RTX 4090");
  p.driverVersion = (535u << 22) | (154u << 14) | (5u << 6);
  p.limits.maxStorageBufferRange = 0xFFFFFFFF;
  p.limits.maxPushConstantsSize = 256;
  p.limits.maxComputeSharedMemorySize = 49152;
  f.driver_id = VK_DRIVER_ID_NVIDIA_PROPRIETARY;
  f.driver_name = "NVIDIA";
  f.driver_info = "";
  f.max_memory_allocation_size = uint64_t{4} << 30;
  f.max_buffer_size = 0;
  f.memory.memoryHeapCount = 3;
  f.memory.memoryHeaps[0] = {uint64_t{24} << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
  f.memory.memoryHeaps[1] = {uint64_t{64} << 30, 0};
  f.memory.memoryHeaps[2] = {uint64_t{256} << 20, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
  f.memory.memoryTypeCount = 3;
  f.memory.memoryTypes[0] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
  f.memory.memoryTypes[1] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 1};
  f.memory.memoryTypes[2] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 2};
  f.has_pci_bus_info = true;
  f.pci_domain = 0;
  f.pci_bus = 0x3b;
  f.pci_device = 0;
  f.pci_function = 0;
  f.nv_sm_count = 128;
  return f;
}

TEST(VulkanDevice, LavapipeIsACpuWithTheHeapAsMemory) {
  const accel_device_capabilities_t c = DescribeDevice(Lavapipe());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_CPU);
  EXPECT_STREQ(c.name, "llvmpipe (LLVM 15.0.6, 256 bits)");
  EXPECT_STREQ(c.vendor, "Mesa");
  EXPECT_EQ(c.vendor_id, 0u) << "0x10005 is a Khronos vendor id, not a PCI one";
  EXPECT_STREQ(c.sku, "llvmpipe");
  EXPECT_STREQ(c.architecture, "x86_64");
  EXPECT_STREQ(c.driver_version, "Mesa 22.3.6 (LLVM 15.0.6)");
  EXPECT_EQ(c.memory_total, uint64_t{2} << 30);
  EXPECT_EQ(c.max_allocation, uint64_t{2} << 30);
  EXPECT_EQ(c.max_buffer_range, uint64_t{128} << 20);
  EXPECT_EQ(c.local_memory_size, 32768u);
  EXPECT_EQ(c.compute_units, 6u) << "a CPU device counts the host's CPUs";
  EXPECT_EQ(c.max_work_group_size, 1024u);
  EXPECT_EQ(c.max_grid_dims[0], 65535u);
  EXPECT_EQ(c.max_argument_size, 65536u);
  EXPECT_EQ(c.subgroup_size, 8u);
  EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_SPIRV_VULKAN);
  EXPECT_EQ(c.numeric_formats, ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP16 |
                                   ACCEL_NUMERIC_FORMAT_INT8 | ACCEL_NUMERIC_FORMAT_INT64);
  EXPECT_EQ(c.features, ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY | ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS |
                            ACCEL_DEVICE_FEATURE_ATOMICS_64 | ACCEL_DEVICE_FEATURE_SUBGROUPS |
                            ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES | ACCEL_DEVICE_FEATURE_EVENT_TIMING);
  EXPECT_STREQ(c.pci_bus_id, "");
  EXPECT_EQ(c.uuid[0], 0x6d);
}

TEST(VulkanDevice, LavapipeUuidIsNeverUnique) {
  // The same UUID on every machine with the same Mesa: never marked unique, so ids come from the machine id.
  EXPECT_FALSE(UuidIsUnique(Lavapipe()));
  EXPECT_EQ(DescribeDevice(Lavapipe()).flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u);
}

TEST(VulkanDevice, OnlyAGpuWithTheChipsOwnUuidIsUnique) {
  PhysicalDeviceFacts f = Nvidia();
  EXPECT_TRUE(UuidIsUnique(f));
  f.driver_id = VK_DRIVER_ID_MESA_RADV;  // radv builds its UUID from PCI ids and the bus position
  EXPECT_FALSE(UuidIsUnique(f));
  f = Nvidia();
  f.device_uuid.fill(0);
  EXPECT_FALSE(UuidIsUnique(f)) << "an all-zero UUID";
  f = Nvidia();
  f.properties.deviceType = VK_PHYSICAL_DEVICE_TYPE_CPU;
  EXPECT_FALSE(UuidIsUnique(f));
}

TEST(VulkanDevice, DiscreteGpuCountsDeviceLocalHeapsAndItsIdentity) {
  const accel_device_capabilities_t c = DescribeDevice(Nvidia());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_GPU);
  EXPECT_EQ(c.vendor_id, 0x10DEu);
  EXPECT_EQ(c.device_id, 0x2684u);
  EXPECT_STREQ(c.vendor, "NVIDIA");
  EXPECT_STREQ(c.sku, "nvidia-geforce-rtx-4090");
  EXPECT_STREQ(c.architecture, "");
  EXPECT_STREQ(c.driver_version, "NVIDIA 535.154.5.0");
  EXPECT_EQ(c.memory_total, (uint64_t{24} << 30) + (uint64_t{256} << 20)) << "device-local heaps only";
  EXPECT_EQ(c.max_allocation, uint64_t{4} << 30);
  EXPECT_EQ(c.max_buffer_range, uint64_t{0xFFFFFFFF});
  EXPECT_EQ(c.max_argument_size, 65536u);
  EXPECT_EQ(c.compute_units, 128u) << "VK_NV_shader_sm_builtins' SM count";
  EXPECT_STREQ(c.pci_bus_id, "0000:3b:00.0");
  EXPECT_NE(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u);
}

TEST(VulkanDevice, FeaturesFollowWhatTheDeviceReports) {
  PhysicalDeviceFacts f = Lavapipe();
  f.timestamp_valid_bits = 0;
  f.timeline_semaphore = false;
  f.buffer_device_address = false;
  f.subgroup_stages = VK_SHADER_STAGE_FRAGMENT_BIT;
  f.shader_float64 = false;
  f.memory.memoryTypes[0].propertyFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const accel_device_capabilities_t c = DescribeDevice(f);
  EXPECT_EQ(c.features, ACCEL_DEVICE_FEATURE_ATOMICS_64);
  EXPECT_EQ(c.subgroup_size, 0u) << "no subgroups in compute: no subgroup size";
  EXPECT_EQ(c.numeric_formats & ACCEL_NUMERIC_FORMAT_FP64, 0u);
}

TEST(VulkanDevice, LimitsNeverExceedTheMemory) {
  PhysicalDeviceFacts f = Lavapipe();
  f.memory.memoryHeaps[0].size = uint64_t{64} << 20;  // smaller than one binding's range
  const accel_device_capabilities_t c = DescribeDevice(f);
  EXPECT_EQ(c.max_allocation, uint64_t{64} << 20);
  EXPECT_LE(c.max_buffer_range, c.max_allocation);
  EXPECT_LE(c.max_allocation, c.memory_total);
}

TEST(VulkanDevice, ComputeUnitsOfAGpuWithoutVendorCountsIsOne) {
  PhysicalDeviceFacts f = Nvidia();
  f.nv_sm_count = 0;
  EXPECT_EQ(ComputeUnits(f), 1u);
  f.amd_compute_unit_count = 96;
  EXPECT_EQ(ComputeUnits(f), 96u);
}

TEST(VulkanDevice, DriverVersionsDecodeByVendor) {
  PhysicalDeviceFacts f = Lavapipe();
  f.driver_info.clear();
  f.driver_name.clear();
  f.properties.driverVersion = VK_MAKE_API_VERSION(0, 23, 1, 4);
  EXPECT_EQ(DriverVersionString(f), "23.1.4");
  f.driver_info = "Mesa 23.1.4";
  EXPECT_EQ(DriverVersionString(f), "Mesa 23.1.4");
}

TEST(VulkanDevice, SkuIsNormalised) {
  EXPECT_EQ(NormalisedSku("llvmpipe (LLVM 15.0.6, 256 bits)"), "llvmpipe");
  EXPECT_EQ(NormalisedSku("AMD Radeon RX 7900 XTX (RADV NAVI31)"), "amd-radeon-rx-7900-xtx");
  EXPECT_EQ(NormalisedSku("Intel(R) Arc(tm) A770 Graphics (DG2)"), "intel-arc-a770-graphics");
  EXPECT_EQ(NormalisedSku("(?)"), "vulkan-device");
}

TEST(VulkanDevice, VendorNamesFallBackReadably) {
  EXPECT_EQ(VendorName(0x1002, ""), "AMD");
  EXPECT_EQ(VendorName(0x1234, ""), "vendor 0x1234");
  EXPECT_EQ(VendorName(0x1234, "acme"), "acme (vendor 0x1234)");
}

TEST(VulkanDevice, ElapsedTimeWrapsWithTheCounterAndSaturates) {
  // A 36-bit counter that wrapped between the two timestamps: the difference modulo 2^36.
  EXPECT_EQ(ElapsedNanoseconds((uint64_t{1} << 36) - 10, 5, 36, 1.0), 15U);
  // Bits above the valid ones do not count.
  EXPECT_EQ(ElapsedNanoseconds(uint64_t{0xFF} << 40, (uint64_t{0xFF} << 40) + 100, 36, 2.5), 250U);
  // A 64-bit counter cannot wrap: an end before its start is 0, not a huge figure.
  EXPECT_EQ(ElapsedNanoseconds(1000, 400, 64, 1.0), 0U);
  EXPECT_EQ(ElapsedNanoseconds(400, 1000, 64, 1.0), 600U);
  // Ticks times the period past 2^64 ns saturate instead of converting an out-of-range double (undefined).
  EXPECT_EQ(ElapsedNanoseconds(0, uint64_t{1} << 63, 64, 52.08), UINT64_MAX);
  EXPECT_EQ(ElapsedNanoseconds(1, 0, 63, 52.08), UINT64_MAX);  // wrapped: 2^63 - 1 ticks
  EXPECT_EQ(ElapsedNanoseconds(0, 10, 64, std::numeric_limits<double>::quiet_NaN()), UINT64_MAX);
  EXPECT_EQ(ElapsedNanoseconds(7, 7, 64, std::numeric_limits<double>::quiet_NaN()), 0U);
}

// --- Reflection ----------------------------------------------------------------------------------------------

std::vector<uint32_t> ReadWords(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  if (!words.empty()) std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

ReflectedModule Reflect(const std::filesystem::path& path) {
  const std::vector<uint32_t> words = ReadWords(path);
  EXPECT_FALSE(words.empty()) << path << " is missing or empty";
  ReflectedModule m;
  std::string error;
  EXPECT_TRUE(ReflectSpirv(words.data(), words.size(), &m, &error)) << path << ": " << error;
  return m;
}

std::string Reject(const std::filesystem::path& path) {
  const std::vector<uint32_t> words = ReadWords(path);
  ReflectedModule m;
  std::string error;
  EXPECT_FALSE(ReflectSpirv(words.data(), words.size(), &m, &error)) << path << " was accepted";
  return error;
}

const std::filesystem::path kCorpus = std::filesystem::path(ACCEL_CONFORMANCE_CORPUS_DIR) / "spirv-vulkan";
const std::filesystem::path kShaders = ACCEL_VULKAN_TEST_SHADERS;

TEST(VulkanReflect, CorpusKernelsAreNamedByTheirEntryPoints) {
  for (const char* name : {"fill_u32", "copy_offset_u32", "vadd_f32", "reduce_u32", "atomic_add_u32"}) {
    const ReflectedModule m = Reflect(kCorpus / (std::string(name) + ".spv"));
    ASSERT_EQ(m.kernels.size(), 1u) << name;
    EXPECT_EQ(m.kernels[0].name, name) << "the corpus build names the entry point after the kernel";
  }
}

TEST(VulkanReflect, CopyOffsetDeclaresTheContract) {
  const ReflectedModule m = Reflect(kCorpus / "copy_offset_u32.spv");
  ASSERT_EQ(m.kernels.size(), 1u);
  const ReflectedKernel& k = m.kernels[0];
  ASSERT_EQ(k.arguments.size(), 5u);
  EXPECT_EQ(k.arguments[0].kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(k.arguments[0].access, ACCEL_ACCESS_READ) << "readonly";
  EXPECT_EQ(k.arguments[0].name, "src");
  EXPECT_EQ(k.arguments[1].access, ACCEL_ACCESS_WRITE) << "writeonly";
  EXPECT_EQ(k.arguments[1].binding, 1u);
  const char* scalars[] = {"src_offset", "dst_offset", "n"};
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(k.arguments[2 + i].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
    EXPECT_EQ(k.arguments[2 + i].size, 4u);
    EXPECT_EQ(k.arguments[2 + i].offset, 4 * i);
    EXPECT_EQ(k.arguments[2 + i].name, scalars[i]);
  }
  EXPECT_EQ(k.scalar_block, ScalarBlock::kPushConstants);
  EXPECT_EQ(k.scalar_block_size, 12u);
  EXPECT_EQ(k.storage_buffer_count, 2u);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(k.block_spec_id[d], static_cast<uint32_t>(d));
}

TEST(VulkanReflect, ReduceDeclaresLocalMemoryLastNamedAfterItsArray) {
  const ReflectedModule m = Reflect(kCorpus / "reduce_u32.spv");
  const ReflectedKernel& k = m.kernels[0];
  ASSERT_EQ(k.arguments.size(), 4u);
  EXPECT_EQ(k.arguments[0].name, "in_");
  EXPECT_EQ(k.arguments[2].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(k.arguments[3].kind, ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
  EXPECT_EQ(k.arguments[3].spec_id, 3u);
  EXPECT_EQ(k.arguments[3].name, "scratch");
  EXPECT_EQ(k.static_local_memory, 0u) << "the spec-sized array is not static";
}

TEST(VulkanReflect, AtomicAddBuffersAreReadAndReadWrite) {
  const ReflectedKernel k = Reflect(kCorpus / "atomic_add_u32.spv").kernels[0];
  EXPECT_EQ(k.arguments[0].access, ACCEL_ACCESS_READ);
  EXPECT_EQ(k.arguments[1].access, ACCEL_ACCESS_READ_WRITE);
}

TEST(VulkanReflect, FixedLocalSizeHasNoSpecializationConstants) {
  const ReflectedKernel k = Reflect(kShaders / "fixed_size.spv").kernels[0];
  EXPECT_EQ(k.local_size[0], 64u);
  EXPECT_EQ(k.local_size[1], 1u);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(k.block_spec_id[d], kNoSpecId);
}

TEST(VulkanReflect, PushConstantMembersKeepTheirStd430Offsets) {
  const ReflectedKernel k = Reflect(kShaders / "packing.spv").kernels[0];
  ASSERT_EQ(k.arguments.size(), 6u);
  const uint32_t offsets[] = {0, 4, 8, 16, 32};
  const uint32_t sizes[] = {4, 4, 8, 16, 4};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(k.arguments[1 + i].offset, offsets[i]) << k.arguments[1 + i].name;
    EXPECT_EQ(k.arguments[1 + i].size, sizes[i]) << k.arguments[1 + i].name;
  }
  EXPECT_EQ(k.scalar_block_size, 36u);
}

TEST(VulkanReflect, UniformBlockAfterTheStorageBuffersHoldsTheScalars) {
  const ReflectedKernel k = Reflect(kShaders / "uniform_scalars.spv").kernels[0];
  EXPECT_EQ(k.scalar_block, ScalarBlock::kUniformBuffer);
  EXPECT_EQ(k.uniform_binding, 1u);
  ASSERT_EQ(k.arguments.size(), 3u);
  EXPECT_EQ(k.arguments[1].name, "value");
  EXPECT_EQ(k.arguments[2].offset, 4u);
}

TEST(VulkanReflect, BufferReferenceIsADeviceAddress) {
  const ReflectedKernel k = Reflect(kShaders / "device_address.spv").kernels[0];
  ASSERT_EQ(k.arguments.size(), 2u);
  EXPECT_EQ(k.arguments[0].kind, ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS);
  EXPECT_EQ(k.arguments[0].size, 8u);
  EXPECT_EQ(k.arguments[1].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(k.arguments[1].offset, 8u);
}

TEST(VulkanReflect, LocalMemoryConstantsComeInIdOrder) {
  const ReflectedKernel k = Reflect(kShaders / "two_locals.spv").kernels[0];
  ASSERT_EQ(k.arguments.size(), 3u);
  EXPECT_EQ(k.arguments[1].spec_id, 3u);
  EXPECT_EQ(k.arguments[1].name, "first");
  EXPECT_EQ(k.arguments[2].spec_id, 4u);
  EXPECT_EQ(k.arguments[2].name, "second");
}

TEST(VulkanReflect, EachEntryPointDeclaresWhatItUses) {
  const ReflectedModule m = Reflect(kShaders / "multi.spv");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].name, "first");
  ASSERT_EQ(m.kernels[0].arguments.size(), 2u);
  EXPECT_EQ(m.kernels[0].arguments[0].access, ACCEL_ACCESS_WRITE);
  EXPECT_EQ(m.kernels[0].arguments[1].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(m.kernels[1].name, "second");
  ASSERT_EQ(m.kernels[1].arguments.size(), 2u);
  EXPECT_EQ(m.kernels[1].arguments[0].access, ACCEL_ACCESS_READ_WRITE);
  EXPECT_EQ(m.kernels[1].arguments[1].access, ACCEL_ACCESS_READ);
  EXPECT_EQ(m.kernels[1].scalar_block, ScalarBlock::kNone);
}

TEST(VulkanReflect, ImagesAreRefusedByName) {
  const std::string error = Reject(kShaders / "uses_image.spv");
  EXPECT_NE(error.find("storage image ('picture')"), std::string::npos) << error;
}

TEST(VulkanReflect, GarbageIsNotSpirv) {
  const uint32_t garbage[] = {0x12345678, 1, 2, 3, 4, 5};
  ReflectedModule m;
  std::string error;
  EXPECT_FALSE(ReflectSpirv(garbage, 6, &m, &error));
  EXPECT_NE(error.find("magic number"), std::string::npos) << error;
  std::vector<uint32_t> truncated = ReadWords(kCorpus / "fill_u32.spv");
  truncated.resize(truncated.size() / 2);
  EXPECT_FALSE(ReflectSpirv(truncated.data(), truncated.size(), &m, &error));
  EXPECT_NE(error.find("SPIR-V"), std::string::npos) << error;
}

}  // namespace
}  // namespace accel::vulkan
