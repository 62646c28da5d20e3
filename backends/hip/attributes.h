// HIP device attributes -> Accel's descriptors, as pure functions over plain data (no runtime call), unit-tested in
// tests/hip/attributes_test.cc against recorded attribute tables of the AMD Instinct MI300X, MI250X (one GCD) and
// MI210 from AMD's public specifications: the capability descriptor (docs/capability-keys.md), the normalised SKU id
// (as the sim profiles spell it: "amd-instinct-mi300x"), the PCI bus id, the numeric formats of a gfx architecture,
// and the xGMI (Infinity Fabric) links and cliques hipExtGetLinkTypeAndHopCount gives (docs/topology.md).
#ifndef ACCEL_HIP_ATTRIBUTES_H_
#define ACCEL_HIP_ATTRIBUTES_H_

#include <accel_backend.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/descriptor_text.h"

namespace accel::hip {

inline constexpr uint32_t kAmdVendorId = 0x1002;
// hsa_amd_link_info_type_t's xGMI value, as hipExtGetLinkTypeAndHopCount reports a link type.
inline constexpr uint32_t kLinkTypeXgmi = 4;

// What the backend reads of one device (hipDeviceGetName, hipDeviceTotalMem, hipDeviceGetAttribute, hipDeviceGetUuid,
// hipDeviceProp_t's gcnArchName, hipRuntimeGetVersion, and the PCI product id from sysfs): plain data, so that the
// mapping is a pure function.
struct DeviceAttributes {
  std::string name;           // "AMD Instinct MI300X"
  std::string gcn_arch_name;  // "gfx942:sramecc+:xnack-" (target features after the first ':')
  uint64_t total_memory = 0;  // bytes
  uint32_t compute_units = 0;
  uint32_t clock_khz = 0;
  uint32_t l2_bytes = 0;
  uint32_t shared_per_block = 0;  // LDS bytes per work-group
  uint32_t max_threads_per_block = 0;
  uint32_t max_block[3] = {0, 0, 0};
  uint32_t max_grid[3] = {0, 0, 0};
  uint32_t warp_size = 0;  // the wavefront size: 64 on CDNA, 32 on RDNA
  uint32_t pci_domain = 0;
  uint32_t pci_bus = 0;
  uint32_t pci_device = 0;   // the slot on its bus (hipDeviceAttributePciDeviceId)
  uint32_t pci_product = 0;  // PCI device (product) id, 0x74a1; 0 unknown
  bool integrated = false;
  bool can_map_host_memory = false;
  bool unified_addressing = false;
  bool can_access_a_peer = false;  // hipDeviceCanAccessPeer answered 1 for another device of the backend
  std::array<uint8_t, 16> uuid{};  // hipDeviceGetUuid; all zero when the runtime has none
  int runtime_version = 0;         // hipRuntimeGetVersion: 60241134 is HIP 6.2
};

// "DDDD:BB:DD.0" in lowercase hex (HIP devices are function 0).
std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device);
// Lowercase letters and digits, every other run one '-' (common/descriptor_text.h).
using backend::NormaliseSku;
// The gfx architecture: gcnArchName up to its first ':' ("gfx942:sramecc+:xnack-" -> "gfx942"); "" when that is
// empty or not a gfx name (HIP's compute capability, 9.4 for gfx942 and 9.0 for both gfx908 and gfx90a, does not
// name one).
std::string ArchitectureOf(std::string_view gcn_arch_name);
// The normalised SKU id: "amd-" and the PCI ID Repository's name of the part for the products the table knows
// (0x74a1 "Instinct MI300X" -> "amd-instinct-mi300x"), else "amd-" and the normalised device name without a leading
// "AMD" ("AMD Instinct MI250X" -> "amd-instinct-mi250x"), else "amd-" and the architecture.
std::string SkuOf(uint32_t pci_product, std::string_view name, std::string_view architecture);
// The formats the architecture's arithmetic units handle natively (AMD's data sheets and the ISA guides): fp64, fp32,
// fp16 and int8 on every gfx9 and newer part; bf16 from gfx908 (CDNA) and on gfx11/gfx12; tf32 (XF32) on gfx940 to
// gfx942 (CDNA 3: MI300); fp8 e4m3 / e5m2 on gfx940 to gfx942 (the FNUZ variants) and gfx950, gfx12; int4 on gfx11.
// An unknown architecture gets fp64, fp32 and fp16.
accel_numeric_formats_t NumericFormatsOf(std::string_view architecture);
// "6.2" for 60241134 (HIP_VERSION: major * 10000000 + minor * 100000 + patch); "" for 0.
std::string RuntimeVersionString(int runtime_version);
// The whole descriptor but stable_id and backend_name (the core's).
accel_device_capabilities_t Describe(const DeviceAttributes& attributes);

// --- xGMI (Infinity Fabric) links, from hipExtGetLinkTypeAndHopCount --------------------------------------------

// What hipExtGetLinkTypeAndHopCount said about one ordered pair; `known` false when it failed or is missing.
struct LinkInfo {
  bool known = false;
  uint32_t type = 0;  // hsa_amd_link_info_type_t: 4 is xGMI
  uint32_t hops = 0;
};

// The one-way bandwidth of one xGMI link of the architecture in bytes per second (AMD data sheets: 64 GB/s on
// gfx942 (MI300X: 128 GB/s both ways), 50 GB/s on gfx90a (MI200: 100 GB/s both ways)), 0 unknown.
uint64_t XgmiBandwidthPerLink(std::string_view architecture);
// The link between two devices: FABRIC "xgmi" with one link when the pair is joined directly by xGMI (one hop) both
// ways as far as the runtime says, with the bandwidth of one link; UNKNOWN otherwise (the core derives the PCI
// class). `peer_access` is filled.
accel_device_link_t XgmiLinkBetween(const LinkInfo& ab, const LinkInfo& ba, std::string_view architecture,
                                    bool peer_access);
// The xGMI clique of each device: "xgmi-<lowest PCI bus id among the devices it reaches over xGMI>" for devices in a
// group of two or more, "" for the others. `links[a][b]` is the pair's LinkInfo.
std::vector<std::string> XgmiCliques(const std::vector<std::vector<LinkInfo>>& links,
                                     const std::vector<std::string>& pci_bus_ids);

}  // namespace accel::hip

#endif  // ACCEL_HIP_ATTRIBUTES_H_
