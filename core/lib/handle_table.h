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
#include <utility>
#include <vector>

#include "hazard.h"
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
  kPreparedLaunch = 0xAB,
};

const char* HandleTypeName(HandleType type);

// Base of every object an ABI handle refers to. Objects are always owned by
// shared_ptrs (HandleTable::Insert takes one): shared_from_this() turns a
// pinned lookup (Ref) into a counted reference.
class Object : public std::enable_shared_from_this<Object>, public hazard::Retirable {
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

template <typename T>
class Ref;

// The process-wide table from handle values to objects. Thread-safe.
// Insertions and removals take a mutex; a lookup takes no lock and, where the
// system allows it, writes no shared line: Pin publishes the object in the
// thread's hazard slot (core/lib/hazard.h) and checks the handle again, with
// plain loads and stores; a removal retires the object until no lookup
// publishes it. Where publication is not possible, a lookup copies the
// object's reference under the slot's own spin lock (docs/handles.md,
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
  // Unregisters the handle; returns the object (null if it was not live). A lookup in flight on another thread
  // keeps the object alive until its call returns.
  std::shared_ptr<Object> Remove(uint64_t handle);
  // Remove, for many handles with one barrier (an instance's children): the object also goes on `retiring`, for
  // hazard::Retire once the caller's locks are released.
  std::shared_ptr<Object> RemoveInto(uint64_t handle, hazard::RetireList* retiring);
  // The live object of `type` that `handle` names, kept alive until the Ref goes (on this thread), or a null Ref.
  Ref<Object> Pin(uint64_t handle, HandleType type) const;
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
    // table's mutex and the slot's lock; read by lookups without a lock (Pin,
    // before and after publishing the object) and again under the slot's lock
    // (TryFind).
    std::atomic<uint64_t> key{0};
    // The object, for Pin: stored before `key` (release) and cleared after it.
    std::atomic<Object*> raw{nullptr};
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
  std::shared_ptr<Object> RemoveLocked(uint64_t handle);
  Ref<Object> PinSlow(uint64_t handle, HandleType type) const;

  mutable std::mutex mutex_;
  uint32_t slots_ = 0;  // slots made so far (under mutex_)
  std::vector<uint32_t> free_slots_;
  std::unique_ptr<std::atomic<Entry*>[]> segments_ = std::make_unique<std::atomic<Entry*>[]>(kSegments);  // null
};

// A lookup's result: the object a handle named, alive until the Ref goes. A
// Ref made by Pin publishes the object in the thread's hazard slot (no
// reference count); one made from a shared_ptr holds that. Move-only, and
// released on the thread that made it: convert to a shared_ptr (shared(), or
// implicitly) to keep the object beyond the call or hand it to another thread.
//
//   Ref<Buffer> buffer = Pin<Buffer>(handle);
//   if (buffer == nullptr) ...;              // not a live buffer handle
//   use(*buffer);
//   keep_ = buffer.shared();                  // a counted reference
//
// Thread safety: one thread's, like a local variable.
template <typename T>
class Ref {
 public:
  Ref() noexcept = default;
  explicit Ref(std::shared_ptr<T> owned) noexcept : ptr_(owned.get()), owned_(std::move(owned)) {}
  Ref(T* pinned, hazard::Record* record, int slot) noexcept : ptr_(pinned), record_(record), slot_(slot) {}
  Ref(Ref&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        owned_(std::move(other.owned_)),
        record_(std::exchange(other.record_, nullptr)),
        slot_(other.slot_) {}
  Ref& operator=(Ref&& other) noexcept {
    if (this != &other) {
      Reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      owned_ = std::move(other.owned_);
      record_ = std::exchange(other.record_, nullptr);
      slot_ = other.slot_;
    }
    return *this;
  }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { Reset(); }

  // The same object as a Ref of a derived type (the caller knows it is one).
  template <typename U>
  static Ref Downcast(Ref<U>&& other) noexcept {
    Ref r;
    r.ptr_ = static_cast<T*>(std::exchange(other.ptr_, nullptr));
    r.owned_ = std::static_pointer_cast<T>(std::move(other.owned_));
    r.record_ = std::exchange(other.record_, nullptr);
    r.slot_ = other.slot_;
    return r;
  }

  void Reset() noexcept {
    if (record_ != nullptr) hazard::Release(record_, slot_);
    record_ = nullptr;
    owned_.reset();
    ptr_ = nullptr;
  }
  T* get() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  T* operator->() const noexcept { return ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  // Whether this Ref holds a counted reference (not a hazard slot).
  bool counted() const noexcept { return owned_ != nullptr; }
  // A counted reference to the object (an atomic increment when pinned).
  std::shared_ptr<T> shared() const {
    if (owned_ != nullptr || ptr_ == nullptr) return owned_;
    return std::static_pointer_cast<T>(static_cast<Object*>(ptr_)->shared_from_this());
  }
  // Implicit, as a drop-in for the shared_ptr lookups returned before.
  operator std::shared_ptr<T>() const { return shared(); }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const Ref& r, std::nullptr_t) noexcept { return r.ptr_ == nullptr; }
  template <typename U>
  friend bool operator==(const Ref& a, const Ref<U>& b) noexcept {
    return a.get() == b.get();
  }
  template <typename U>
  friend bool operator==(const Ref& a, const std::shared_ptr<U>& b) noexcept {
    return a.get() == b.get();
  }

 private:
  template <typename U>
  friend class Ref;
  T* ptr_ = nullptr;
  std::shared_ptr<T> owned_;
  hazard::Record* record_ = nullptr;
  int slot_ = 0;
};

[[gnu::always_inline]] inline Ref<Object> HandleTable::Pin(uint64_t handle, HandleType type) const {
  if (static_cast<uint8_t>(handle >> 56) != static_cast<uint8_t>(type)) return {};
  const auto slot = static_cast<uint32_t>((handle >> 32) & kSlotMask);
  const Entry* segment = segments_[slot >> kSegmentBits].load(std::memory_order_acquire);
  if (segment == nullptr) return {};
  const Entry& e = segment[slot & kSegmentMask];
  if (e.key.load(std::memory_order_acquire) != handle) return {};
  hazard::Record* record = hazard::tls_record;
  if (record == nullptr) return PinSlow(handle, type);                    // the thread's first lookup
  if (record->free_mask == 0) return Ref<Object>(TryFind(handle, type));  // every slot in use, or publication off
  Object* object = e.raw.load(std::memory_order_acquire);
  const int i = record->Take(object);  // a Retirable*: the address a removal looks for
  hazard::Fence();
  // The handle is never reused, so the same key now means the same object throughout: a removal that cleared it
  // later sees this slot after its barrier and keeps the object.
  if (object == nullptr || e.key.load(std::memory_order_acquire) != handle) {
    // Removed meanwhile: a removal may have seen this slot and retired the object for it, so give it up as a
    // Release does (hazard::Drop).
    hazard::Drop(record, i);
    return {};
  }
  record->Keep(i);
  return Ref<Object>(object, record, i);
}

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

// The live object of type T that `handle` names, as a Ref, or a null Ref:
// the lookup every entry point makes first (ACCEL_RESOLVE).
template <typename T, typename H>
[[gnu::always_inline]] inline Ref<T> Pin(H handle) {  // not noexcept: the first lookup makes the table
  return Ref<T>::Downcast(HandleTable::Get().Pin(reinterpret_cast<uint64_t>(handle), T::kHandleType));
}

// ACCEL_RESOLVE's path once Pin found nothing: Resolve again, for the
// object (a handle made live meanwhile) or the message naming `argument`.
template <typename T, typename H>
[[gnu::cold, gnu::noinline]] Status ResolveAgain(H handle, const char* argument, Ref<T>* out) {
  auto resolved = Resolve<T>(handle, argument);
  if (!resolved.ok()) return resolved.status();
  *out = Ref<T>(std::move(resolved.value()));
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
