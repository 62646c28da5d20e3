// The runtime's handle table.
#include "handles.h"

#include <fmt/format.h>

#include <cstring>
#include <new>
#include <utility>

namespace accel::runtime {

namespace {
// A value: type tag (8 bits) | generation (24 bits, never 0) | slot index (32 bits).
constexpr int kTagShift = 56;
constexpr int kGenerationShift = 32;
constexpr uint32_t kLastGeneration = (1U << 24) - 1;

const char* Article(const char* noun) { return std::strchr("aeiou", noun[0]) != nullptr ? "an" : "a"; }

uint64_t Value(HandleType type, uint32_t generation, uint32_t index) {
  return (uint64_t{static_cast<uint8_t>(type)} << kTagShift) | (uint64_t{generation} << kGenerationShift) | index;
}

// The free list of the calling thread's slot (threads numbered in order of first use).
size_t ThreadList(size_t lists) {
  static std::atomic<size_t> next{0};
  thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  return slot & (lists - 1);
}
}  // namespace

const char* HandleTypeName(HandleType type) {
  switch (type) {
    case HandleType::kRuntime: return "runtime";
    case HandleType::kFuture: return "future";
    case HandleType::kPlacementGroup: return "placement group";
    case HandleType::kQueue: return "queue";
    case HandleType::kActor: return "actor";
    case HandleType::kObject: return "object";
    case HandleType::kObjectView: return "object view";
    case HandleType::kTaskGroup: return "task group";
  }
  return "unknown";
}

HandleTable& HandleTable::Get() {
  static auto* table = new HandleTable;  // leaked: handles may be used during exit
  return *table;
}

HandleTable::Slot* HandleTable::SlotAt(uint32_t index) const {
  if (index / kChunkSlots >= kChunks) return nullptr;  // a garbage value's
  Slot* chunk = chunks_[index / kChunkSlots].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk[index % kChunkSlots];
}

uint32_t HandleTable::TakeSlot() {
  FreeList& list = free_[ThreadList(kFreeLists)];
  {
    std::lock_guard lock(list.lock);
    if (list.slots.size() > kKeepFree) {
      const uint32_t index = list.slots.front();
      list.slots.pop_front();
      return index;
    }
  }
  const uint32_t index = next_.fetch_add(1, std::memory_order_relaxed);
  if (index / kChunkSlots >= kChunks) throw std::bad_alloc();  // 2^24 slots made: out of handles
  if (chunks_[index / kChunkSlots].load(std::memory_order_acquire) == nullptr) {
    std::lock_guard lock(grow_mutex_);
    auto& chunk = chunks_[index / kChunkSlots];
    if (chunk.load(std::memory_order_relaxed) == nullptr) chunk.store(new Slot[kChunkSlots], std::memory_order_release);
  }
  return index;
}

void HandleTable::GiveBack(uint32_t index, uint32_t generation) {
  if (generation >= kLastGeneration) return;  // retired: its values are all spent
  FreeList& list = free_[ThreadList(kFreeLists)];
  std::lock_guard lock(list.lock);
  list.slots.push_back(index);
}

uint64_t HandleTable::Insert(HandleType type, std::shared_ptr<void> object) {
  const uint32_t index = TakeSlot();
  Slot& slot = *SlotAt(index);
  std::lock_guard lock(slot.lock);
  ++slot.generation;
  const uint64_t value = Value(type, slot.generation, index);
  slot.raw.store(object.get(), std::memory_order_relaxed);
  slot.object = std::move(object);
  slot.handle.store(value, std::memory_order_release);  // after raw: a Peek that finds the value reads its object
  return value;
}

bool HandleTable::Remove(uint64_t handle) { return Take(handle) != nullptr; }

std::shared_ptr<void> HandleTable::Take(uint64_t handle, HandleType type) {
  if (static_cast<uint8_t>(handle >> kTagShift) != static_cast<uint8_t>(type)) return nullptr;
  return Take(handle);
}

std::shared_ptr<void> HandleTable::Take(uint64_t handle) {
  const auto index = static_cast<uint32_t>(handle);
  Slot* slot = handle == 0 ? nullptr : SlotAt(index);
  if (slot == nullptr) return nullptr;
  std::shared_ptr<void> object;  // given to the caller, who drops it after the lock: its destructor may do anything
  uint32_t generation = 0;
  {
    std::lock_guard lock(slot->lock);
    if (slot->handle.load(std::memory_order_relaxed) != handle) return nullptr;
    slot->handle.store(0, std::memory_order_seq_cst);     // first: a Peek that still finds the value reads its object
    slot->raw.store(nullptr, std::memory_order_release);  // a Peek that reads this null then reads the 0 above
    object = std::move(slot->object);
    generation = slot->generation;
  }
  GiveBack(index, generation);
  return object;
}

std::shared_ptr<void> HandleTable::Find(uint64_t handle, HandleType type, std::string* why) const {
  if (handle == 0) {
    const char* want = HandleTypeName(type);
    *why = fmt::format("is NULL (expected a {} handle)", want);
    return nullptr;
  }
  const auto tag = static_cast<uint8_t>(handle >> kTagShift);
  const bool known =
      tag == static_cast<uint8_t>(HandleType::kRuntime) || tag == static_cast<uint8_t>(HandleType::kFuture) ||
      tag == static_cast<uint8_t>(HandleType::kPlacementGroup) || tag == static_cast<uint8_t>(HandleType::kQueue) ||
      tag == static_cast<uint8_t>(HandleType::kActor) || tag == static_cast<uint8_t>(HandleType::kObject) ||
      tag == static_cast<uint8_t>(HandleType::kObjectView) || tag == static_cast<uint8_t>(HandleType::kTaskGroup);
  const auto generation = static_cast<uint32_t>((handle >> kGenerationShift) & kLastGeneration);
  if (!known || generation == 0) {
    const char* want = HandleTypeName(type);
    *why = fmt::format("(0x{:x}) is not an Accel runtime handle (expected a {} handle)", handle, want);
    return nullptr;
  }
  if (tag != static_cast<uint8_t>(type)) {
    const char* want = HandleTypeName(type);
    const char* have = HandleTypeName(static_cast<HandleType>(tag));
    *why = fmt::format("is {} {} handle, not {} {} handle", Article(have), have, Article(want), want);
    return nullptr;
  }
  const auto index = static_cast<uint32_t>(handle);
  const Slot* slot = SlotAt(index);
  if (slot != nullptr) {
    std::lock_guard lock(slot->lock);
    if (slot->handle.load(std::memory_order_relaxed) == handle) return slot->object;
  }
  *why = fmt::format("is a stale {} handle (already destroyed or released)", HandleTypeName(type));
  return nullptr;
}

void* HandleTable::Peek(uint64_t handle, HandleType type) const noexcept {
  if (static_cast<uint8_t>(handle >> kTagShift) != static_cast<uint8_t>(type)) return nullptr;
  const Slot* slot = SlotAt(static_cast<uint32_t>(handle));
  if (slot == nullptr || slot->handle.load(std::memory_order_acquire) != handle) return nullptr;
  void* raw = slot->raw.load(std::memory_order_acquire);
  // The value again: unchanged, so `raw` was read while it named this slot (a value is never given out twice).
  return slot->handle.load(std::memory_order_seq_cst) == handle ? raw : nullptr;
}

}  // namespace accel::runtime
