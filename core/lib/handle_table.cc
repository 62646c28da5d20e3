#include "handle_table.h"

#include <thread>

namespace accel::core {
namespace {

uint64_t Encode(HandleType type, uint32_t slot, uint32_t generation) {
  return (uint64_t{static_cast<uint8_t>(type)} << 56) | (uint64_t{slot} << 32) | generation;
}

bool IsKnownTag(uint8_t tag) {
  return tag >= static_cast<uint8_t>(HandleType::kInstance) && tag <= static_cast<uint8_t>(HandleType::kPreparedLaunch);
}

}  // namespace

const char* HandleTypeName(HandleType type) {
  switch (type) {
    case HandleType::kInstance: return "instance";
    case HandleType::kBackend: return "backend";
    case HandleType::kDevice: return "device";
    case HandleType::kPhysicalDevice: return "physical device";
    case HandleType::kBuffer: return "buffer";
    case HandleType::kStream: return "stream";
    case HandleType::kEvent: return "event";
    case HandleType::kModule: return "module";
    case HandleType::kKernel: return "kernel";
    case HandleType::kTenant: return "tenant";
    case HandleType::kPreparedLaunch: return "prepared launch";
  }
  return "unknown";
}

// Held for a reference copy, a few nanoseconds; a holder that lost its core is waited for by yielding.
void HandleTable::Entry::LockContended() const noexcept {
  for (uint32_t spins = 0; locked.exchange(true, std::memory_order_acquire); ++spins) {
    while (locked.load(std::memory_order_relaxed)) {
      if (++spins >= 64) {
        std::this_thread::yield();
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
}

HandleTable::Entry* HandleTable::SlotLocked(uint32_t slot) const {
  if (slot >= slots_) return nullptr;
  return &segments_[slot >> kSegmentBits].load(std::memory_order_relaxed)[slot & kSegmentMask];
}

uint64_t HandleTable::Insert(HandleType type, std::shared_ptr<Object> object) {
  std::unique_lock lock(mutex_);
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
  } else {
    if (slots_ > kSlotMask) throw HandlesExhausted();
    slot = slots_;
    std::atomic<Entry*>& segment = segments_[slot >> kSegmentBits];
    if (segment.load(std::memory_order_relaxed) == nullptr) {
      segment.store(new Entry[size_t{kSegmentMask} + 1], std::memory_order_release);  // never freed, as the table
    }
  }
  if (slot == slots_) {
    // Room for every slot on the free list, so that Remove's push_back cannot fail.
    if (free_slots_.capacity() <= slots_) free_slots_.reserve(2 * (size_t{slots_} + 1));
    ++slots_;
  } else {
    free_slots_.pop_back();
  }
  Entry& e = *SlotLocked(slot);
  const uint64_t handle = Encode(type, slot, e.generation);
  object->handle_ = handle;
  e.Lock();
  e.raw.store(object.get(), std::memory_order_release);  // a Pin that reads it sees the key cleared before it
  e.object = std::move(object);
  e.key.store(handle, std::memory_order_release);  // Pin reads raw after key
  e.Unlock();
  return handle;
}

std::shared_ptr<Object> HandleTable::Remove(uint64_t handle) {
  hazard::RetireList retiring;
  std::shared_ptr<Object> object = RemoveInto(handle, &retiring);
  // A Pin that saw the handle live publishes the object: it stays until that call returns.
  hazard::Retire(std::move(retiring));
  return object;
}

std::shared_ptr<Object> HandleTable::RemoveInto(uint64_t handle, hazard::RetireList* retiring) {
  std::shared_ptr<Object> object;
  {
    std::unique_lock lock(mutex_);
    object = RemoveLocked(handle);
  }
  retiring->Add(object);
  return object;
}

Ref<Object> HandleTable::PinSlow(uint64_t handle, HandleType type) const {
  // The thread's first lookup takes a record (or learns publication is off: tls_record is then the record with no
  // free slot, and every lookup takes a counted reference).
  if (hazard::Acquire() == nullptr && hazard::tls_record == nullptr) {
    return Ref<Object>(TryFind(handle, type));  // no memory for a record: a counted reference, and a new try next time
  }
  return Pin(handle, type);
}

std::shared_ptr<Object> HandleTable::RemoveLocked(uint64_t handle) {
  const auto slot = static_cast<uint32_t>((handle >> 32) & kSlotMask);
  Entry* e = SlotLocked(slot);
  if (e == nullptr || handle == 0 || e->key.load(std::memory_order_relaxed) != handle) return nullptr;
  e->Lock();
  std::shared_ptr<Object> object = std::move(e->object);
  e->object.reset();
  e->key.store(0, std::memory_order_relaxed);
  e->raw.store(nullptr, std::memory_order_relaxed);
  e->Unlock();
  // A slot whose generations are all used is retired, never reused: a wrapped generation would make the slot's first
  // handle name a new object (docs/handles.md). One slot per 2^32 - 1 objects made in it.
  if (e->generation == UINT32_MAX) return object;
  ++e->generation;
  free_slots_.push_back(slot);
  return object;
}

Expected<std::shared_ptr<Object>> HandleTable::Find(uint64_t handle, HandleType type, const char* argument) const {
  if (auto object = TryFind(handle, type)) return object;
  // Not live, or not of `type`: work out which, under the mutex (the slot cannot change meanwhile).
  const char* want = HandleTypeName(type);
  if (handle == 0) return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is NULL (expected a {} handle)", argument, want);
  auto tag = static_cast<uint8_t>(handle >> 56);
  if (!IsKnownTag(tag)) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' (0x{:x}) is not an Accel handle (expected a {} handle)", argument,
                 handle, want);
  }
  auto actual = static_cast<HandleType>(tag);
  std::unique_lock lock(mutex_);
  const Entry* e = SlotLocked(static_cast<uint32_t>((handle >> 32) & kSlotMask));
  if (e == nullptr) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' (0x{:x}) is not an Accel handle (expected a {} handle)", argument,
                 handle, want);
  }
  if (e->key.load(std::memory_order_relaxed) != handle) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is a stale {} handle (already destroyed)", argument,
                 HandleTypeName(actual));
  }
  if (actual != type) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is a {} handle, not a {} handle", argument, HandleTypeName(actual),
                 want);
  }
  return e->object;  // made live since TryFind looked
}

}  // namespace accel::core
