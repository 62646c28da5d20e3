// The runtime's handle table.
#include "handles.h"

#include <fmt/format.h>

#include <cstring>

namespace accel::runtime {

namespace {
constexpr int kTagShift = 56;
constexpr uint64_t kCounterMask = (uint64_t{1} << kTagShift) - 1;

const char* Article(const char* noun) { return std::strchr("aeiou", noun[0]) != nullptr ? "an" : "a"; }
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
  }
  return "unknown";
}

HandleTable& HandleTable::Get() {
  static auto* table = new HandleTable;  // leaked: handles may be used during exit
  return *table;
}

uint64_t HandleTable::Insert(HandleType type, std::shared_ptr<void> object) {
  const uint64_t counter = next_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t handle = (uint64_t{static_cast<uint8_t>(type)} << kTagShift) | (counter & kCounterMask);
  Shard& shard = ShardOf(handle);
  std::lock_guard lock(shard.mutex);
  shard.live.emplace(handle, std::make_pair(type, std::move(object)));
  return handle;
}

bool HandleTable::Remove(uint64_t handle) {
  Shard& shard = ShardOf(handle);
  std::lock_guard lock(shard.mutex);
  return shard.live.erase(handle) != 0;
}

std::shared_ptr<void> HandleTable::Find(uint64_t handle, HandleType type, std::string* why) const {
  const char* want = HandleTypeName(type);
  if (handle == 0) {
    *why = fmt::format("is NULL (expected a {} handle)", want);
    return nullptr;
  }
  const auto tag = static_cast<uint8_t>(handle >> kTagShift);
  const bool known =
      tag == static_cast<uint8_t>(HandleType::kRuntime) || tag == static_cast<uint8_t>(HandleType::kFuture) ||
      tag == static_cast<uint8_t>(HandleType::kPlacementGroup) || tag == static_cast<uint8_t>(HandleType::kQueue) ||
      tag == static_cast<uint8_t>(HandleType::kActor) || tag == static_cast<uint8_t>(HandleType::kObject) ||
      tag == static_cast<uint8_t>(HandleType::kObjectView);
  if (!known) {
    *why = fmt::format("(0x{:x}) is not an Accel runtime handle (expected a {} handle)", handle, want);
    return nullptr;
  }
  if (tag != static_cast<uint8_t>(type)) {
    const char* have = HandleTypeName(static_cast<HandleType>(tag));
    *why = fmt::format("is {} {} handle, not {} {} handle", Article(have), have, Article(want), want);
    return nullptr;
  }
  const Shard& shard = ShardOf(handle);
  std::lock_guard lock(shard.mutex);
  auto it = shard.live.find(handle);
  if (it == shard.live.end()) {
    *why = fmt::format("is a stale {} handle (already destroyed or released)", want);
    return nullptr;
  }
  return it->second.second;
}

}  // namespace accel::runtime
