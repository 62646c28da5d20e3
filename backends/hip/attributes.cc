// HIP device attributes -> Accel's descriptors (attributes.h): pure functions, no runtime call.
#include "attributes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace accel::hip {

using backend::CopyString;

namespace {

// The PCI ID Repository's names (pci-ids.ucw.cz, vendor 1002) of data-centre parts whose product id names one part.
// (0x740c is shared by the MI250X and the MI250: their SKU comes from the device name.)
struct KnownPart {
  uint32_t product;
  const char* name;
};
constexpr KnownPart kKnownParts[] = {
    {0x738c, "Instinct MI100"},
    {0x740f, "Instinct MI210"},
    {0x74a0, "Instinct MI300A"},
    {0x74a1, "Instinct MI300X"},
};

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.0", domain & 0xffffu, bus & 0xffu, device & 0x1fu);
  return text;
}

std::string ArchitectureOf(std::string_view gcn_arch_name) {
  const std::string_view base = gcn_arch_name.substr(0, gcn_arch_name.find(':'));
  if (StartsWith(base, "gfx") && base.size() > 3) return std::string(base);
  return std::string();
}

std::string SkuOf(uint32_t pci_product, std::string_view name, std::string_view architecture) {
  for (const KnownPart& part : kKnownParts) {
    if (part.product == pci_product) return "amd-" + NormaliseSku(part.name);
  }
  std::string rest = NormaliseSku(name);
  if (StartsWith(rest, "amd-")) rest.erase(0, 4);
  if (rest == "amd") rest.clear();
  // ROCm 5 may name a device by its architecture only ("gfx90a"): no better than the architecture.
  if (!rest.empty() && !StartsWith(rest, "gfx")) return "amd-" + rest;
  if (!architecture.empty()) return "amd-" + NormaliseSku(architecture);
  return "amd-unknown";
}

accel_numeric_formats_t NumericFormatsOf(std::string_view arch) {
  accel_numeric_formats_t formats = ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_FP16;
  if (!StartsWith(arch, "gfx") || arch.size() < 6) return formats;
  const std::string_view family = arch.substr(3, arch.size() - 5);  // "9", "10", "11", "12"
  const std::string_view model = arch.substr(arch.size() - 2);      // "42", "0a"
  const bool gfx9 = family == "9";
  const bool cdna =
      gfx9 && (model == "08" || model == "0a" || model == "40" || model == "41" || model == "42" || model == "50");
  const bool cdna3 = gfx9 && (model == "40" || model == "41" || model == "42");
  if (gfx9 || family == "10" || family == "11" || family == "12") formats |= ACCEL_NUMERIC_FORMAT_INT8;
  if (cdna || family == "11" || family == "12") formats |= ACCEL_NUMERIC_FORMAT_BF16;
  if (cdna3) formats |= ACCEL_NUMERIC_FORMAT_TF32;
  if (cdna3 || (gfx9 && model == "50") || family == "12") {
    formats |= ACCEL_NUMERIC_FORMAT_FP8_E4M3 | ACCEL_NUMERIC_FORMAT_FP8_E5M2;
  }
  if (family == "11") formats |= ACCEL_NUMERIC_FORMAT_INT4;
  return formats;
}

std::string RuntimeVersionString(int v) {
  if (v <= 0) return std::string();
  return std::to_string(v / 10000000) + "." + std::to_string((v / 100000) % 100);
}

accel_device_capabilities_t Describe(const DeviceAttributes& a) {
  accel_device_capabilities_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  c.struct_size = sizeof(c);
  c.kind = ACCEL_DEVICE_KIND_GPU;
  c.vendor_id = kAmdVendorId;
  c.device_id = a.pci_product;
  // hipDeviceGetUuid's UUID is the GPU's own unique id (rocm-smi's "Unique ID"): unique across machines when set.
  static const std::array<uint8_t, 16> kZero{};
  if (a.uuid != kZero) {
    c.flags |= ACCEL_DEVICE_FLAG_UUID_UNIQUE;
    std::memcpy(c.uuid, a.uuid.data(), sizeof(c.uuid));
  }
  const std::string arch = ArchitectureOf(a.gcn_arch_name);
  c.memory_total = a.total_memory;
  c.max_allocation = a.total_memory;
  c.max_buffer_range = a.total_memory;
  c.local_memory_size = a.shared_per_block;
  c.numeric_formats = NumericFormatsOf(arch);
  c.kernel_formats = ACCEL_KERNEL_FORMAT_HSACO;
  c.features = ACCEL_DEVICE_FEATURE_EVENT_TIMING | ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES |
               ACCEL_DEVICE_FEATURE_ATOMICS_64;  // every gfx9+ part has 64-bit global atomics
  if (a.warp_size != 0) c.features |= ACCEL_DEVICE_FEATURE_SUBGROUPS;
  if (a.unified_addressing) c.features |= ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY;
  if (a.can_map_host_memory) c.features |= ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  if (a.can_access_a_peer) c.features |= ACCEL_DEVICE_FEATURE_PEER_ACCESS;
  c.compute_units = a.compute_units;
  c.clock_mhz = a.clock_khz / 1000;
  c.max_work_group_size = a.max_threads_per_block;
  for (int d = 0; d < 3; ++d) {
    c.max_work_group_dims[d] = std::min(a.max_block[d], a.max_threads_per_block);
    c.max_grid_dims[d] = a.max_grid[d];
  }
  c.max_argument_size = 4096;  // the kernarg segment HIP guarantees (CUDA's 4 KiB parameter limit)
  c.subgroup_size = a.warp_size;
  c.numa_node = -1;
  CopyString(c.name, sizeof(c.name), a.name);
  CopyString(c.vendor, sizeof(c.vendor), "AMD");
  CopyString(c.architecture, sizeof(c.architecture), arch);
  CopyString(c.sku, sizeof(c.sku), SkuOf(a.pci_product, a.name, arch));
  CopyString(c.driver_version, sizeof(c.driver_version), RuntimeVersionString(a.runtime_version));
  if (!a.integrated) CopyString(c.pci_bus_id, sizeof(c.pci_bus_id), PciBusId(a.pci_domain, a.pci_bus, a.pci_device));
  return c;
}

// --- xGMI ------------------------------------------------------------------------------------------------------

uint64_t XgmiBandwidthPerLink(std::string_view architecture) {
  const std::string_view base = architecture.substr(0, architecture.find(':'));
  if (base == "gfx940" || base == "gfx941" || base == "gfx942") return 64000000000ull;
  if (base == "gfx90a") return 50000000000ull;
  return 0;
}

namespace {

bool DirectXgmi(const LinkInfo& l) { return l.known && l.type == kLinkTypeXgmi && l.hops == 1; }

}  // namespace

accel_device_link_t XgmiLinkBetween(const LinkInfo& ab, const LinkInfo& ba, std::string_view architecture,
                                    bool peer_access) {
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  link.link_class = ACCEL_LINK_CLASS_UNKNOWN;
  link.peer_access = peer_access ? 1 : 0;
  // Either direction suffices (a runtime may answer one side only), but neither may contradict it.
  const bool xgmi =
      (DirectXgmi(ab) || DirectXgmi(ba)) && !(ab.known && !DirectXgmi(ab)) && !(ba.known && !DirectXgmi(ba));
  if (!xgmi) return link;
  link.link_class = ACCEL_LINK_CLASS_FABRIC;
  link.link_count = 1;
  link.bandwidth = XgmiBandwidthPerLink(architecture);
  CopyString(link.fabric, sizeof(link.fabric), "xgmi");
  return link;
}

std::vector<std::string> XgmiCliques(const std::vector<std::vector<LinkInfo>>& links,
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
      if (b >= links[a].size() || a >= links[b].size()) continue;
      if (XgmiLinkBetween(links[a][b], links[b][a], "", false).link_class == ACCEL_LINK_CLASS_FABRIC) {
        group[find(a)] = find(b);
      }
    }
  }
  std::map<size_t, std::set<std::string>> members;
  for (size_t i = 0; i < n; ++i) members[find(i)].insert(pci_bus_ids[i]);
  std::vector<std::string> cliques(pci_bus_ids.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& m = members[find(i)];
    if (m.size() >= 2) cliques[i] = "xgmi-" + *m.begin();
  }
  return cliques;
}

}  // namespace accel::hip
