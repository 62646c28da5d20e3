// OpenCL device properties -> Accel's capability descriptor
// (docs/capability-keys.md), in small pure functions that tests/opencl checks
// on PoCL-like and GPU-like properties; then the two device slots and the
// device's capacity count.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>

#include "opencl_backend.h"

namespace accel::opencl {
namespace {

void CopyString(char* destination, size_t capacity, std::string_view source) {
  const size_t length = source.size() < capacity - 1 ? source.size() : capacity - 1;
  std::memcpy(destination, source.data(), length);
  std::memset(destination + length, 0, capacity - length);
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(std::string_view haystack, std::string_view needle) {
  return Lower(haystack).find(Lower(needle)) != std::string::npos;
}

// Whether the space-separated `list` holds `word`.
bool HasWord(std::string_view list, std::string_view word) {
  size_t at = 0;
  while (at < list.size()) {
    while (at < list.size() && list[at] == ' ') ++at;
    size_t end = list.find(' ', at);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(at, end - at) == word) return true;
    at = end;
  }
  return false;
}

// The largest grid per dimension: 2^31 - 1 groups, fewer where grid * block would not fit the device's size_t.
uint32_t MaxGridDim(uint32_t block_limit, uint32_t address_bits) {
  constexpr uint64_t kLargest = (uint64_t{1} << 31) - 1;
  const uint64_t size_max = address_bits >= 64 ? UINT64_MAX : (uint64_t{1} << address_bits) - 1;
  const uint64_t bound = size_max / std::max<uint64_t>(block_limit, 1);
  return static_cast<uint32_t>(std::min(kLargest, bound));
}

}  // namespace

ClVersion ParseVersion(std::string_view text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return {};
  text.remove_prefix(prefix.size());
  int major = 0;
  int minor = 0;
  size_t at = 0;
  bool digits = false;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    major = major * 10 + (text[at++] - '0');
    digits = true;
  }
  if (!digits || at >= text.size() || text[at] != '.') return {};
  ++at;
  digits = false;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    minor = minor * 10 + (text[at++] - '0');
    digits = true;
  }
  if (!digits) return {};
  return {major, minor};
}

bool HasExtension(std::string_view extensions, std::string_view name) { return HasWord(extensions, name); }

std::string NormaliseSku(std::string_view name) {
  std::string out;
  bool dash = false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      if (dash && !out.empty()) out += '-';
      out += static_cast<char>(std::tolower(u));
      dash = false;
    } else {
      dash = true;
    }
  }
  return out.empty() ? "opencl-device" : out;
}

std::string FormatPciBusId(const PciAddress& a) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", a.domain & 0xFFFF, a.bus & 0xFF, a.device & 0x1F,
                a.function & 0x7);
  return text;
}

std::string UnusableReason(const ClDeviceProperties& p) {
  if (!p.available) return "not available (CL_DEVICE_AVAILABLE is false)";
  const ClVersion version = ParseVersion(p.device_version, "OpenCL ");
  if (!version.AtLeast(1, 2)) {
    return "'" + p.device_version + "' device; the backend needs OpenCL 1.2 or newer";
  }
  if (p.global_mem_size == 0 || p.max_mem_alloc_size == 0) return "reports no global memory";
  return std::string();
}

accel_device_kind_t KindOf(const ClDeviceProperties& p) {
  if ((p.type & CL_DEVICE_TYPE_GPU) != 0) return ACCEL_DEVICE_KIND_GPU;
  if ((p.type & CL_DEVICE_TYPE_CPU) != 0) return ACCEL_DEVICE_KIND_CPU;
  if ((p.type & CL_DEVICE_TYPE_ACCELERATOR) != 0) {
    for (const char* fpga : {"fpga", "altera", "xilinx"}) {
      if (Contains(p.name, fpga) || Contains(p.vendor, fpga)) return ACCEL_DEVICE_KIND_FPGA;
    }
  }
  // CL_DEVICE_TYPE_ACCELERATOR and CL_DEVICE_TYPE_CUSTOM: a dedicated accelerator of some other kind.
  return ACCEL_DEVICE_KIND_NPU;
}

std::string ArchitectureOf(const ClDeviceProperties& p) {
  if (p.nv_compute) return "sm_" + std::to_string(p.nv_compute->first) + std::to_string(p.nv_compute->second);
  // PoCL: "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512" -> the target after the driver's name.
  const size_t hstr = p.device_version.find("HSTR: ");
  if (hstr != std::string::npos) {
    std::string target = p.device_version.substr(hstr + 6);
    target = target.substr(0, target.find(' '));
    const size_t dash = target.find('-');
    return dash != std::string::npos ? target.substr(dash + 1) : target;
  }
  // AMD's devices are named by their architecture: "gfx90a:sramecc+:xnack-".
  if (p.name.rfind("gfx", 0) == 0) return p.name.substr(0, p.name.find(':'));
  return std::string();
}

accel_kernel_formats_t KernelFormatsOf(const ClDeviceProperties& p) {
  accel_kernel_formats_t formats = 0;
  if (!p.compiler_available) return formats;  // every format goes through clBuildProgram
  // OpenCL C 1.2 is what argument reflection (clGetKernelArgInfo) needs.
  if (ParseVersion(p.opencl_c_version, "OpenCL C ").AtLeast(1, 2)) formats |= ACCEL_KERNEL_FORMAT_OPENCL_C;
  if (HasExtension(p.extensions, "cl_khr_spir") && HasWord(p.spir_versions, "1.2")) {
    formats |= ACCEL_KERNEL_FORMAT_SPIR;
  }
  if (p.il_version.find("SPIR-V") != std::string::npos) formats |= ACCEL_KERNEL_FORMAT_SPIRV_OPENCL;
  return formats;
}

accel_device_capabilities_t Describe(const ClDeviceProperties& p) {
  accel_device_capabilities_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  c.struct_size = sizeof(c);
  c.kind = KindOf(p);
  c.vendor_id = p.vendor_id;
  c.device_id = 0;  // OpenCL has no portable PCI device id
  c.memory_total = p.global_mem_size;
  c.max_allocation = std::min(p.max_mem_alloc_size, p.global_mem_size);
  c.max_buffer_range = c.max_allocation;
  c.local_memory_size = p.local_mem_size;

  c.numeric_formats = ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_INT8;  // float and char are core OpenCL C
  if (p.profile == "FULL_PROFILE" || HasExtension(p.extensions, "cles_khr_int64")) {
    c.numeric_formats |= ACCEL_NUMERIC_FORMAT_INT64;
  }
  if (p.double_fp_config != 0 || HasExtension(p.extensions, "cl_khr_fp64")) {
    c.numeric_formats |= ACCEL_NUMERIC_FORMAT_FP64;
  }
  if (HasExtension(p.extensions, "cl_khr_fp16")) c.numeric_formats |= ACCEL_NUMERIC_FORMAT_FP16;

  c.kernel_formats = KernelFormatsOf(p);
  c.modeled_kernel_formats = 0;
  // Every buffer maps (clEnqueueMapBuffer); timing needs profiling queues; 32-bit global atomics are core 1.1.
  c.features = ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY;
  if (p.profiling) c.features |= ACCEL_DEVICE_FEATURE_EVENT_TIMING;
  if (HasExtension(p.extensions, "cl_khr_int64_base_atomics")) c.features |= ACCEL_DEVICE_FEATURE_ATOMICS_64;

  c.compute_units = p.compute_units;
  c.clock_mhz = p.clock_mhz;
  c.max_work_group_size = Clamp32(p.max_work_group_size);
  for (uint32_t d = 0; d < 3; ++d) {
    const uint64_t items = d < p.max_work_item_dimensions ? p.max_work_item_sizes[d] : 1;
    c.max_work_group_dims[d] = std::max<uint32_t>(1, Clamp32(std::min<uint64_t>(items, p.max_work_group_size)));
    c.max_grid_dims[d] = MaxGridDim(c.max_work_group_dims[d], p.address_bits);
  }
  c.max_argument_size = Clamp32(p.max_parameter_size);
  c.subgroup_size = 0;
  c.numa_node = -1;
  // A UUID decides identity only where it is a real device's (a PCI address) and unique across machines: CPU
  // runtimes and software devices report UUIDs that repeat from machine to machine.
  if (p.uuid) {
    std::memcpy(c.uuid, p.uuid->data(), sizeof(c.uuid));
    const bool nonzero = std::any_of(p.uuid->begin(), p.uuid->end(), [](uint8_t b) { return b != 0; });
    if (nonzero && c.kind != ACCEL_DEVICE_KIND_CPU && p.pci) c.flags |= ACCEL_DEVICE_FLAG_UUID_UNIQUE;
  }
  CopyString(c.name, sizeof(c.name), p.name);
  CopyString(c.vendor, sizeof(c.vendor), p.vendor.empty() ? p.platform_name : p.vendor);
  CopyString(c.architecture, sizeof(c.architecture), ArchitectureOf(p));
  CopyString(c.sku, sizeof(c.sku), NormaliseSku(p.name));
  CopyString(c.driver_version, sizeof(c.driver_version), p.driver_version);
  CopyString(c.pci_bus_id, sizeof(c.pci_bus_id), p.pci ? FormatPciBusId(*p.pci) : std::string());
  return c;
}

// --- Capacity ----------------------------------------------------------------------------------------------------

bool Device::Reserve(uint64_t size) {
  std::lock_guard lock(mutex_);
  if (size > capabilities.memory_total - used_) return false;
  used_ += size;
  return true;
}

void Device::Unreserve(uint64_t size) {
  std::lock_guard lock(mutex_);
  used_ -= size;
}

uint64_t Device::Used() {
  std::lock_guard lock(mutex_);
  return used_;
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
  // The core passes a zeroed struct of its own size: an older core's smaller struct gets the fields it knows.
  // stable_id and backend_name, the last fields of 1.0, are the core's.
  WritePrefix(&Unwrap(handle)->capabilities, out, out->struct_size, offsetof(accel_device_capabilities_t, stable_id));
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  // OpenCL reports no live free memory: free is what the backend's own buffers leave of CL_DEVICE_GLOBAL_MEM_SIZE.
  Device* device = Unwrap(handle);
  const uint64_t total = device->capabilities.memory_total;
  if (out_total != nullptr) *out_total = total;
  if (out_free != nullptr) *out_free = total - device->Used();
  return ACCEL_SUCCESS;
}

}  // namespace accel::opencl
