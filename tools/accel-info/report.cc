// Reads the report through the C API.
#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "names.h"

namespace accel::info {
namespace {

// Copies a possibly NULL C string.
std::string Str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

// The enumeration pattern of accel.h: a count query, then a fill.
template <typename Parent, typename Handle>
std::vector<Handle> Enumerate(accel_status_t (*fn)(Parent, uint32_t*, Handle*), Parent parent, const char* call) {
  uint32_t count = 0;
  Check(fn(parent, &count, nullptr), call);
  std::vector<Handle> handles(count);
  if (count != 0) {
    Check(fn(parent, &count, handles.data()), call);
    handles.resize(count);
  }
  return handles;
}

// Every registered key: from 1 upward until ACCEL_ERROR_INVALID_ENUM.
std::vector<CapabilityKey> RegisteredKeys() {
  std::vector<CapabilityKey> keys;
  for (uint32_t k = 1;; ++k) {
    const auto key = static_cast<accel_device_info_key_t>(k);
    const char* name = nullptr;
    accel_value_type_t type = ACCEL_VALUE_TYPE_FORCE32;
    const accel_status_t status = accel_device_info_key_describe(key, &name, &type);
    if (status == ACCEL_ERROR_INVALID_ENUM) break;
    Check(status, "accel_device_info_key_describe");
    keys.push_back({key, Str(name), type});
  }
  return keys;
}

// The byte size a value of `type` has; 0 for strings (any size).
size_t FixedSize(accel_value_type_t type) {
  switch (type) {
    case ACCEL_VALUE_TYPE_UINT32:
    case ACCEL_VALUE_TYPE_INT32: return 4;
    case ACCEL_VALUE_TYPE_UINT64:
    case ACCEL_VALUE_TYPE_FLAGS64: return 8;
    case ACCEL_VALUE_TYPE_UINT32_3: return 12;
    case ACCEL_VALUE_TYPE_BYTES_16: return 16;
    default: return 0;
  }
}

Capability ReadCapability(accel_device_t device, const CapabilityKey& key) {
  Capability cap;
  cap.key = key;
  size_t size = 0;
  accel_status_t status = accel_device_get_info(device, key.key, 0, nullptr, &size);
  if (status == ACCEL_ERROR_UNSUPPORTED || status == ACCEL_ERROR_UNIMPLEMENTED) {
    cap.available = false;
    cap.unavailable_reason = accel_last_error();
    return cap;
  }
  Check(status, "accel_device_get_info");
  std::vector<unsigned char> buffer(size);
  Check(accel_device_get_info(device, key.key, buffer.size(), buffer.data(), &size), "accel_device_get_info");
  buffer.resize(std::min(size, buffer.size()));

  const size_t expected = FixedSize(key.type);
  if (key.type != ACCEL_VALUE_TYPE_STRING && buffer.size() != expected) {
    throw QueryError("accel_device_get_info", ACCEL_ERROR_INTERNAL,
                     fmt::format("key '{}' returned {} bytes, its type needs {}", key.name, buffer.size(), expected));
  }
  switch (key.type) {
    case ACCEL_VALUE_TYPE_STRING: {
      const auto* chars = reinterpret_cast<const char*>(buffer.data());
      cap.text.assign(chars, strnlen(chars, buffer.size()));
      break;
    }
    case ACCEL_VALUE_TYPE_UINT32: {
      uint32_t v = 0;
      std::memcpy(&v, buffer.data(), sizeof(v));
      cap.unsigned_value = v;
      break;
    }
    case ACCEL_VALUE_TYPE_INT32: {
      int32_t v = 0;
      std::memcpy(&v, buffer.data(), sizeof(v));
      cap.signed_value = v;
      break;
    }
    case ACCEL_VALUE_TYPE_UINT64:
    case ACCEL_VALUE_TYPE_FLAGS64: std::memcpy(&cap.unsigned_value, buffer.data(), sizeof(uint64_t)); break;
    case ACCEL_VALUE_TYPE_UINT32_3: std::memcpy(cap.dims.data(), buffer.data(), sizeof(uint32_t) * 3); break;
    case ACCEL_VALUE_TYPE_BYTES_16: std::memcpy(cap.bytes, buffer.data(), sizeof(cap.bytes)); break;
    default:
      // A value type newer than this tool: shown as unavailable, not guessed at.
      cap.available = false;
      cap.unavailable_reason = fmt::format("value type {} is unknown to accel-info", static_cast<int>(key.type));
      break;
  }
  return cap;
}

AccessPath ReadAccessPath(accel_device_t device, const std::vector<CapabilityKey>& keys) {
  AccessPath path;
  accel_backend_t backend = nullptr;
  Check(accel_device_get_backend(device, &backend), "accel_device_get_backend");
  accel_backend_properties_t bp{};
  bp.stype = ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES;
  bp.struct_size = sizeof(bp);
  Check(accel_backend_get_properties(backend, &bp), "accel_backend_get_properties");
  path.backend = Str(bp.name);

  path.caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  path.caps.struct_size = sizeof(path.caps);
  Check(accel_device_get_capabilities(device, &path.caps), "accel_device_get_capabilities");

  path.capabilities.reserve(keys.size());
  for (const CapabilityKey& key : keys) path.capabilities.push_back(ReadCapability(device, key));
  return path;
}

}  // namespace

QueryError::QueryError(const std::string& call, accel_status_t status, const std::string& message)
    : std::runtime_error(fmt::format("{} failed with {}: {}", call, accel_status_name(status),
                                     message.empty() ? "(no message)" : message)),
      status_(status) {}

accel_status_t Check(accel_status_t status, const char* call) {
  if (status < 0) throw QueryError(call, status, accel_last_error());
  return status;
}

accel_version_info_t GetVersion() {
  accel_version_info_t v{};
  v.stype = ACCEL_STRUCTURE_TYPE_VERSION_INFO;
  v.struct_size = sizeof(v);
  Check(accel_version_get(&v), "accel_version_get");
  return v;
}

std::vector<LoaderWarning> CollectWarnings(accel_instance_t instance) {
  std::vector<LoaderWarning> out;
  uint32_t count = 0;
  Check(accel_instance_get_loader_warning_count(instance, &count), "accel_instance_get_loader_warning_count");
  for (uint32_t i = 0; i < count; ++i) {
    accel_loader_warning_t w{};
    w.stype = ACCEL_STRUCTURE_TYPE_LOADER_WARNING;
    w.struct_size = sizeof(w);
    Check(accel_instance_get_loader_warning(instance, i, &w), "accel_instance_get_loader_warning");
    out.push_back({Str(w.setting), Str(w.value), Str(w.item), Str(w.message)});
  }
  return out;
}

Report Collect(accel_instance_t instance) {
  Report report;
  const accel_version_info_t v = GetVersion();
  report.library_version = v.library_version;
  report.abi_version = v.abi_version;
  report.backend_abi_min = v.backend_abi_min;
  report.backend_abi_max = v.backend_abi_max;
  report.build = Str(v.build);
  report.keys = RegisteredKeys();

  for (accel_backend_t b :
       Enumerate(accel_instance_enumerate_backends, instance, "accel_instance_enumerate_backends")) {
    accel_backend_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES;
    p.struct_size = sizeof(p);
    Check(accel_backend_get_properties(b, &p), "accel_backend_get_properties");
    report.backends.push_back({Str(p.name), Str(p.version), Str(p.library_path), p.abi_version, p.device_count});
  }

  for (accel_physical_device_t pd :
       Enumerate(accel_instance_enumerate_physical_devices, instance, "accel_instance_enumerate_physical_devices")) {
    PhysicalDevice device;
    device.props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
    device.props.struct_size = sizeof(device.props);
    Check(accel_physical_device_get_properties(pd, &device.props), "accel_physical_device_get_properties");
    for (accel_device_t d :
         Enumerate(accel_physical_device_enumerate_devices, pd, "accel_physical_device_enumerate_devices")) {
      device.access_paths.push_back(ReadAccessPath(d, report.keys));
    }
    report.physical_devices.push_back(std::move(device));
  }

  uint32_t entries = 0;
  Check(accel_instance_get_loader_entry_count(instance, &entries), "accel_instance_get_loader_entry_count");
  for (uint32_t i = 0; i < entries; ++i) {
    accel_loader_entry_t e{};
    e.stype = ACCEL_STRUCTURE_TYPE_LOADER_ENTRY;
    e.struct_size = sizeof(e);
    Check(accel_instance_get_loader_entry(instance, i, &e), "accel_instance_get_loader_entry");
    report.loader.push_back({Str(e.backend_name), Str(e.manifest_path), Str(e.library_path), Str(e.reason), e.state,
                             e.status, e.negotiated_abi_version, e.backend_abi_version, e.device_count});
  }
  report.warnings = CollectWarnings(instance);
  return report;
}

namespace {

template <typename T>
T Sized(uint32_t stype) {
  T value{};
  value.stype = stype;
  value.struct_size = sizeof(T);
  return value;
}

}  // namespace

TopoReport CollectTopology(accel_instance_t instance) {
  TopoReport report;
  const std::vector<accel_device_t> devices =
      Enumerate(accel_instance_enumerate_devices, instance, "accel_instance_enumerate_devices");

  uint32_t nic_count = 0;
  Check(accel_instance_get_nic_count(instance, &nic_count), "accel_instance_get_nic_count");
  for (uint32_t k = 0; k < nic_count; ++k) {
    auto nic = Sized<accel_nic_properties_t>(ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES);
    Check(accel_instance_get_nic(instance, k, &nic), "accel_instance_get_nic");
    report.nics.push_back(nic);
  }

  for (size_t i = 0; i < devices.size(); ++i) {
    const accel_device_t d = devices[i];
    TopoDevice device;
    device.index = static_cast<uint32_t>(i);
    auto caps = Sized<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
    Check(accel_device_get_capabilities(d, &caps), "accel_device_get_capabilities");
    device.stable_id = FixedString(caps.stable_id);
    device.name = FixedString(caps.name);
    device.backend = FixedString(caps.backend_name);
    device.topology = Sized<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
    Check(accel_device_get_topology(d, &device.topology), "accel_device_get_topology");
    for (uint32_t level = 0; level < device.topology.domain_count; ++level) {
      auto domain = Sized<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN);
      Check(accel_device_get_domain(d, level, &domain), "accel_device_get_domain");
      device.domains.push_back(domain);
    }
    report.devices.push_back(std::move(device));

    std::vector<accel_device_link_t> row;
    for (const accel_device_t peer : devices) {
      auto link = Sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
      Check(accel_device_get_link(d, peer, &link), "accel_device_get_link");
      row.push_back(link);
    }
    report.links.push_back(std::move(row));

    std::vector<accel_device_link_t> nic_row;
    for (uint32_t k = 0; k < nic_count; ++k) {
      auto link = Sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
      Check(accel_device_get_nic_link(d, k, &link), "accel_device_get_nic_link");
      nic_row.push_back(link);
    }
    report.nic_links.push_back(std::move(nic_row));
  }
  return report;
}

}  // namespace accel::info
