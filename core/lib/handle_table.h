// Handles as encoded ids (type, slot, generation) looked up in one table, so
// that a garbage, stale or wrong-type value is rejected safely
// (docs/handles.md).
#ifndef ACCEL_CORE_HANDLE_TABLE_H_
#define ACCEL_CORE_HANDLE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
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

// What HandleTable::Insert throws when every one of the 2^24 slots holds a live object: a std::bad_alloc (callers
// that give back what they hold on an allocation failure do so here too) whose what() says which limit was met;
// Guarded reports it as ACCEL_ERROR_RESOURCE_EXHAUSTED with that message instead of "out of host memory".
class HandlesExhausted : public std::bad_alloc {
 public:
  const char* what() const noexcept override {
    return "every one of the 2^24 handle slots holds a live object (destroy some before creating more)";
  }
};

// The process-wide table from handle values to objects. Thread-safe.
// Insertions and removals take a mutex; a lookup takes no lock shared with
// other lookups: it reads the slot's handle value and copies the object's
// reference under the slot's own spin lock (held for the copy only): lookups
// of different handles write no line all threads share, and a lookup costs
// two atomic operations besides the reference count (docs/handles.md,
// "Lookup"). Slots live in segments that never move and are never freed.
class HandleTable {
 public:
  static HandleTable& Get() {
    // Never destroyed: handles may be used during exit. Inline, so that a lookup pays only the guard's load.
    static HandleTable* const table = new HandleTable();
    return *table;
  }

  // Registers `object` and returns its handle value (also stored in it).
  uint64_t Insert(HandleType type, std::shared_ptr<Object> object);
  // Unregisters the handle; returns the object (null if it was not live).
  std::shared_ptr<Object> Remove(uint64_t handle);
  // Finds a live object of `type`; `argument` names the parameter in the
  // message ("'device' is a stale handle ...").
  Expected<std::shared_ptr<Object>> Find(uint64_t handle, HandleType type, const char* argument) const;
  // The live object of `type` that `handle` names, or null (no message).
  std::shared_ptr<Object> TryFind(uint64_t handle, HandleType type) const noexcept {
    if (static_cast<uint8_t>(handle >> 56) != static_cast<uint8_t>(type)) return nullptr;
    const auto slot = static_cast<uint32_t>((handle >> 32) & kSlotMask);
    const Entry* segment = segments_[slot >> kSegmentBits].load(std::memory_order_acquire);
    if (segment == nullptr) return nullptr;
    const Entry& e = segment[slot & kSegmentMask];
    if (e.key.load(std::memory_order_relaxed) != handle) return nullptr;  // checked again under the slot's lock
    e.Lock();
    std::shared_ptr<Object> object = e.key.load(std::memory_order_relaxed) == handle ? e.object : nullptr;
    e.Unlock();
    return object;
  }

 private:
  static constexpr uint32_t kSlotBits = 24;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
  static constexpr uint32_t kSegmentBits = 12;  // 4096 slots per segment
  static constexpr uint32_t kSegmentMask = (1U << kSegmentBits) - 1;
  static constexpr uint32_t kSegments = 1U << (kSlotBits - kSegmentBits);

  struct Entry {
    // The live handle's value, 0 while the slot is free. Written under the
    // table's mutex and the slot's lock; read by lookups under the slot's lock.
    std::atomic<uint64_t> key{0};
    mutable std::atomic<bool> locked{false};
    uint32_t generation = 1;  // the next handle's (under the table's mutex)
    // Written under the table's mutex and the slot's lock; read under either.
    std::shared_ptr<Object> object;

    void Lock() const noexcept {
      if (locked.exchange(true, std::memory_order_acquire)) LockContended();
    }
    void LockContended() const noexcept;
    void Unlock() const noexcept { locked.store(false, std::memory_order_release); }
  };

  friend struct HandleTableTesting;  // tests/api/handle_table_test.cc: ages a slot's generation

  HandleTable() = default;
  Entry* SlotLocked(uint32_t slot) const;  // null beyond the slots made so far (under mutex_)

  mutable std::mutex mutex_;
  uint32_t slots_ = 0;  // slots made so far (under mutex_)
  std::vector<uint32_t> free_slots_;
  std::unique_ptr<std::atomic<Entry*>[]> segments_ = std::make_unique<std::atomic<Entry*>[]>(kSegments);  // null
};

// Typed lookup: T declares `static constexpr HandleType kHandleType`.
template <typename T, typename H>
Expected<std::shared_ptr<T>> Resolve(H handle, const char* argument) {
  if (auto object = HandleTable::Get().TryFind(reinterpret_cast<uint64_t>(handle), T::kHandleType)) {
    return std::static_pointer_cast<T>(std::move(object));
  }
  auto found = HandleTable::Get().Find(reinterpret_cast<uint64_t>(handle), T::kHandleType, argument);
  if (!found.ok()) return found.status();
  return std::static_pointer_cast<T>(std::move(found.value()));
}

// The live object of type T that `handle` names, or null: the lookup every
// entry point makes first (ACCEL_RESOLVE), with no message and no Expected.
template <typename T, typename H>
std::shared_ptr<T> TryResolve(H handle) {  // not noexcept: the first lookup makes the table
  return std::static_pointer_cast<T>(HandleTable::Get().TryFind(reinterpret_cast<uint64_t>(handle), T::kHandleType));
}

// ACCEL_RESOLVE's path once TryResolve found nothing: Resolve again, for the
// object (a handle made live meanwhile) or the message naming `argument`.
template <typename T, typename H>
[[gnu::cold, gnu::noinline]] Status ResolveAgain(H handle, const char* argument, std::shared_ptr<T>* out) {
  auto resolved = Resolve<T>(handle, argument);
  if (!resolved.ok()) return resolved.status();
  *out = std::move(resolved.value());
  return Status::Ok();
}

// Resolve, for an argument whose name is anything fmt formats, formatted only
// when the lookup fails (a launch's "desc->args[2].buffer"): a lookup that
// succeeds formats nothing.
template <typename T, typename H, typename Name>
Expected<std::shared_ptr<T>> ResolveNamed(H handle, const Name& argument) {
  if (auto object = HandleTable::Get().TryFind(reinterpret_cast<uint64_t>(handle), T::kHandleType)) {
    return std::static_pointer_cast<T>(std::move(object));
  }
  const std::string name = fmt::format("{}", argument);
  return Resolve<T>(handle, name.c_str());  // again, for the message (a handle made live meanwhile resolves)
}

template <typename H>
H ToHandle(uint64_t value) {
  return reinterpret_cast<H>(value);
}

}  // namespace accel::core

#endif  // ACCEL_CORE_HANDLE_TABLE_H_
