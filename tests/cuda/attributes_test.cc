// The CUDA backend's attribute mapping (backends/cuda/attributes.h): recorded attribute tables of three parts, from
// their public specifications, to Accel's descriptor; SKU ids as the sim profiles spell them; NVLink links and
// cliques from NVML-like link tables. No driver needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "attributes.h"

namespace accel::cuda {
namespace {

// What cuDeviceGetAttribute and friends answer on each part. Memory: the total nvidia-smi shows (81559 MiB for the
// H100 80GB, 143771 MiB for the H200, 81920 MiB for the A100 80GB); SMs, L2 and boost clock from NVIDIA's datasheets
// and architecture white papers; PCI product ids from the PCI ID Repository (10de:2330, 10de:2335, 10de:20b2);
// shared memory per block with opt-in from the CUDA Programming Guide's table of compute capabilities (227 KB on
// 9.0, 163 KB on 8.0).
DeviceAttributes Hopper(const char* name, uint64_t memory, uint32_t l2, uint32_t product) {
  DeviceAttributes a;
  a.name = name;
  a.total_memory = memory;
  a.cc_major = 9;
  a.cc_minor = 0;
  a.multiprocessors = 132;
  a.clock_khz = 1980000;
  a.l2_bytes = l2;
  a.shared_per_block = 49152;
  a.shared_per_block_optin = 232448;
  a.max_threads_per_block = 1024;
  a.max_block[0] = 1024;
  a.max_block[1] = 1024;
  a.max_block[2] = 64;
  a.max_grid[0] = 2147483647;
  a.max_grid[1] = 65535;
  a.max_grid[2] = 65535;
  a.warp_size = 32;
  a.pci_domain = 0;
  a.pci_bus = 0x1b;
  a.pci_device = 0;
  a.pci_product = product;
  a.can_map_host_memory = true;
  a.unified_addressing = true;
  for (int i = 0; i < 16; ++i) a.uuid[i] = static_cast<uint8_t>(0xa0 + i);
  a.driver_version = 13000;
  return a;
}

DeviceAttributes H100Sxm() { return Hopper("NVIDIA H100 80GB HBM3", 85520809984ull, 52428800, 0x2330); }
DeviceAttributes H200Sxm() { return Hopper("NVIDIA H200", 150754820096ull, 62914560, 0x2335); }

DeviceAttributes A100Sxm80() {
  DeviceAttributes a = Hopper("NVIDIA A100-SXM4-80GB", 85899345920ull, 41943040, 0x20b2);
  a.cc_major = 8;
  a.multiprocessors = 108;
  a.clock_khz = 1410000;
  a.shared_per_block_optin = 166912;
  a.pci_bus = 0x07;
  return a;
}

constexpr accel_numeric_formats_t kHopperFormats = ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 |
                                                   ACCEL_NUMERIC_FORMAT_TF32 | ACCEL_NUMERIC_FORMAT_FP16 |
                                                   ACCEL_NUMERIC_FORMAT_BF16 | ACCEL_NUMERIC_FORMAT_FP8_E4M3 |
                                                   ACCEL_NUMERIC_FORMAT_FP8_E5M2 | ACCEL_NUMERIC_FORMAT_INT8;
constexpr accel_numeric_formats_t kAmpereFormats =
    ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_TF32 | ACCEL_NUMERIC_FORMAT_FP16 |
    ACCEL_NUMERIC_FORMAT_BF16 | ACCEL_NUMERIC_FORMAT_INT8 | ACCEL_NUMERIC_FORMAT_INT4;

TEST(CudaAttributes, H100SxmMatchesTheSimProfile) {
  // The figures backends/sim/profiles/h100-sxm-8.json gives the same part: a real H100 and a simulated one agree.
  const accel_device_capabilities_t c = Describe(H100Sxm());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_GPU);
  EXPECT_EQ(c.vendor_id, 0x10deu);
  EXPECT_EQ(c.device_id, 0x2330u);
  EXPECT_STREQ(c.sku, "nvidia-h100-sxm5-80gb");
  EXPECT_STREQ(c.architecture, "sm_90");
  EXPECT_STREQ(c.name, "NVIDIA H100 80GB HBM3");
  EXPECT_STREQ(c.vendor, "NVIDIA");
  EXPECT_EQ(c.memory_total, 85520809984ull);
  EXPECT_EQ(c.max_allocation, c.memory_total);
  EXPECT_EQ(c.max_buffer_range, c.memory_total);
  EXPECT_EQ(c.compute_units, 132u);
  EXPECT_EQ(c.clock_mhz, 1980u);
  EXPECT_EQ(c.local_memory_size, 232448u);
  EXPECT_EQ(c.subgroup_size, 32u);
  EXPECT_EQ(c.numeric_formats, kHopperFormats);
  EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_PTX | ACCEL_KERNEL_FORMAT_CUBIN);
  EXPECT_STREQ(c.pci_bus_id, "0000:1b:00.0");
  EXPECT_STREQ(c.driver_version, "13.0");
  EXPECT_EQ(c.numa_node, -1);
}

TEST(CudaAttributes, H200Sxm) {
  const accel_device_capabilities_t c = Describe(H200Sxm());
  EXPECT_EQ(c.device_id, 0x2335u);
  EXPECT_STREQ(c.sku, "nvidia-h200-sxm-141gb");
  EXPECT_STREQ(c.architecture, "sm_90");
  EXPECT_EQ(c.memory_total, 150754820096ull);
  EXPECT_EQ(c.compute_units, 132u);
  EXPECT_EQ(c.clock_mhz, 1980u);
  EXPECT_EQ(c.numeric_formats, kHopperFormats);
  EXPECT_EQ(c.max_work_group_size, 1024u);
  EXPECT_EQ(c.max_work_group_dims[0], 1024u);
  EXPECT_EQ(c.max_work_group_dims[2], 64u);
  EXPECT_EQ(c.max_grid_dims[0], 2147483647u);
  EXPECT_EQ(c.max_grid_dims[1], 65535u);
}

TEST(CudaAttributes, A100Sxm80MatchesTheSimProfilesFormats) {
  // backends/sim/profiles/a100-pcie-4.json lists the same formats for the A100: INT4 yes, FP8 no.
  const accel_device_capabilities_t c = Describe(A100Sxm80());
  EXPECT_EQ(c.device_id, 0x20b2u);
  EXPECT_STREQ(c.sku, "nvidia-a100-sxm4-80gb");
  EXPECT_STREQ(c.architecture, "sm_80");
  EXPECT_EQ(c.memory_total, 85899345920ull);
  EXPECT_EQ(c.compute_units, 108u);
  EXPECT_EQ(c.clock_mhz, 1410u);
  EXPECT_EQ(c.local_memory_size, 166912u);
  EXPECT_EQ(c.numeric_formats, kAmpereFormats);
  EXPECT_STREQ(c.pci_bus_id, "0000:07:00.0");
}

TEST(CudaAttributes, SkuTableAndFallback) {
  EXPECT_EQ(SkuOf(0x20f1, "NVIDIA A100-PCIE-40GB"), "nvidia-a100-pcie-40gb");  // the a100-pcie-4 profile's
  EXPECT_EQ(SkuOf(0x2330, "whatever the driver says"), "nvidia-h100-sxm5-80gb");
  EXPECT_EQ(SkuOf(0, "NVIDIA GeForce RTX 4090"), "nvidia-geforce-rtx-4090");
  EXPECT_EQ(SkuOf(0x1234, "Tesla V100-SXM2-16GB"), "nvidia-tesla-v100-sxm2-16gb");
  EXPECT_EQ(SkuOf(0, ""), "nvidia-unknown");
}

TEST(CudaAttributes, IdentityForTheMergeWithOtherBackends) {
  // The UUID is the GPU's own: unique, so the same chip through Vulkan or OpenCL (same UUID or PCI bus id) merges.
  accel_device_capabilities_t c = Describe(H100Sxm());
  EXPECT_NE(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u);
  EXPECT_EQ(c.uuid[0], 0xa0);
  EXPECT_EQ(c.uuid[15], 0xaf);
  EXPECT_EQ(c.flags & ACCEL_DEVICE_FLAG_SIMULATED, 0u);
  DeviceAttributes no_uuid = H100Sxm();
  no_uuid.uuid = {};
  c = Describe(no_uuid);
  EXPECT_EQ(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u) << "an all-zero UUID is no identity";
  EXPECT_EQ(PciBusId(0x10, 0xAB, 0x1F), "0010:ab:1f.0") << "lowercase hex, as the other backends report it";
  DeviceAttributes integrated = H100Sxm();
  integrated.integrated = true;
  EXPECT_STREQ(Describe(integrated).pci_bus_id, "") << "an integrated GPU (Jetson) has no PCI address";
}

TEST(CudaAttributes, FeaturesOnlyWhatWorks) {
  DeviceAttributes a = H100Sxm();
  accel_device_capabilities_t c = Describe(a);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_SUBGROUPS, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_ATOMICS_64, 0u);
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u) << "one device alone has no peer";
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_TIMELINE_EVENTS, 0u);
  a.can_access_a_peer = true;
  EXPECT_NE(Describe(a).features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u);
}

TEST(CudaAttributes, NumericFormatsByComputeCapability) {
  EXPECT_EQ(NumericFormatsOf(5, 2), ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32);
  EXPECT_NE(NumericFormatsOf(6, 1) & ACCEL_NUMERIC_FORMAT_INT8, 0u);
  EXPECT_EQ(NumericFormatsOf(7, 0) & ACCEL_NUMERIC_FORMAT_INT4, 0u);
  EXPECT_NE(NumericFormatsOf(7, 5) & ACCEL_NUMERIC_FORMAT_INT4, 0u);
  EXPECT_NE(NumericFormatsOf(8, 9) & ACCEL_NUMERIC_FORMAT_FP8_E4M3, 0u) << "Ada has FP8";
  EXPECT_NE(NumericFormatsOf(8, 9) & ACCEL_NUMERIC_FORMAT_INT4, 0u);
  EXPECT_EQ(NumericFormatsOf(9, 0) & ACCEL_NUMERIC_FORMAT_INT4, 0u) << "Hopper has no INT4 tensor cores";
  EXPECT_EQ(DriverVersionString(12080), "12.8");
  EXPECT_EQ(DriverVersionString(0), "");
}

// --- NVLink --------------------------------------------------------------------------------------------------------

std::vector<std::string> GpuIds(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back(PciBusId(0, 0x18 + 0x10 * static_cast<uint32_t>(i), 0));
  return ids;
}

TEST(CudaNvLink, NvSwitchNodeIsOneCliqueWithEighteenLinks) {
  // HGX H100: each GPU's 18 links go to 4 NVSwitches; nvidia-smi topo -m shows NV18 for every pair.
  const std::vector<std::string> ids = GpuIds(8);
  const std::vector<std::string> switches = {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};
  std::vector<std::vector<NvLinkEnd>> links(8);
  for (auto& l : links) {
    for (int k = 0; k < 18; ++k) l.push_back({switches[static_cast<size_t>(k) % switches.size()]});
  }
  const accel_device_link_t link = NvLinkBetween(links, ids, 2, 5, NvLinkGeneration(9), true);
  EXPECT_EQ(link.link_class, ACCEL_LINK_CLASS_FABRIC);
  EXPECT_EQ(link.link_count, 18u);
  EXPECT_EQ(link.bandwidth, 450000000000ull) << "the sim profile's 450 GB/s one way";
  EXPECT_STREQ(link.fabric, "nvlink4");
  EXPECT_EQ(link.peer_access, 1u);
  const std::vector<std::string> cliques = NvLinkCliques(links, ids);
  for (const std::string& c : cliques) EXPECT_EQ(c, "nvlink-" + ids[0]);
}

TEST(CudaNvLink, DirectLinksCountBothWaysAndLeaveOthersToThePciTree) {
  // Two pairs bridged directly (4 links each), no link between the pairs.
  const std::vector<std::string> ids = GpuIds(4);
  std::vector<std::vector<NvLinkEnd>> links(4);
  for (int k = 0; k < 4; ++k) {
    links[0].push_back({ids[1]});
    links[1].push_back({ids[0]});
    links[2].push_back({ids[3]});
  }
  accel_device_link_t l01 = NvLinkBetween(links, ids, 0, 1, NvLinkGeneration(8), true);
  EXPECT_EQ(l01.link_class, ACCEL_LINK_CLASS_FABRIC);
  EXPECT_EQ(l01.link_count, 4u);
  EXPECT_STREQ(l01.fabric, "nvlink3");
  EXPECT_EQ(NvLinkBetween(links, ids, 3, 2, "nvlink3", true).link_count, 4u) << "a link listed from one side only";
  const accel_device_link_t l02 = NvLinkBetween(links, ids, 0, 2, "nvlink3", false);
  EXPECT_EQ(l02.link_class, ACCEL_LINK_CLASS_UNKNOWN) << "no NVLink: the core classifies from the PCI tree";
  EXPECT_EQ(l02.peer_access, 0u);
  const std::vector<std::string> cliques = NvLinkCliques(links, ids);
  EXPECT_EQ(cliques[0], "nvlink-" + ids[0]);
  EXPECT_EQ(cliques[1], "nvlink-" + ids[0]);
  EXPECT_EQ(cliques[2], "nvlink-" + ids[2]);
  EXPECT_EQ(cliques[3], "nvlink-" + ids[2]);
}

TEST(CudaNvLink, WithoutNvmlEveryLinkIsLeftToThePciTree) {
  const std::vector<std::string> ids = GpuIds(2);
  const std::vector<std::vector<NvLinkEnd>> none(2);
  EXPECT_EQ(NvLinkBetween(none, ids, 0, 1, "nvlink4", true).link_class, ACCEL_LINK_CLASS_UNKNOWN);
  EXPECT_EQ(NvLinkBetween(none, ids, 0, 1, "nvlink4", true).peer_access, 1u) << "peer access is the driver's";
  EXPECT_EQ(NvLinkCliques(none, ids), std::vector<std::string>(2));
  EXPECT_EQ(NvLinkBetween({}, {}, 0, 1, "", false).link_class, ACCEL_LINK_CLASS_UNKNOWN);
}

}  // namespace
}  // namespace accel::cuda
