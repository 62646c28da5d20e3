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

namespace accel::core {

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

  Logger log_;
  std::vector<LoadReport> reports_;
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
