// -v: every physical device, each access path, and every capability key.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "names.h"
#include "output.h"

namespace accel::info {
namespace {

template <size_t N>
std::string OrDash(const char (&chars)[N]) {
  std::string s = FixedString(chars);
  return s.empty() ? std::string("-") : s;
}

std::string NumaText(int32_t node) { return node >= 0 ? fmt::format("{}", node) : std::string("unknown"); }

std::string BytesText(uint64_t bytes) { return fmt::format("{} ({} bytes)", HumanBytes(bytes), bytes); }

const Backend* FindBackend(const Report& report, const std::string& name) {
  for (const Backend& b : report.backends) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

void PrintAccessPath(const Report& report, const AccessPath& path, size_t index) {
  const accel_device_capabilities_t& c = path.caps;
  const Backend* backend = FindBackend(report, path.backend);
  fmt::print("  Access path {}: {} via {}\n", index, OrDash(c.name), path.backend);
  if (backend != nullptr) {
    fmt::print("    backend          : {} {} (ABI {})\n", backend->name, backend->version,
               AbiString(backend->abi_version));
  }
  fmt::print("    name             : {}\n", OrDash(c.name));
  fmt::print("    stable id        : {}\n", OrDash(c.stable_id));
  fmt::print("    memory           : {}\n", BytesText(c.memory_total));
  fmt::print("    compute units    : {}\n", c.compute_units);
  fmt::print("    capabilities     :\n");
  size_t width = 0;
  for (const Capability& cap : path.capabilities) width = std::max(width, cap.key.name.size());
  for (const Capability& cap : path.capabilities) {
    fmt::print("      {:<{}} : {}\n", cap.key.name, width, TextValue(cap));
  }
}

}  // namespace

std::string TextValue(const Capability& cap) {
  if (!cap.available) {
    return cap.unavailable_reason.empty() ? std::string("(not available)")
                                          : fmt::format("(not available: {})", cap.unavailable_reason);
  }
  const accel_device_info_key_t key = cap.key.key;
  if (key == ACCEL_DEVICE_INFO_KIND) return KindName(static_cast<uint32_t>(cap.unsigned_value));
  const auto table = FlagTableFor(key);
  if (!table.empty() || cap.key.type == ACCEL_VALUE_TYPE_FLAGS64) {
    const auto names = FlagNames(table, cap.unsigned_value);
    return names.empty() ? std::string("(none)") : Join(names, ", ");
  }
  switch (cap.key.type) {
    case ACCEL_VALUE_TYPE_STRING: return cap.text.empty() ? std::string("-") : cap.text;
    case ACCEL_VALUE_TYPE_UINT32:
      if (key == ACCEL_DEVICE_INFO_VENDOR_ID || key == ACCEL_DEVICE_INFO_DEVICE_ID) {
        return cap.unsigned_value != 0 ? fmt::format("0x{:04x}", cap.unsigned_value) : std::string("unknown");
      }
      if (key == ACCEL_DEVICE_INFO_SIMULATED) return cap.unsigned_value != 0 ? "yes" : "no";
      if (key == ACCEL_DEVICE_INFO_CLOCK_MHZ && cap.unsigned_value == 0) return "unknown";
      if (key == ACCEL_DEVICE_INFO_SUBGROUP_SIZE && cap.unsigned_value == 0) return "unknown or none";
      [[fallthrough]];
    case ACCEL_VALUE_TYPE_UINT64:
      return IsByteSize(key) ? BytesText(cap.unsigned_value) : fmt::format("{}", cap.unsigned_value);
    case ACCEL_VALUE_TYPE_INT32:
      return key == ACCEL_DEVICE_INFO_NUMA_NODE ? NumaText(static_cast<int32_t>(cap.signed_value))
                                                : fmt::format("{}", cap.signed_value);
    case ACCEL_VALUE_TYPE_UINT32_3: return fmt::format("{} x {} x {}", cap.dims[0], cap.dims[1], cap.dims[2]);
    case ACCEL_VALUE_TYPE_BYTES_16: {
      bool zero = std::all_of(std::begin(cap.bytes), std::end(cap.bytes), [](uint8_t b) { return b == 0; });
      return zero ? std::string("(none)") : UuidHex(cap.bytes);
    }
    default: return "(unknown value type)";
  }
}

void PrintVerbose(const Report& report, bool hint_loader_debug) {
  fmt::print("Accel {} (ABI {}; backend ABI {}..{}; {})\n", VersionString(report.library_version),
             AbiString(report.abi_version), AbiString(report.backend_abi_min), AbiString(report.backend_abi_max),
             report.build);
  fmt::print("Backends: {}\n", report.backends.size());
  for (const Backend& b : report.backends) {
    fmt::print("  {} {} (ABI {}), {} device{}, {}\n", b.name, b.version.empty() ? "-" : b.version,
               AbiString(b.abi_version), b.device_count, b.device_count == 1 ? "" : "s",
               b.library_path.empty() ? "-" : b.library_path);
  }
  fmt::print("Capability keys: {}\n", report.keys.size());
  if (report.physical_devices.empty()) {
    fmt::print("\n");
    PrintNoDevices(hint_loader_debug);
    PrintHiddenDevices(report);
    return;
  }
  PrintHiddenDevices(report);
  for (const PhysicalDevice& d : report.physical_devices) {
    const auto& p = d.props;
    fmt::print("\nPhysical device {}: {} ({})\n", p.index, OrDash(p.name), KindName(p.kind));
    fmt::print("  stable id        : {}\n", OrDash(p.stable_id));
    fmt::print("  memory           : {}\n", BytesText(p.memory_total));
    fmt::print("  compute units    : {}\n", p.compute_units);
    fmt::print("  numa node        : {}\n", NumaText(p.numa_node));
    fmt::print("  pci bus id       : {}\n", OrDash(p.pci_bus_id));
    fmt::print("  simulated        : {}\n", (p.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0 ? "yes" : "no");
    fmt::print("  access paths     : {}\n", d.access_paths.size());
    for (size_t i = 0; i < d.access_paths.size(); ++i) PrintAccessPath(report, d.access_paths[i], i);
  }
}

}  // namespace accel::info
