// Device identity: the machine id, stable ids, grouping of access paths into
// physical devices, and the documented stable order (docs/devices.md).
#ifndef ACCEL_CORE_IDENTITY_H_
#define ACCEL_CORE_IDENTITY_H_

#include <cstdint>
#include <string>

#include "accel/accel.h"

namespace accel::core {

// /etc/machine-id, else /var/lib/dbus/machine-id, else the host name.
// Computed once per process.
const std::string& MachineId();

// 64-bit FNV-1a: stable across builds, platforms and releases.
uint64_t StableHash(const std::string& text);

const char* DeviceKindName(accel_device_kind_t kind);

// The physical device an access path belongs to, as its stable id:
//  - a non-simulated CPU: "cpu-" + hash(machine id, "cpu") (the host's packages);
//  - a unique UUID: "<kind>-<uuid hex>";
//  - a PCI bus id: "<kind>-" + hash(machine id, bus id);
//  - otherwise: "<kind>-" + hash(machine id, backend, backend index).
std::string PhysicalDeviceId(const accel_device_capabilities_t& caps, const std::string& backend,
                             uint32_t backend_index, const std::string& machine_id);

// The access path's id: "<physical id>.<backend>", with ".<n>" appended for
// the n-th (n > 0) path of one backend to the same physical device.
std::string AccessPathId(const std::string& physical_id, const std::string& backend, uint32_t ordinal);

// Sort key of the stable order: real accelerators by PCI bus id, then
// accelerators without one, then CPUs, then simulated devices; ties by
// backend name and the backend's own device order.
struct OrderKey {
  int simulated;
  int cpu;
  int no_pci;
  std::string pci_bus_id;
  std::string backend;
  uint32_t backend_index;
  auto operator<=>(const OrderKey&) const = default;
};
OrderKey MakeOrderKey(const accel_device_capabilities_t& caps, const std::string& backend, uint32_t backend_index);

}  // namespace accel::core

#endif  // ACCEL_CORE_IDENTITY_H_
