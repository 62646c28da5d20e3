// An Accel instance: its loader state, backends, device registry and every
// object created under it (docs/instances.md).
#ifndef ACCEL_CORE_INSTANCE_H_
#define ACCEL_CORE_INSTANCE_H_

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend.h"
#include "device.h"
#include "discovery.h"
#include "log.h"
#include "machine_topology.h"
#include "selector.h"

namespace accel::core {

// An override the loader could not fully use: part of a setting that names
// nothing or cannot be parsed (docs/loader.md, "Setting warnings"). The
// instance is created anyway. Plain value.
struct SettingWarning {
  std::string setting;  // "ACCEL_BACKENDS", or "desc->backends" when the description gave it
  std::string value;    // the setting's whole value
  std::string item;     // the part that is wrong; "" when it is the whole value
  std::string message;  // what is wrong and what was there instead
};

// What a capability selector sees of one physical device (docs/selectors.md,
// "Physical devices"): the union of `paths` (one chip's access paths), the
// physical device's own memory and compute units, and its id.
selector::MapAttributes PhysicalAttributes(const std::vector<std::shared_ptr<Device>>& paths, const std::string& id);

// Owns everything created under one accel_instance_t. Thread-safe: the
// registry is immutable after Create; the set of children is under
// `children_mutex_` (taken before the handle table's lock, never after).
class Instance : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kInstance;

  // Builds an instance from an already validated description.
  static Expected<std::shared_ptr<Instance>> Create(const accel_instance_desc_t& desc);
  ~Instance() override;

  // Releases every child, device and backend. Handles become stale.
  void Destroy();

  const Logger& log() const { return log_; }
  const std::vector<LoadReport>& reports() const { return reports_; }
  const std::vector<SettingWarning>& warnings() const { return warnings_; }
  const std::vector<std::shared_ptr<Backend>>& backends() const { return backends_; }
  const std::vector<std::shared_ptr<Device>>& devices() const { return devices_; }
  const std::vector<std::shared_ptr<PhysicalDevice>>& physical_devices() const { return physical_devices_; }
  // Visible devices of one backend, in order.
  std::vector<std::shared_ptr<Device>> DevicesOf(const Backend* backend) const;

  // The machine's NUMA, CPU, PCI and NIC layout, loaded at first use.
  const MachineTopology& machine() const;
  // Every NIC: the machine's (backend null), then each backend's own (a
  // simulated node's), in backend order. Built at first use.
  struct NicEntry {
    Nic nic;
    const Backend* backend = nullptr;  // null: a NIC of this machine
    uint32_t backend_index = 0;        // index in the backend's context_get_nics
  };
  const std::vector<NicEntry>& nics() const;
  // Whether `backend` describes NICs of its own (then the machine's are not its devices' neighbours).
  bool HasOwnNics(const Backend* backend) const;
  // Domains above the node from ACCEL_TOPOLOGY_DOMAINS, innermost first.
  const std::vector<accel_domain_t>& domains() const { return domains_; }

  // Registers a buffer, stream or event; returns its handle.
  uint64_t Adopt(HandleType type, std::shared_ptr<Object> child);
  // Unregisters a child; returns it (null when it was not live).
  std::shared_ptr<Object> Forget(uint64_t handle);

 private:
  Instance() = default;
  void LoadBackends(const LoaderSettings& settings);
  void BuildRegistry(const LoaderSettings& settings);
  // Records a setting warning and logs it at warn level.
  void Warn(const LoaderSettings& settings, const std::string& variable, const std::string& value, std::string item,
            std::string message);
  // The checks of the file lists and of ACCEL_BACKENDS against what was found.
  void CheckFileSettings(const LoaderSettings& settings);
  void CheckBackendSelection(const LoaderSettings& settings);
  // Sets each physical device's process limit from ACCEL_MEMORY_LIMIT.
  void ApplyMemoryLimit(const LoaderSettings& settings);

  Logger log_;
  std::vector<LoadReport> reports_;
  std::vector<SettingWarning> warnings_;
  std::vector<std::shared_ptr<Backend>> backends_;
  std::vector<std::shared_ptr<Device>> devices_;
  std::vector<std::shared_ptr<PhysicalDevice>> physical_devices_;
  std::mutex children_mutex_;
  std::unordered_map<uint64_t, std::pair<HandleType, std::shared_ptr<Object>>> children_;
  bool destroyed_ = false;
  std::vector<accel_domain_t> domains_;
  mutable std::once_flag machine_once_;
  mutable std::unique_ptr<MachineTopology> machine_;
  mutable std::once_flag nics_once_;
  mutable std::vector<NicEntry> nics_;
};

}  // namespace accel::core

#endif  // ACCEL_CORE_INSTANCE_H_
