// The host device's capability descriptor: what hwloc, /proc and /sys say about
// this machine, mapped to accel_device_capabilities_t.
#include "device.h"

#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

namespace accel::host {
namespace {

// Limits of the native-host kernel model (docs: a host function called once per work-group).
constexpr uint64_t kLocalMemorySize = uint64_t{64} * 1024;
constexpr uint32_t kMaxWorkGroupSize = 1024;
constexpr uint32_t kMaxWorkGroupDims[3] = {1024, 1024, 64};
constexpr uint32_t kMaxGridDims[3] = {2147483647, 65535, 65535};
constexpr uint32_t kMaxArgumentSize = 4096;
// Device addresses are host addresses: a buffer's bytes are host memory the kernel's own code dereferences.
constexpr accel_device_features_t kFeatures =
    ACCEL_DEVICE_FEATURE_UNIFIED_MEMORY | ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY | ACCEL_DEVICE_FEATURE_ATOMICS_64 |
    ACCEL_DEVICE_FEATURE_EVENT_TIMING | ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES;
constexpr const char* kFallbackName = "Host CPU";
constexpr const char* kCpufreqMaxPath = "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq";

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// Calls `visit(line)` for each line of `text` until it returns true.
template <typename Visit>
void ForEachLine(std::string_view text, Visit visit) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (visit(line)) return;
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

template <size_t N>
void CopyString(char (&destination)[N], std::string_view source) {
  const size_t length = source.size() < N - 1 ? source.size() : N - 1;
  std::memcpy(destination, source.data(), length);
  std::memset(destination + length, 0, N - length);
}

// An info attribute ("CPUModel") of the first package, else of the machine; nullopt when neither has it.
std::optional<std::string> CpuInfoAttribute(hwloc_topology_t topology, const char* name) {
  const hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0);
  for (hwloc_obj_t object : {package, hwloc_get_root_obj(topology)}) {
    if (object == nullptr) continue;
    const char* value = hwloc_obj_get_info_by_name(object, name);
    if (value != nullptr && !Trim(value).empty()) return std::string(Trim(value));
  }
  return std::nullopt;
}

uint32_t CountLogicalCpus(hwloc_topology_t topology) {
  const int count = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  return count > 0 ? static_cast<uint32_t>(count) : 1;
}

// The os_index of the only NUMA node, or -1 when there are several (or none).
int32_t SingleNumaNode(hwloc_topology_t topology) {
  if (hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) != 1) return -1;
  const hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, 0);
  if (node == nullptr || node->os_index == HWLOC_UNKNOWN_INDEX || node->os_index > INT32_MAX) return -1;
  return static_cast<int32_t>(node->os_index);
}

std::string HwlocVersion(hwloc_topology_t topology) {
  const char* runtime = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topology), "hwlocVersion");
  if (runtime != nullptr && *runtime != '\0') return std::string("hwloc ") + runtime;
#ifdef HWLOC_VERSION
  return std::string("hwloc ") + HWLOC_VERSION;
#else
  const unsigned api = hwloc_get_api_version();
  return "hwloc " + std::to_string(api >> 16) + "." + std::to_string((api >> 8) & 0xff) + "." +
         std::to_string(api & 0xff);
#endif
}

std::string MachineArchitecture() {
  struct utsname names {};
  if (uname(&names) != 0) return "";
  return names.machine;
}

void CopyField(const accel_device_capabilities_t& from, accel_device_capabilities_t* to, size_t offset, size_t size) {
  if (!Covers(to->struct_size, offset, size)) return;
  std::memcpy(reinterpret_cast<char*>(to) + offset, reinterpret_cast<const char*>(&from) + offset, size);
}

}  // namespace

// --- Pure mappings -----------------------------------------------------------------------------------------------

std::string NormaliseSku(std::string_view name) {
  std::string sku;
  bool separator = false;
  for (const char c : name) {
    const bool digit = c >= '0' && c <= '9';
    const bool lower = c >= 'a' && c <= 'z';
    const bool upper = c >= 'A' && c <= 'Z';
    if (!digit && !lower && !upper) {
      separator = true;
      continue;
    }
    if (separator && !sku.empty()) sku += '-';
    separator = false;
    sku += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (sku.size() > ACCEL_SHORT_STRING_SIZE - 1) sku.resize(ACCEL_SHORT_STRING_SIZE - 1);
  while (!sku.empty() && sku.back() == '-') sku.pop_back();
  return sku.empty() ? "cpu" : sku;
}

accel_numeric_formats_t NumericFormatsFromCpuFlags(std::string_view flags) {
  accel_numeric_formats_t formats =
      ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_INT8 | ACCEL_NUMERIC_FORMAT_INT64;
  while (!flags.empty()) {
    while (!flags.empty() && IsBlank(flags.front())) flags.remove_prefix(1);
    size_t end = 0;
    while (end < flags.size() && !IsBlank(flags[end])) ++end;
    const std::string_view flag = flags.substr(0, end);
    if (flag == "avx512_fp16") formats |= ACCEL_NUMERIC_FORMAT_FP16;
    if (flag == "avx512_bf16" || flag == "amx_bf16") formats |= ACCEL_NUMERIC_FORMAT_BF16;
    flags.remove_prefix(end);
  }
  return formats;
}

std::optional<std::string> FindCpuinfoField(std::string_view cpuinfo, std::string_view key) {
  std::optional<std::string> value;
  ForEachLine(cpuinfo, [&](std::string_view line) {
    if (line.substr(0, key.size()) != key) return false;
    const size_t colon = line.find(':', key.size());
    if (colon == std::string_view::npos || !Trim(line.substr(key.size(), colon - key.size())).empty()) return false;
    value = std::string(Trim(line.substr(colon + 1)));
    return true;
  });
  return value;
}

std::optional<uint64_t> FindMeminfoBytes(std::string_view meminfo, std::string_view key) {
  std::optional<uint64_t> bytes;
  ForEachLine(meminfo, [&](std::string_view line) {
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') return false;
    const std::string_view rest = Trim(line.substr(key.size() + 1));
    uint64_t number = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
    if (error != std::errc()) return true;
    const std::string_view unit = Trim(std::string_view(end, rest.data() + rest.size() - end));
    if (unit == "kB") {
      if (number > UINT64_MAX / 1024) return true;
      number *= 1024;
    } else if (!unit.empty()) {
      return true;
    }
    bytes = number;
    return true;
  });
  return bytes;
}

uint32_t ClockMhzFromCpufreqKhz(std::string_view text) {
  text = Trim(text);
  uint64_t khz = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), khz);
  if (error != std::errc() || end != text.data() + text.size()) return 0;
  const uint64_t mhz = khz / 1000;
  return mhz > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(mhz);
}

uint64_t ChooseMemoryTotal(uint64_t hwloc_total, std::optional<uint64_t> meminfo_total) {
  return meminfo_total && *meminfo_total > 0 ? *meminfo_total : hwloc_total;
}

std::optional<std::string> ReadTextFile(const char* path) {
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return std::nullopt;
  std::string text;
  char chunk[4096];
  size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof(chunk), file)) > 0) text.append(chunk, read);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return std::nullopt;
  return text;
}

uint64_t AvailableMemoryBytes() {
  if (const std::optional<std::string> meminfo = ReadTextFile("/proc/meminfo")) {
    if (const std::optional<uint64_t> available = FindMeminfoBytes(*meminfo, "MemAvailable")) return *available;
  }
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return 0;
  return static_cast<uint64_t>(info.freeram) * info.mem_unit;
}

// --- The machine -------------------------------------------------------------------------------------------------

std::unique_ptr<Topology> Topology::Load(std::string* error) {
  auto topology = std::make_unique<Topology>(nullptr);
  hwloc_topology_t handle = nullptr;
  if (hwloc_topology_init(&handle) != 0) {
    *error = "hwloc_topology_init failed: " + std::system_category().message(errno);
    return nullptr;
  }
  topology->topology_ = handle;
  if (hwloc_topology_load(handle) != 0) {
    *error = "hwloc_topology_load failed: " + std::system_category().message(errno);
    return nullptr;
  }
  return topology;
}

Topology::~Topology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

void DescribeMachine(const Topology& topology, const HostServices& host, accel_device_capabilities_t* out) {
  const hwloc_topology_t t = topology.get();
  const hwloc_obj_t root = hwloc_get_root_obj(t);
  const std::optional<std::string> cpuinfo = ReadTextFile("/proc/cpuinfo");
  const std::optional<std::string> meminfo = ReadTextFile("/proc/meminfo");

  out->kind = ACCEL_DEVICE_KIND_CPU;
  out->flags = 0;  // real hardware; the (all-zero) UUID is not unique
  out->vendor_id = 0;
  out->device_id = 0;

  const uint64_t hwloc_total = root != nullptr ? root->total_memory : 0;
  const std::optional<uint64_t> meminfo_total = meminfo ? FindMeminfoBytes(*meminfo, "MemTotal") : std::nullopt;
  out->memory_total = ChooseMemoryTotal(hwloc_total, meminfo_total);
  if (meminfo_total && *meminfo_total != hwloc_total) {
    host.Log(ACCEL_LOG_LEVEL_DEBUG, "hwloc counts " + std::to_string(hwloc_total) +
                                        " bytes over its NUMA nodes but /proc/meminfo MemTotal is " +
                                        std::to_string(*meminfo_total) + " bytes; using MemTotal");
  }
  out->max_allocation = out->memory_total;
  out->max_buffer_range = out->memory_total;
  out->local_memory_size = kLocalMemorySize;

  const std::optional<std::string> cpu_flags = cpuinfo ? FindCpuinfoField(*cpuinfo, "flags") : std::nullopt;
  out->numeric_formats = NumericFormatsFromCpuFlags(cpu_flags.value_or(""));
  out->kernel_formats = ACCEL_KERNEL_FORMAT_NATIVE_HOST;
  out->modeled_kernel_formats = 0;
  out->features = kFeatures;

  out->compute_units = CountLogicalCpus(t);
  const std::optional<std::string> cpufreq = ReadTextFile(kCpufreqMaxPath);
  out->clock_mhz = cpufreq ? ClockMhzFromCpufreqKhz(*cpufreq) : 0;
  out->max_work_group_size = kMaxWorkGroupSize;
  for (int i = 0; i < 3; ++i) {
    out->max_work_group_dims[i] = kMaxWorkGroupDims[i];
    out->max_grid_dims[i] = kMaxGridDims[i];
  }
  out->max_argument_size = kMaxArgumentSize;
  out->subgroup_size = 0;
  out->numa_node = SingleNumaNode(t);
  std::memset(out->uuid, 0, sizeof(out->uuid));

  std::optional<std::string> name = CpuInfoAttribute(t, "CPUModel");
  if (!name && cpuinfo) name = FindCpuinfoField(*cpuinfo, "model name");
  if (!name || name->empty()) name = kFallbackName;
  CopyString(out->name, *name);
  CopyString(out->vendor, CpuInfoAttribute(t, "CPUVendor").value_or(""));
  CopyString(out->architecture, MachineArchitecture());
  CopyString(out->sku, NormaliseSku(*name));
  CopyString(out->driver_version, HwlocVersion(t));
  CopyString(out->pci_bus_id, "");
}

#define ACCEL_HOST_COPY_FIELD(field) \
  CopyField(from, to, offsetof(accel_device_capabilities_t, field), sizeof(from.field))

void CopyCapabilities(const accel_device_capabilities_t& from, accel_device_capabilities_t* to) {
  ACCEL_HOST_COPY_FIELD(kind);
  ACCEL_HOST_COPY_FIELD(flags);
  ACCEL_HOST_COPY_FIELD(vendor_id);
  ACCEL_HOST_COPY_FIELD(device_id);
  ACCEL_HOST_COPY_FIELD(memory_total);
  ACCEL_HOST_COPY_FIELD(max_allocation);
  ACCEL_HOST_COPY_FIELD(max_buffer_range);
  ACCEL_HOST_COPY_FIELD(local_memory_size);
  ACCEL_HOST_COPY_FIELD(numeric_formats);
  ACCEL_HOST_COPY_FIELD(kernel_formats);
  ACCEL_HOST_COPY_FIELD(modeled_kernel_formats);
  ACCEL_HOST_COPY_FIELD(features);
  ACCEL_HOST_COPY_FIELD(compute_units);
  ACCEL_HOST_COPY_FIELD(clock_mhz);
  ACCEL_HOST_COPY_FIELD(max_work_group_size);
  ACCEL_HOST_COPY_FIELD(max_work_group_dims);
  ACCEL_HOST_COPY_FIELD(max_grid_dims);
  ACCEL_HOST_COPY_FIELD(max_argument_size);
  ACCEL_HOST_COPY_FIELD(subgroup_size);
  ACCEL_HOST_COPY_FIELD(numa_node);
  ACCEL_HOST_COPY_FIELD(uuid);
  ACCEL_HOST_COPY_FIELD(name);
  ACCEL_HOST_COPY_FIELD(vendor);
  ACCEL_HOST_COPY_FIELD(architecture);
  ACCEL_HOST_COPY_FIELD(sku);
  ACCEL_HOST_COPY_FIELD(driver_version);
  ACCEL_HOST_COPY_FIELD(pci_bus_id);
  // stable_id and backend_name are the core's.
}

#undef ACCEL_HOST_COPY_FIELD

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
  const Device* device = Unwrap(handle);
  CopyCapabilities(device->capabilities, out);
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  const Device* device = Unwrap(handle);
  return Guard(*device->host, "device_get_memory_info", [&] {
    const uint64_t total = device->capabilities.memory_total;
    if (out_total != nullptr) *out_total = total;
    if (out_free != nullptr) {
      const uint64_t available = AvailableMemoryBytes();
      *out_free = available < total ? available : total;
    }
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::host
