#include "handle_table.h"

namespace accel::core {
namespace {

constexpr uint64_t kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;

uint64_t Encode(HandleType type, uint32_t slot, uint32_t generation) {
  return (uint64_t{static_cast<uint8_t>(type)} << 56) | (uint64_t{slot} << 32) | generation;
}

bool IsKnownTag(uint8_t tag) {
  return tag >= static_cast<uint8_t>(HandleType::kInstance) && tag <= static_cast<uint8_t>(HandleType::kTenant);
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
  }
  return "unknown";
}

HandleTable& HandleTable::Get() {
  static HandleTable* table = new HandleTable();  // Never destroyed: handles may be used during exit.
  return *table;
}

uint64_t HandleTable::Insert(HandleType type, std::shared_ptr<Object> object) {
  std::unique_lock lock(mutex_);
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (entries_.size() > kSlotMask) throw std::bad_alloc();
    slot = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[slot];
  e.type = type;
  uint64_t handle = Encode(type, slot, e.generation);
  object->handle_ = handle;
  e.object = std::move(object);
  return handle;
}

std::shared_ptr<Object> HandleTable::Remove(uint64_t handle) {
  std::unique_lock lock(mutex_);
  uint32_t slot = static_cast<uint32_t>((handle >> 32) & kSlotMask);
  if (slot >= entries_.size()) return nullptr;
  Entry& e = entries_[slot];
  if (!e.object || e.generation != static_cast<uint32_t>(handle) ||
      static_cast<uint8_t>(e.type) != static_cast<uint8_t>(handle >> 56)) {
    return nullptr;
  }
  std::shared_ptr<Object> object = std::move(e.object);
  e.object.reset();
  if (++e.generation == 0) e.generation = 1;
  free_slots_.push_back(slot);
  return object;
}

Expected<std::shared_ptr<Object>> HandleTable::Find(uint64_t handle, HandleType type, const char* argument) const {
  const char* want = HandleTypeName(type);
  if (handle == 0) return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is NULL (expected a {} handle)", argument, want);
  auto tag = static_cast<uint8_t>(handle >> 56);
  uint32_t slot = static_cast<uint32_t>((handle >> 32) & kSlotMask);
  if (!IsKnownTag(tag)) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' (0x{:x}) is not an Accel handle (expected a {} handle)", argument,
                 handle, want);
  }
  auto actual = static_cast<HandleType>(tag);
  std::shared_lock lock(mutex_);
  if (slot >= entries_.size()) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' (0x{:x}) is not an Accel handle (expected a {} handle)", argument,
                 handle, want);
  }
  const Entry& e = entries_[slot];
  if (!e.object || e.generation != static_cast<uint32_t>(handle) || e.type != actual) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is a stale {} handle (already destroyed)", argument,
                 HandleTypeName(actual));
  }
  if (actual != type) {
    return Error(ACCEL_ERROR_INVALID_HANDLE, "'{}' is a {} handle, not a {} handle", argument, HandleTypeName(actual),
                 want);
  }
  return e.object;
}

}  // namespace accel::core
