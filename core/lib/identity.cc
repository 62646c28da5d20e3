#include "identity.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

namespace accel::core {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string ComputeMachineId() {
  for (const char* path : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
    std::string id = ReadFirstLine(path);
    if (!id.empty()) return id;
  }
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return fmt::format("host:{}", host);
  return "unknown-machine";
}

bool AllZero(const uint8_t* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

}  // namespace

const std::string& MachineId() {
  static const std::string id = ComputeMachineId();
  return id;
}

uint64_t StableHash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

const char* DeviceKindName(accel_device_kind_t kind) {
  switch (kind) {
    case ACCEL_DEVICE_KIND_CPU: return "cpu";
    case ACCEL_DEVICE_KIND_GPU: return "gpu";
    case ACCEL_DEVICE_KIND_NPU: return "npu";
    case ACCEL_DEVICE_KIND_TPU: return "tpu";
    case ACCEL_DEVICE_KIND_FPGA: return "fpga";
    default: return "dev";
  }
}

std::string PhysicalDeviceId(const accel_device_capabilities_t& caps, const std::string& backend,
                             uint32_t backend_index, const std::string& machine_id) {
  const bool simulated = (caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0;
  const char* kind = DeviceKindName(caps.kind);
  if (!simulated && caps.kind == ACCEL_DEVICE_KIND_CPU) {
    return fmt::format("cpu-{:016x}", StableHash(machine_id + "\n" + "cpu"));
  }
  if ((caps.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0 && !AllZero(caps.uuid, ACCEL_UUID_SIZE)) {
    std::string hex;
    for (uint8_t b : caps.uuid) hex += fmt::format("{:02x}", b);
    return fmt::format("{}-{}", kind, hex);
  }
  std::string bus(caps.pci_bus_id, strnlen(caps.pci_bus_id, sizeof(caps.pci_bus_id)));
  if (!simulated && !bus.empty()) {
    return fmt::format("{}-{:016x}", kind, StableHash(machine_id + "\npci\n" + bus));
  }
  return fmt::format(
      "{}-{:016x}", kind,
      StableHash(fmt::format("{}\n{}\n{}\n{}", machine_id, simulated ? "sim" : "dev", backend, backend_index)));
}

std::string AccessPathId(const std::string& physical_id, const std::string& backend, uint32_t ordinal) {
  if (ordinal == 0) return fmt::format("{}.{}", physical_id, backend);
  return fmt::format("{}.{}.{}", physical_id, backend, ordinal);
}

OrderKey MakeOrderKey(const accel_device_capabilities_t& caps, const std::string& backend, uint32_t backend_index) {
  std::string bus(caps.pci_bus_id, strnlen(caps.pci_bus_id, sizeof(caps.pci_bus_id)));
  OrderKey k;
  k.simulated = (caps.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0 ? 1 : 0;
  k.cpu = caps.kind == ACCEL_DEVICE_KIND_CPU ? 1 : 0;
  k.no_pci = bus.empty() ? 1 : 0;
  k.pci_bus_id = bus;
  k.backend = backend;
  k.backend_index = backend_index;
  return k;
}

}  // namespace accel::core
