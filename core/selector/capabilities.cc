// Attributes from capability snapshots.
#include "capabilities.h"

#include <algorithm>

#include "names.h"

namespace accel::selector {
namespace {

NameSet Names(accel_device_info_key_t key, uint64_t bits) {
  return NameSet{info::FlagNames(info::FlagTableFor(key), bits)};
}

void Union(MapAttributes& attributes, const char* name, accel_device_info_key_t key, uint64_t bits) {
  NameSet merged;
  if (auto v = attributes.Get(name); v && std::holds_alternative<NameSet>(*v)) merged = std::get<NameSet>(*v);
  for (std::string& n : Names(key, bits).names) {
    if (!merged.Has(n)) merged.names.push_back(std::move(n));
  }
  attributes.Set(name, std::move(merged));
}

void Max(MapAttributes& attributes, const char* name, uint64_t value) {
  if (auto v = attributes.Get(name); v && std::holds_alternative<uint64_t>(*v)) {
    value = std::max(value, std::get<uint64_t>(*v));
  }
  attributes.Set(name, value);
}

}  // namespace

MapAttributes CapabilityAttributes(const accel_device_capabilities_t& c) {
  MapAttributes a;
  a.Set("kind", std::string(info::KindName(c.kind)));
  a.Set("name", info::FixedString(c.name));
  a.Set("vendor", info::FixedString(c.vendor));
  a.Set("vendor_id", uint64_t{c.vendor_id});
  a.Set("device_id", uint64_t{c.device_id});
  a.Set("architecture", info::FixedString(c.architecture));
  a.Set("sku", info::FixedString(c.sku));
  a.Set("driver_version", info::FixedString(c.driver_version));
  a.Set("backend_name", info::FixedString(c.backend_name));
  a.Set("stable_id", info::FixedString(c.stable_id));
  a.Set("uuid", info::UuidHex(c.uuid));
  a.Set("pci_bus_id", info::FixedString(c.pci_bus_id));
  a.Set("numa_node", int64_t{c.numa_node});
  a.Set("flags", Names(ACCEL_DEVICE_INFO_FLAGS, c.flags));
  a.Set("simulated", (c.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0);
  a.Set("compute_units", uint64_t{c.compute_units});
  a.Set("clock_mhz", uint64_t{c.clock_mhz});
  a.Set("memory_total", c.memory_total);
  a.Set("max_allocation", c.max_allocation);
  a.Set("max_buffer_range", c.max_buffer_range);
  a.Set("local_memory_size", c.local_memory_size);
  a.Set("max_work_group_size", uint64_t{c.max_work_group_size});
  a.Set("max_argument_size", uint64_t{c.max_argument_size});
  a.Set("subgroup_size", uint64_t{c.subgroup_size});
  a.Set("numeric_formats", Names(ACCEL_DEVICE_INFO_NUMERIC_FORMATS, c.numeric_formats));
  a.Set("kernel_formats", Names(ACCEL_DEVICE_INFO_KERNEL_FORMATS, c.kernel_formats));
  a.Set("modeled_kernel_formats", Names(ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS, c.modeled_kernel_formats));
  a.Set("features", Names(ACCEL_DEVICE_INFO_FEATURES, c.features));
  return a;
}

void MergeAccessPath(MapAttributes& a, const accel_device_capabilities_t& c) {
  Union(a, "numeric_formats", ACCEL_DEVICE_INFO_NUMERIC_FORMATS, c.numeric_formats);
  Union(a, "kernel_formats", ACCEL_DEVICE_INFO_KERNEL_FORMATS, c.kernel_formats);
  Union(a, "modeled_kernel_formats", ACCEL_DEVICE_INFO_MODELED_KERNEL_FORMATS, c.modeled_kernel_formats);
  Union(a, "features", ACCEL_DEVICE_INFO_FEATURES, c.features);
  Max(a, "memory_total", c.memory_total);
  Max(a, "compute_units", c.compute_units);
}

}  // namespace accel::selector
