// The device's capability descriptor (docs/capability-keys.md) and its live
// memory figures. A backend over a vendor runtime maps the runtime's device
// properties here, in small pure functions it can unit-test.
#include <cstring>
#include <string_view>

#include "symbols.h"

namespace accel::template_backend {
namespace {

// The capacity buffers are counted against: buffer_create fails with ACCEL_ERROR_RESOURCE_EXHAUSTED past it.
constexpr uint64_t kMemoryTotal = uint64_t{1} << 30;  // 1 GiB

void CopyString(char* destination, size_t capacity, std::string_view source) {
  const size_t length = source.size() < capacity - 1 ? source.size() : capacity - 1;
  std::memcpy(destination, source.data(), length);
  std::memset(destination + length, 0, capacity - length);
}

}  // namespace

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

void DescribeDevice(accel_device_capabilities_t* out) {
  *out = {};
  out->stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  out->struct_size = sizeof(*out);
  // Host memory, run by the CPU: the core counts the device as an access path of the host's CPU. An accelerator
  // reports its own kind, PCI ids, bus id and (with ACCEL_DEVICE_FLAG_UUID_UNIQUE) UUID: docs/devices.md.
  out->kind = ACCEL_DEVICE_KIND_CPU;
  out->flags = 0;
  out->vendor_id = 0;
  out->device_id = 0;
  out->memory_total = kMemoryTotal;
  out->max_allocation = kMemoryTotal;
  out->max_buffer_range = kMemoryTotal;
  // No kernels (module.cc): no numeric formats, no local memory, and the launch limits stay 0 but for the argument
  // space, which every device reports.
  out->local_memory_size = 0;
  out->numeric_formats = 0;
  out->kernel_formats = KernelFormats();
  out->modeled_kernel_formats = 0;
  out->features = ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY | ACCEL_DEVICE_FEATURE_EVENT_TIMING;
  out->compute_units = 1;
  out->clock_mhz = 0;  // unknown
  out->max_argument_size = 4096;
  out->numa_node = -1;
  CopyString(out->name, sizeof(out->name), "Template device");
  CopyString(out->vendor, sizeof(out->vendor), "Template Vendor");
  CopyString(out->architecture, sizeof(out->architecture), "template");
  // The normalised SKU id: lowercase letters, digits and '-', from a table keyed by PCI id and name, with a
  // readable fallback for unknown parts.
  CopyString(out->sku, sizeof(out->sku), "template-device");
  CopyString(out->driver_version, sizeof(out->driver_version), kBackendVersion);
  CopyString(out->pci_bus_id, sizeof(out->pci_bus_id), "");
}

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t DeviceGetCapabilities(accel_bk_device_t handle, accel_device_capabilities_t* out) noexcept {
  // The core passes a zeroed struct of its own size: an older core's smaller struct gets the fields it knows.
  // stable_id and backend_name, the last fields of 1.0, are the core's.
  WritePrefix(&Unwrap(handle)->capabilities, out, out->struct_size, offsetof(accel_device_capabilities_t, stable_id));
  return ACCEL_SUCCESS;
}

accel_status_t DeviceGetMemoryInfo(accel_bk_device_t handle, uint64_t* out_free, uint64_t* out_total) noexcept {
  Device* device = Unwrap(handle);
  const uint64_t total = device->capabilities.memory_total;
  if (out_total != nullptr) *out_total = total;
  if (out_free != nullptr) *out_free = total - device->Used();
  return ACCEL_SUCCESS;
}

}  // namespace accel::template_backend
