// The HIP backend's attribute mapping (backends/hip/attributes.h): recorded attribute tables of three parts, from
// AMD's public specifications, to Accel's descriptor; SKU ids as the sim profiles spell them; xGMI links and cliques.
// No runtime needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "attributes.h"

namespace accel::hip {
namespace {

// What hipDeviceGetAttribute and friends answer on each part (one device per GCD on the MI250X). Memory, compute
// units and peak engine clock from AMD's data sheets (MI300X: 192 GB HBM3, 304 CUs, 2100 MHz; MI250X: 128 GB HBM2e
// and 220 CUs over two GCDs, so 64 GiB and 110 CUs per device, 1700 MHz; MI210: 64 GB, 104 CUs, 1700 MHz); L2 from
// the CDNA 2 and CDNA 3 white papers (8 MiB per MI200 GCD; 4 MiB per MI300X XCD, which HIP reports); LDS (64 KiB),
// wavefront (64) and work-group limits (1024) from ROCm's GPU hardware specifications; gcnArchName as ROCm reports
// it; PCI product ids from the PCI ID Repository (1002:74a1, 1002:740c, 1002:740f).
DeviceAttributes Instinct(const char* name, const char* arch, uint64_t memory, uint32_t cus, uint32_t clock_khz,
                          uint32_t l2, uint32_t product) {
  DeviceAttributes a;
  a.name = name;
  a.gcn_arch_name = arch;
  a.total_memory = memory;
  a.compute_units = cus;
  a.clock_khz = clock_khz;
  a.l2_bytes = l2;
  a.shared_per_block = 65536;
  a.max_threads_per_block = 1024;
  a.max_block[0] = a.max_block[1] = a.max_block[2] = 1024;
  a.max_grid[0] = 2147483647;
  a.max_grid[1] = a.max_grid[2] = 65536;
  a.warp_size = 64;
  a.pci_domain = 0;
  a.pci_bus = 0x05;
  a.pci_device = 0;
  a.pci_product = product;
  a.can_map_host_memory = true;
  a.unified_addressing = true;
  for (int i = 0; i < 16; ++i) a.uuid[i] = static_cast<uint8_t>(0x30 + i);
  a.runtime_version = 60241134;  // HIP 6.2
  return a;
}

DeviceAttributes Mi300x() {
  return Instinct("AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 206158430208ull, 304, 2100000, 4u << 20, 0x74a1);
}
DeviceAttributes Mi250x() {
  return Instinct("AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 68719476736ull, 110, 1700000, 8u << 20, 0x740c);
}
DeviceAttributes Mi210() {
  return Instinct("AMD Instinct MI210", "gfx90a:sramecc+:xnack-", 68719476736ull, 104, 1700000, 8u << 20, 0x740f);
}

TEST(HipAttributes, Mi300xDescriptor) {
  const accel_device_capabilities_t c = Describe(Mi300x());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_GPU);
  EXPECT_STREQ(c.name, "AMD Instinct MI300X");
  EXPECT_STREQ(c.vendor, "AMD");
  EXPECT_EQ(c.vendor_id, 0x1002u);
  EXPECT_EQ(c.device_id, 0x74a1u);
  EXPECT_STREQ(c.architecture, "gfx942");
  EXPECT_STREQ(c.sku, "amd-instinct-mi300x");
  EXPECT_STREQ(c.driver_version, "6.2");
  EXPECT_STREQ(c.pci_bus_id, "0000:05:00.0");
  EXPECT_EQ(c.memory_total, 206158430208ull);
  EXPECT_EQ(c.max_allocation, 206158430208ull);
  EXPECT_EQ(c.compute_units, 304u);
  EXPECT_EQ(c.clock_mhz, 2100u);
  EXPECT_EQ(c.local_memory_size, 65536u);
  EXPECT_EQ(c.subgroup_size, 64u);
  EXPECT_EQ(c.max_work_group_size, 1024u);
  EXPECT_EQ(c.max_work_group_dims[2], 1024u);
  EXPECT_EQ(c.max_grid_dims[0], 2147483647u);
  EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_HSACO);
  // The sim profile mi300x-8 lists the same formats (docs/sim-profiles.md).
  EXPECT_EQ(c.numeric_formats, ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_TF32 |
                                   ACCEL_NUMERIC_FORMAT_FP16 | ACCEL_NUMERIC_FORMAT_BF16 |
                                   ACCEL_NUMERIC_FORMAT_FP8_E4M3 | ACCEL_NUMERIC_FORMAT_FP8_E5M2 |
                                   ACCEL_NUMERIC_FORMAT_INT8);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_EVENT_TIMING, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_ATOMICS_64, 0u);
  EXPECT_NE(c.features & ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY, 0u);
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS, 0u);  // no peer among the backend's devices
  EXPECT_NE(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u);
  EXPECT_EQ(c.uuid[0], 0x30);
  EXPECT_EQ(c.numa_node, -1);
}

TEST(HipAttributes, Mi250xAndMi210Descriptors) {
  const accel_device_capabilities_t x = Describe(Mi250x());
  EXPECT_STREQ(x.architecture, "gfx90a");
  EXPECT_STREQ(x.sku, "amd-instinct-mi250x");  // 740c is shared with the MI250: the name decides
  EXPECT_EQ(x.compute_units, 110u);
  EXPECT_EQ(x.memory_total, 68719476736ull);
  const accel_numeric_formats_t cdna2 = ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 |
                                        ACCEL_NUMERIC_FORMAT_FP16 | ACCEL_NUMERIC_FORMAT_BF16 |
                                        ACCEL_NUMERIC_FORMAT_INT8;
  EXPECT_EQ(x.numeric_formats, cdna2);
  const accel_device_capabilities_t m = Describe(Mi210());
  EXPECT_STREQ(m.sku, "amd-instinct-mi210");  // as the sim profile mixed-vendor spells it
  EXPECT_EQ(m.device_id, 0x740fu);
  EXPECT_EQ(m.compute_units, 104u);
  EXPECT_EQ(m.clock_mhz, 1700u);
  EXPECT_EQ(m.numeric_formats, cdna2);
}

TEST(HipAttributes, SkuFallsBackToTheNameThenTheArchitecture) {
  EXPECT_EQ(SkuOf(0x74a1, "whatever", "gfx942"), "amd-instinct-mi300x");
  EXPECT_EQ(SkuOf(0, "AMD Radeon PRO W7900", "gfx1100"), "amd-radeon-pro-w7900");
  EXPECT_EQ(SkuOf(0, "gfx90a", "gfx90a"), "amd-gfx90a");  // ROCm 5 may name a device by its architecture
  EXPECT_EQ(SkuOf(0, "", "gfx908"), "amd-gfx908");
  EXPECT_EQ(SkuOf(0, "", ""), "amd-unknown");
}

TEST(HipAttributes, ArchitectureAndFormats) {
  EXPECT_EQ(ArchitectureOf("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(ArchitectureOf("gfx1100"), "gfx1100");
  EXPECT_EQ(ArchitectureOf(""), "");
  EXPECT_EQ(ArchitectureOf("Fiji"), "");
  EXPECT_EQ(NumericFormatsOf("gfx906"), ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 |
                                            ACCEL_NUMERIC_FORMAT_FP16 | ACCEL_NUMERIC_FORMAT_INT8);
  EXPECT_NE(NumericFormatsOf("gfx908") & ACCEL_NUMERIC_FORMAT_BF16, 0u);
  EXPECT_EQ(NumericFormatsOf("gfx950") & ACCEL_NUMERIC_FORMAT_TF32, 0u);  // CDNA 4 dropped XF32
  EXPECT_NE(NumericFormatsOf("gfx950") & ACCEL_NUMERIC_FORMAT_FP8_E4M3, 0u);
  EXPECT_NE(NumericFormatsOf("gfx1100") & ACCEL_NUMERIC_FORMAT_INT4, 0u);
  EXPECT_EQ(NumericFormatsOf(""), ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_FP16);
  EXPECT_EQ(RuntimeVersionString(50231116), "5.2");
  EXPECT_EQ(RuntimeVersionString(0), "");
}

TEST(HipAttributes, IntegratedGpusHaveNoPciBusIdAndNoUuidMeansNotUnique) {
  DeviceAttributes a = Mi300x();
  a.integrated = true;
  a.uuid = {};
  const accel_device_capabilities_t c = Describe(a);
  EXPECT_STREQ(c.pci_bus_id, "");
  EXPECT_EQ(c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE, 0u);
}

TEST(HipXgmi, DirectLinksAreFabricOthersAreLeftToThePciTree) {
  const LinkInfo xgmi{true, kLinkTypeXgmi, 1};
  const LinkInfo pcie{true, 2, 2};
  const LinkInfo unknown{};
  const accel_device_link_t link = XgmiLinkBetween(xgmi, xgmi, "gfx942", true);
  EXPECT_EQ(link.link_class, ACCEL_LINK_CLASS_FABRIC);
  EXPECT_EQ(link.link_count, 1u);
  EXPECT_EQ(link.bandwidth, 64000000000ull);
  EXPECT_STREQ(link.fabric, "xgmi");
  EXPECT_EQ(link.peer_access, 1u);
  EXPECT_EQ(XgmiLinkBetween(xgmi, unknown, "gfx90a", false).bandwidth, 50000000000ull);
  EXPECT_EQ(XgmiLinkBetween(pcie, pcie, "gfx942", true).link_class, ACCEL_LINK_CLASS_UNKNOWN);
  EXPECT_EQ(XgmiLinkBetween(xgmi, pcie, "gfx942", true).link_class, ACCEL_LINK_CLASS_UNKNOWN);
  EXPECT_EQ(XgmiLinkBetween(LinkInfo{true, kLinkTypeXgmi, 2}, unknown, "gfx942", true).link_class,
            ACCEL_LINK_CLASS_UNKNOWN);
}

TEST(HipXgmi, CliquesGroupDevicesJoinedByXgmi) {
  const LinkInfo x{true, kLinkTypeXgmi, 1};
  const LinkInfo p{true, 2, 2};
  // Devices 0-1 joined, 2 alone (PCIe only).
  const std::vector<std::vector<LinkInfo>> links = {{{}, x, p}, {x, {}, p}, {p, p, {}}};
  const std::vector<std::string> ids = {"0000:1b:00.0", "0000:05:00.0", "0000:c0:00.0"};
  const std::vector<std::string> cliques = XgmiCliques(links, ids);
  EXPECT_EQ(cliques, (std::vector<std::string>{"xgmi-0000:05:00.0", "xgmi-0000:05:00.0", ""}));
}

}  // namespace
}  // namespace accel::hip
