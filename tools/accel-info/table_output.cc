// The default table (one line per physical device) and the loader report.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "names.h"
#include "output.h"

namespace accel::info {
namespace {

// The backends a physical device is reachable through, each named once.
std::string BackendList(const PhysicalDevice& device) {
  std::vector<std::string> names;
  for (const AccessPath& path : device.access_paths) {
    if (std::find(names.begin(), names.end(), path.backend) == names.end()) names.push_back(path.backend);
  }
  return names.empty() ? "-" : Join(names, ",");
}

// Key capabilities, over every access path: numeric formats | kernel formats |
// features | simulated (with the modeled part's formats).
std::string KeyCapabilities(const PhysicalDevice& device) {
  uint64_t numeric = 0;
  uint64_t kernels = 0;
  uint64_t modeled = 0;
  uint64_t features = 0;
  for (const AccessPath& path : device.access_paths) {
    numeric |= path.caps.numeric_formats;
    kernels |= path.caps.kernel_formats;
    modeled |= path.caps.modeled_kernel_formats;
    features |= path.caps.features;
  }
  std::vector<std::string> groups;
  for (const auto& [table, bits] : {std::pair{NumericFormatNames(), numeric}, std::pair{KernelFormatNames(), kernels},
                                    std::pair{DeviceFeatureNames(), features}}) {
    if (bits != 0) groups.push_back(Join(FlagNames(table, bits), ","));
  }
  if ((device.props.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0) {
    groups.push_back(modeled != 0 ? "simulated (models " + Join(FlagNames(KernelFormatNames(), modeled), ",") + ")"
                                  : std::string("simulated"));
  }
  return groups.empty() ? "-" : Join(groups, " | ");
}

std::string OrDash(std::string s) { return s.empty() ? std::string("-") : s; }

size_t FailedBackends(const Report& report) {
  return static_cast<size_t>(std::count_if(report.loader.begin(), report.loader.end(),
                                           [](const LoaderEntry& e) { return e.state == ACCEL_LOADER_STATE_FAILED; }));
}

}  // namespace

void PrintNoDevices(bool hint_loader_debug) {
  fmt::print("No devices found: no backend reported a visible device.\n");
  if (hint_loader_debug) {
    fmt::print("Run `accel-info --loader-debug` to see which backends were loaded, skipped or failed, and why.\n");
  }
}

void PrintHiddenDevices(const Report& report) {
  // Backends count their devices before the mask; access paths are after it.
  uint64_t reported = 0;
  uint64_t visible = 0;
  for (const Backend& b : report.backends) reported += b.device_count;
  for (const PhysicalDevice& d : report.physical_devices) visible += d.access_paths.size();
  if (reported > visible) {
    fmt::print("{} backend device{} hidden by ACCEL_VISIBLE_DEVICES.\n", reported - visible,
               reported - visible == 1 ? "" : "s");
  }
}

void PrintTable(const Report& report, bool hint_loader_debug) {
  if (report.physical_devices.empty()) {
    PrintNoDevices(hint_loader_debug);
    PrintHiddenDevices(report);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"IDX", "STABLE ID", "KIND", "NAME", "MEMORY", "CUS", "BACKENDS", "CAPABILITIES"});
  for (const PhysicalDevice& d : report.physical_devices) {
    const auto& p = d.props;
    rows.push_back({fmt::format("{}", p.index), OrDash(FixedString(p.stable_id)), KindName(p.kind),
                    OrDash(FixedString(p.name)), p.memory_total != 0 ? HumanBytes(p.memory_total) : "-",
                    fmt::format("{}", p.compute_units), BackendList(d), KeyCapabilities(d)});
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c + 1 == row.size()) {
        line += row[c];  // the last column is not padded
      } else {
        line += fmt::format("{:<{}}  ", row[c], widths[c]);
      }
    }
    fmt::print("{}\n", line);
  }
  PrintHiddenDevices(report);
  const size_t failed = FailedBackends(report);
  if (hint_loader_debug && failed != 0) {
    fmt::print("\n{} backend{} failed to load; run `accel-info --loader-debug` for the reasons.\n", failed,
               failed == 1 ? "" : "s");
  }
}

void PrintSettingWarnings(const std::vector<LoaderWarning>& warnings) {
  for (const LoaderWarning& w : warnings) {
    fmt::print(stderr, "accel-info: warning: {}={}: {}\n", w.setting, w.value, w.message);
  }
}

void PrintLoaderReport(const Report& report) {
  fmt::print("Loader report: {} entr{}\n", report.loader.size(), report.loader.size() == 1 ? "y" : "ies");
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  auto abi_or_dash = [](uint32_t v) { return v != 0 ? AbiString(v) : std::string("-"); };
  for (size_t i = 0; i < report.loader.size(); ++i) {
    const LoaderEntry& e = report.loader[i];
    fmt::print("  [{}] {}: {} ({})\n", i, e.backend_name.empty() ? "(unknown)" : e.backend_name,
               LoaderStateName(e.state), accel_status_name(e.status));
    fmt::print("      manifest : {}\n", or_dash(e.manifest_path));
    fmt::print("      library  : {}\n", or_dash(e.library_path));
    fmt::print("      abi      : negotiated {}, backend {}\n", abi_or_dash(e.negotiated_abi_version),
               abi_or_dash(e.backend_abi_version));
    fmt::print("      devices  : {}\n", e.device_count);
    fmt::print("      reason   : {}\n", or_dash(e.reason));
  }
  fmt::print("Setting warnings: {}\n", report.warnings.size());
  for (const LoaderWarning& w : report.warnings) {
    fmt::print("  {}={}: {}\n", w.setting, w.value, w.message);
  }
}

}  // namespace accel::info
