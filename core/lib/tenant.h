// A tenant: device memory limits for a part of a process (a task, an actor),
// below the process's own (docs/memory-limits.md). Immutable after creation
// except `destroyed`, so thread-safe.
#ifndef ACCEL_CORE_TENANT_H_
#define ACCEL_CORE_TENANT_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "device.h"
#include "memory_account.h"

namespace accel::core {

class Tenant : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kTenant;

  Instance* instance = nullptr;  // valid while the handle is live
  uint64_t instance_handle = 0;  // never reused: tells a bound tenant's instance apart after it is gone
  std::string name;              // "tenant 'task 17'" or "tenant 0xaa...": for messages
  std::map<const PhysicalDevice*, std::shared_ptr<MemoryAccount>> accounts;
  uint64_t other_limit = ACCEL_MEMORY_UNLIMITED;
  // Accounts made on demand for devices `accounts` does not name.
  std::mutex other_mutex;
  std::map<const PhysicalDevice*, std::shared_ptr<MemoryAccount>> others;
  std::atomic<bool> destroyed{false};

  // The tenant's account on `device`.
  std::shared_ptr<MemoryAccount> AccountFor(const PhysicalDevice* device);
};

// The calling thread's tenant on `instance`: null when none is bound or the
// bound one is of another instance.
std::shared_ptr<Tenant> ThreadTenant(const Instance* instance);

}  // namespace accel::core

#endif  // ACCEL_CORE_TENANT_H_
