// Handles as encoded ids (type, slot, generation) looked up in one table, so
// that a garbage, stale or wrong-type value is rejected safely
// (docs/handles.md).
#ifndef ACCEL_CORE_HANDLE_TABLE_H_
#define ACCEL_CORE_HANDLE_TABLE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "status.h"

namespace accel::core {

// The type tag in a handle's top byte. Values start at 0xA1 so that no
// user-space pointer or small integer decodes as a handle.
enum class HandleType : uint8_t {
  kInstance = 0xA1,
  kBackend = 0xA2,
  kDevice = 0xA3,
  kPhysicalDevice = 0xA4,
  kBuffer = 0xA5,
  kStream = 0xA6,
  kEvent = 0xA7,
  kModule = 0xA8,
  kKernel = 0xA9,
  kTenant = 0xAA,
};

const char* HandleTypeName(HandleType type);

// Base of every object an ABI handle refers to.
class Object {
 public:
  virtual ~Object() = default;
  uint64_t handle() const { return handle_; }

 private:
  friend class HandleTable;
  uint64_t handle_ = 0;
};

// The process-wide table from handle values to objects. Thread-safe: lookups
// take a shared lock, insertions and removals an exclusive one; it is the
// innermost lock (no other lock is taken while it is held).
class HandleTable {
 public:
  static HandleTable& Get();

  // Registers `object` and returns its handle value (also stored in it).
  uint64_t Insert(HandleType type, std::shared_ptr<Object> object);
  // Unregisters the handle; returns the object (null if it was not live).
  std::shared_ptr<Object> Remove(uint64_t handle);
  // Finds a live object of `type`; `argument` names the parameter in the
  // message ("'device' is a stale handle ...").
  Expected<std::shared_ptr<Object>> Find(uint64_t handle, HandleType type, const char* argument) const;

 private:
  struct Entry {
    uint32_t generation = 1;
    HandleType type = HandleType::kInstance;
    std::shared_ptr<Object> object;
  };
  mutable std::shared_mutex mutex_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_slots_;
};

// Typed lookup: T declares `static constexpr HandleType kHandleType`.
template <typename T, typename H>
Expected<std::shared_ptr<T>> Resolve(H handle, const char* argument) {
  auto found = HandleTable::Get().Find(reinterpret_cast<uint64_t>(handle), T::kHandleType, argument);
  if (!found.ok()) return found.status();
  return std::static_pointer_cast<T>(std::move(found.value()));
}

// Resolve, for an argument whose name is anything fmt formats, formatted only
// when the lookup fails (a launch's "desc->args[2].buffer"): a lookup that
// succeeds formats nothing.
template <typename T, typename H, typename Name>
Expected<std::shared_ptr<T>> ResolveNamed(H handle, const Name& argument) {
  auto found = Resolve<T>(handle, "");
  if (found.ok()) return found;
  const std::string name = fmt::format("{}", argument);
  return Resolve<T>(handle, name.c_str());  // again, for the message (a handle made live meanwhile resolves)
}

template <typename H>
H ToHandle(uint64_t value) {
  return reinterpret_cast<H>(value);
}

}  // namespace accel::core

#endif  // ACCEL_CORE_HANDLE_TABLE_H_
