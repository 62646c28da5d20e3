// CUDA device attributes -> Accel's descriptors, as pure functions over plain data (no driver call), unit-tested in
// tests/cuda/attributes_test.cc against recorded attribute tables of the H100 SXM5, H200 SXM and A100 SXM4 80GB:
// the capability descriptor (docs/capability-keys.md), the normalised SKU id (the PCI ID Repository's name of the
// part, as the sim profiles spell it: "nvidia-h100-sxm5-80gb"), the PCI bus id, the numeric formats a compute
// capability has, and the NVLink links and cliques NVML's link table gives (docs/topology.md).
#ifndef ACCEL_CUDA_ATTRIBUTES_H_
#define ACCEL_CUDA_ATTRIBUTES_H_

#include <accel_backend.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/descriptor_text.h"

namespace accel::cuda {

inline constexpr uint32_t kNvidiaVendorId = 0x10de;

// What the backend reads of one device (cuDeviceGetName, cuDeviceTotalMem, cuDeviceGetAttribute, cuDeviceGetUuid,
// cuDriverGetVersion, and the PCI product id from sysfs): plain data, so that the mapping is a pure function.
struct DeviceAttributes {
  std::string name;           // "NVIDIA H100 80GB HBM3"
  uint64_t total_memory = 0;  // bytes
  int cc_major = 0;
  int cc_minor = 0;
  uint32_t multiprocessors = 0;
  uint32_t clock_khz = 0;
  uint32_t l2_bytes = 0;
  uint32_t shared_per_block = 0;        // bytes without opt-in
  uint32_t shared_per_block_optin = 0;  // bytes with cuFuncSetAttribute's opt-in
  uint32_t max_threads_per_block = 0;
  uint32_t max_block[3] = {0, 0, 0};
  uint32_t max_grid[3] = {0, 0, 0};
  uint32_t warp_size = 0;
  uint32_t pci_domain = 0;
  uint32_t pci_bus = 0;
  uint32_t pci_device = 0;   // the slot on its bus (CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
  uint32_t pci_product = 0;  // PCI device (product) id, 0x2330; 0 unknown
  bool integrated = false;
  bool can_map_host_memory = false;
  bool unified_addressing = false;
  bool can_access_a_peer = false;  // cuDeviceCanAccessPeer answered 1 for another device of the backend
  std::array<uint8_t, 16> uuid{};
  int driver_version = 0;  // cuDriverGetVersion: 12080 is CUDA 12.8
};

// "DDDD:BB:DD.0" in lowercase hex (CUDA devices are function 0).
std::string PciBusId(uint32_t domain, uint32_t bus, uint32_t device);
// Lowercase letters and digits, every other run one '-' (common/descriptor_text.h).
using backend::NormaliseSku;
// The normalised SKU id: "nvidia-" and the PCI ID Repository's name of the part for the products the table knows
// (0x2330 "H100 SXM5 80GB" -> "nvidia-h100-sxm5-80gb"), else "nvidia-" and the normalised device name without a
// leading "NVIDIA" ("NVIDIA GeForce RTX 4090" -> "nvidia-geforce-rtx-4090").
std::string SkuOf(uint32_t pci_product, std::string_view name);
// "sm_90".
std::string ArchitectureOf(int cc_major, int cc_minor);
// The formats the compute capability's arithmetic units handle natively: fp64 and fp32 always; fp16 from 5.3; int8
// from 6.1; tf32 and bf16 from 8.0; int4 (tensor cores) from 7.5 to 8.9; fp8 e4m3 / e5m2 from 8.9.
accel_numeric_formats_t NumericFormatsOf(int cc_major, int cc_minor);
// "13.0" for 13000.
std::string DriverVersionString(int driver_version);
// The whole descriptor but stable_id and backend_name (the core's).
accel_device_capabilities_t Describe(const DeviceAttributes& attributes);

// --- NVLink (from NVML's per-link state and remote PCI address) ----------------------------------------------------

// One active NVLink of a device, by the PCI bus id at its other end ("0000:0a:00.0"): a GPU's, or an NVSwitch's.
struct NvLinkEnd {
  std::string remote_pci_bus_id;
};

// The NVLink generation a compute capability's parts have ("nvlink2" for 7.x, "nvlink3" 8.x, "nvlink4" 9.x,
// "nvlink5" 10.x), "" unknown; and the one-way bandwidth of one link of it in bytes per second (25 GB/s for
// generations 2 to 4, 50 GB/s for 5), 0 unknown.
std::string NvLinkGeneration(int cc_major);
uint64_t NvLinkBandwidthPerLink(std::string_view generation);

// The link between devices `a` and `b` of `links` (each device's active links, devices by index; `pci_bus_ids` each
// device's own bus id): FABRIC with the number of links that end at the other device, or, where both devices have
// links to something that is not one of the backend's GPUs (an NVSwitch), FABRIC with the smaller of their counts of
// such links; UNKNOWN otherwise (the core derives the PCI class). `peer_access` and `bandwidth` are filled
// (bandwidth = link count x the generation's per-link rate).
accel_device_link_t NvLinkBetween(const std::vector<std::vector<NvLinkEnd>>& links,
                                  const std::vector<std::string>& pci_bus_ids, size_t a, size_t b,
                                  std::string_view generation, bool peer_access);
// The NVLink clique of each device: "nvlink-<lowest PCI bus id among the devices it reaches over NVLink>" for
// devices in a group of two or more, "" for the others.
std::vector<std::string> NvLinkCliques(const std::vector<std::vector<NvLinkEnd>>& links,
                                       const std::vector<std::string>& pci_bus_ids);

}  // namespace accel::cuda

#endif  // ACCEL_CUDA_ATTRIBUTES_H_
