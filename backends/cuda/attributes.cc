// CUDA device attributes -> Accel's descriptors (attributes.h): pure functions, no driver call.
#include "attributes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace accel::cuda {

using backend::CopyString;

namespace {

int Capability(int major, int minor) { return major * 10 + minor; }

// The PCI ID Repository's names (pci-ids.ucw.cz, vendor 10de) of the data-centre parts, by product id.
struct KnownPart {
  uint32_t product;
  const char* name;
};
constexpr KnownPart kKnownParts[] = {
    {0x20b0, "A100 SXM4 40GB"}, {0x20b2, "A100 SXM4 80GB"},
    {0x20b5, "A100 PCIe 80GB"}, {0x20f1, "A100 PCIe 40GB"},
    {0x2321, "H100 NVL"},       {0x2330, "H100 SXM5 80GB"},
    {0x2331, "H100 PCIe"},      {0x2335, "H200 SXM 141GB"},
    {0x233b, "H200 NVL"},       {0x26b5, "L40"},
    {0x26b9, "L40S"},           {0x27b8, "L4"},
};

}  // namespace

std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.0", domain & 0xffffu, bus & 0xffu, device & 0x1fu);
  return text;
}

std::string SkuOf(uint32_t pci_product, std::string_view name) {
  for (const KnownPart& part : kKnownParts) {
    if (part.product == pci_product) return "nvidia-" + NormaliseSku(part.name);
  }
  std::string rest = NormaliseSku(name);
  if (rest.rfind("nvidia-", 0) == 0) rest.erase(0, 7);
  if (rest == "nvidia" || rest.empty()) return "nvidia-unknown";
  return "nvidia-" + rest;
}

std::string ArchitectureOf(int cc_major, int cc_minor) {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

accel_numeric_formats_t NumericFormatsOf(int cc_major, int cc_minor) {
  const int cc = Capability(cc_major, cc_minor);
  accel_numeric_formats_t formats = ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32;
  if (cc >= 53) formats |= ACCEL_NUMERIC_FORMAT_FP16;
  if (cc >= 61) formats |= ACCEL_NUMERIC_FORMAT_INT8;
  if (cc >= 80) formats |= ACCEL_NUMERIC_FORMAT_TF32 | ACCEL_NUMERIC_FORMAT_BF16;
  if (cc >= 75 && cc < 90) formats |= ACCEL_NUMERIC_FORMAT_INT4;
  if (cc >= 89) formats |= ACCEL_NUMERIC_FORMAT_FP8_E4M3 | ACCEL_NUMERIC_FORMAT_FP8_E5M2;
  return formats;
}

std::string DriverVersionString(int driver_version) {
  if (driver_version <= 0) return std::string();
  return std::to_string(driver_version / 1000) + "." + std::to_string((driver_version % 1000) / 10);
}

accel_device_capabilities_t Describe(const DeviceAttributes& a) {
  accel_device_capabilities_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  c.struct_size = sizeof(c);
  c.kind = ACCEL_DEVICE_KIND_GPU;
  c.vendor_id = kNvidiaVendorId;
  c.device_id = a.pci_product;
  // cuDeviceGetUuid's UUID is the GPU's own (nvidia-smi's GPU-<uuid>): unique across machines when it is set.
  static const std::array<uint8_t, 16> kZero{};
  if (a.uuid != kZero) {
    c.flags |= ACCEL_DEVICE_FLAG_UUID_UNIQUE;
    std::memcpy(c.uuid, a.uuid.data(), sizeof(c.uuid));
  }
  c.memory_total = a.total_memory;
  c.max_allocation = a.total_memory;
  c.max_buffer_range = a.total_memory;
  c.local_memory_size = std::max(a.shared_per_block_optin, a.shared_per_block);
  c.numeric_formats = NumericFormatsOf(a.cc_major, a.cc_minor);
  c.kernel_formats = ACCEL_KERNEL_FORMAT_PTX | ACCEL_KERNEL_FORMAT_CUBIN;
  c.features = ACCEL_DEVICE_FEATURE_EVENT_TIMING | ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES;
  if (a.warp_size != 0) c.features |= ACCEL_DEVICE_FEATURE_SUBGROUPS;
  if (Capability(a.cc_major, a.cc_minor) >= 60) c.features |= ACCEL_DEVICE_FEATURE_ATOMICS_64;
  if (a.unified_addressing) c.features |= ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY;
  if (a.can_map_host_memory) c.features |= ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  if (a.can_access_a_peer) c.features |= ACCEL_DEVICE_FEATURE_PEER_ACCESS;
  c.compute_units = a.multiprocessors;
  c.clock_mhz = a.clock_khz / 1000;
  c.max_work_group_size = a.max_threads_per_block;
  for (int d = 0; d < 3; ++d) {
    c.max_work_group_dims[d] = std::min(a.max_block[d], a.max_threads_per_block);
    c.max_grid_dims[d] = a.max_grid[d];
  }
  c.max_argument_size = 4096;  // the kernel parameter space every CUDA 12 device has
  c.subgroup_size = a.warp_size;
  c.numa_node = -1;
  CopyString(c.name, sizeof(c.name), a.name);
  CopyString(c.vendor, sizeof(c.vendor), "NVIDIA");
  CopyString(c.architecture, sizeof(c.architecture), ArchitectureOf(a.cc_major, a.cc_minor));
  CopyString(c.sku, sizeof(c.sku), SkuOf(a.pci_product, a.name));
  CopyString(c.driver_version, sizeof(c.driver_version), DriverVersionString(a.driver_version));
  if (!a.integrated) CopyString(c.pci_bus_id, sizeof(c.pci_bus_id), PciBusId(a.pci_domain, a.pci_bus, a.pci_device));
  return c;
}

// --- NVLink ---------------------------------------------------------------------------------------------------

std::string NvLinkGeneration(int cc_major) {
  switch (cc_major) {
    case 6: return "nvlink1";
    case 7: return "nvlink2";
    case 8: return "nvlink3";
    case 9: return "nvlink4";
    case 10: return "nvlink5";
    default: return std::string();
  }
}

uint64_t NvLinkBandwidthPerLink(std::string_view generation) {
  if (generation == "nvlink1") return 20000000000ull;
  if (generation == "nvlink2" || generation == "nvlink3" || generation == "nvlink4") return 25000000000ull;
  if (generation == "nvlink5") return 50000000000ull;
  return 0;
}

namespace {

// Links of device `a` ending at device `b`, and links of `a` ending at something that is not one of the devices.
uint32_t DirectLinks(const std::vector<std::vector<NvLinkEnd>>& links, const std::vector<std::string>& ids, size_t a,
                     size_t b) {
  uint32_t count = 0;
  for (const NvLinkEnd& end : links[a]) count += end.remote_pci_bus_id == ids[b] ? 1 : 0;
  return count;
}

uint32_t SwitchLinks(const std::vector<std::vector<NvLinkEnd>>& links, const std::vector<std::string>& ids, size_t a) {
  uint32_t count = 0;
  for (const NvLinkEnd& end : links[a]) {
    if (std::find(ids.begin(), ids.end(), end.remote_pci_bus_id) == ids.end()) ++count;
  }
  return count;
}

}  // namespace

accel_device_link_t NvLinkBetween(const std::vector<std::vector<NvLinkEnd>>& links,
                                  const std::vector<std::string>& pci_bus_ids, size_t a, size_t b,
                                  std::string_view generation, bool peer_access) {
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  link.link_class = ACCEL_LINK_CLASS_UNKNOWN;
  link.peer_access = peer_access ? 1 : 0;
  if (a >= links.size() || b >= links.size() || a >= pci_bus_ids.size() || b >= pci_bus_ids.size()) return link;
  // Count both ways and take the larger: NVML may list a link from one side only.
  uint32_t count = std::max(DirectLinks(links, pci_bus_ids, a, b), DirectLinks(links, pci_bus_ids, b, a));
  if (count == 0) count = std::min(SwitchLinks(links, pci_bus_ids, a), SwitchLinks(links, pci_bus_ids, b));
  if (count == 0) return link;
  link.link_class = ACCEL_LINK_CLASS_FABRIC;
  link.link_count = count;
  link.bandwidth = count * NvLinkBandwidthPerLink(generation);
  CopyString(link.fabric, sizeof(link.fabric), generation);
  return link;
}

std::vector<std::string> NvLinkCliques(const std::vector<std::vector<NvLinkEnd>>& links,
                                       const std::vector<std::string>& pci_bus_ids) {
  const size_t n = std::min(links.size(), pci_bus_ids.size());
  std::vector<size_t> group(n);
  for (size_t i = 0; i < n; ++i) group[i] = i;
  const auto find = [&](size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      if (NvLinkBetween(links, pci_bus_ids, a, b, "", false).link_class == ACCEL_LINK_CLASS_FABRIC) {
        group[find(a)] = find(b);
      }
    }
  }
  std::map<size_t, std::set<std::string>> members;
  for (size_t i = 0; i < n; ++i) members[find(i)].insert(pci_bus_ids[i]);
  std::vector<std::string> cliques(pci_bus_ids.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& m = members[find(i)];
    if (m.size() >= 2) cliques[i] = "nvlink-" + *m.begin();
  }
  return cliques;
}

}  // namespace accel::cuda
