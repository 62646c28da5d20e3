// --json: one document, described by docs/accel-info.schema.json.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "names.h"
#include "output.h"

namespace accel::info {
namespace {

// Keys keep the order written here (the schema's order), not alphabetical.
using json = nlohmann::ordered_json;

// The schema this output follows; bump the minor for additions, the major for
// anything a consumer could trip on.
constexpr const char* kSchemaVersion = "1.0";

json AbiOrNull(uint32_t version) { return version != 0 ? json(AbiString(version)) : json(nullptr); }

json CapabilityValue(const Capability& cap) {
  if (!cap.available) return nullptr;
  const accel_device_info_key_t key = cap.key.key;
  if (key == ACCEL_DEVICE_INFO_KIND) return KindName(static_cast<uint32_t>(cap.unsigned_value));
  const auto table = FlagTableFor(key);
  if (!table.empty() || cap.key.type == ACCEL_VALUE_TYPE_FLAGS64) return FlagNames(table, cap.unsigned_value);
  switch (cap.key.type) {
    case ACCEL_VALUE_TYPE_STRING: return cap.text;
    case ACCEL_VALUE_TYPE_UINT32:
    case ACCEL_VALUE_TYPE_UINT64: return cap.unsigned_value;
    case ACCEL_VALUE_TYPE_INT32: return cap.signed_value;
    case ACCEL_VALUE_TYPE_UINT32_3: return json::array({cap.dims[0], cap.dims[1], cap.dims[2]});
    case ACCEL_VALUE_TYPE_BYTES_16: return UuidHex(cap.bytes);
    default: return nullptr;
  }
}

json AccessPathJson(const AccessPath& path) {
  json capabilities = json::object();
  for (const Capability& cap : path.capabilities) capabilities[cap.key.name] = CapabilityValue(cap);
  return {
      {"backend", path.backend},
      {"stable_id", FixedString(path.caps.stable_id)},
      {"name", FixedString(path.caps.name)},
      {"memory_total", path.caps.memory_total},
      {"compute_units", path.caps.compute_units},
      {"capabilities", std::move(capabilities)},
  };
}

json PhysicalDeviceJson(const PhysicalDevice& device) {
  const auto& p = device.props;
  json paths = json::array();
  for (const AccessPath& path : device.access_paths) paths.push_back(AccessPathJson(path));
  return {
      {"index", p.index},
      {"stable_id", FixedString(p.stable_id)},
      {"kind", KindName(p.kind)},
      {"name", FixedString(p.name)},
      {"simulated", (p.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0},
      {"memory_total", p.memory_total},
      {"compute_units", p.compute_units},
      {"numa_node", p.numa_node},
      {"pci_bus_id", FixedString(p.pci_bus_id)},
      {"access_paths", std::move(paths)},
  };
}

json LoaderEntryJson(const LoaderEntry& e) {
  return {
      {"backend", e.backend_name},
      {"state", LoaderStateName(e.state)},
      {"status", accel_status_name(e.status)},
      {"manifest_path", e.manifest_path},
      {"library_path", e.library_path},
      {"negotiated_abi_version", AbiOrNull(e.negotiated_abi_version)},
      {"backend_abi_version", AbiOrNull(e.backend_abi_version)},
      {"device_count", e.device_count},
      {"reason", e.reason},
  };
}

}  // namespace

json ReportJson(const Report& report, const json& topology) {
  json backends = json::array();
  for (const Backend& b : report.backends) {
    backends.push_back({
        {"name", b.name},
        {"version", b.version},
        {"library_path", b.library_path},
        {"abi_version", AbiString(b.abi_version)},
        {"device_count", b.device_count},
    });
  }
  json devices = json::array();
  for (const PhysicalDevice& d : report.physical_devices) devices.push_back(PhysicalDeviceJson(d));
  json loader = json::array();
  for (const LoaderEntry& e : report.loader) loader.push_back(LoaderEntryJson(e));
  json warnings = json::array();
  for (const LoaderWarning& w : report.warnings) {
    warnings.push_back({{"setting", w.setting}, {"value", w.value}, {"item", w.item}, {"message", w.message}});
  }

  return {
      {"schema_version", kSchemaVersion},
      {"accel",
       {
           {"library_version", VersionString(report.library_version)},
           {"abi_version", AbiString(report.abi_version)},
           {"backend_abi_min", AbiString(report.backend_abi_min)},
           {"backend_abi_max", AbiString(report.backend_abi_max)},
           {"build", report.build},
       }},
      {"backends", std::move(backends)},
      {"physical_devices", std::move(devices)},
      {"loader", std::move(loader)},
      {"loader_warnings", std::move(warnings)},
      {"topology", topology},
  };
}

void PrintJson(const Report& report, const json& topology) {
  // Names come from drivers: replace invalid UTF-8 rather than fail.
  fmt::print("{}\n", ReportJson(report, topology).dump(2, ' ', false, json::error_handler_t::replace));
}

}  // namespace accel::info
