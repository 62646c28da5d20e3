// The runtime's handles: ids (type tag, counter) looked up in one table, so a
// garbage, stale or wrong-type value is refused (docs/handles.md). The
// runtime keeps its own table: it sees libaccel only through the public API.
// Thread-safe: the table is split in shards by handle value, each with its
// own spin lock (the innermost lock, held for one hash-map operation), so that
// the submitting, waiting and worker threads of many small tasks rarely meet
// on one, and never sleep in the kernel when they do.
#ifndef ACCEL_RUNTIME_HANDLES_H_
#define ACCEL_RUNTIME_HANDLES_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "spin_lock.h"

namespace accel::runtime {

enum class HandleType : uint8_t {
  kRuntime = 0xB1,
  kFuture = 0xB2,
  kPlacementGroup = 0xB3,
  kQueue = 0xB4,
  kActor = 0xB5,
  kObject = 0xB6,
  kObjectView = 0xB7
};

const char* HandleTypeName(HandleType type);

class HandleTable {
 public:
  static HandleTable& Get();

  // Registers `object`; handle values are never reused.
  uint64_t Insert(HandleType type, std::shared_ptr<void> object);
  // Unregisters; false when it was not live.
  bool Remove(uint64_t handle);
  // The live object of `type`, or null with `*why` saying what the value is
  // ("is a stale future handle", "is NULL (expected a runtime handle)").
  std::shared_ptr<void> Find(uint64_t handle, HandleType type, std::string* why) const;

 private:
  static constexpr size_t kShards = 16;  // a power of two
  struct Shard {
    mutable SpinLock mutex;
    std::unordered_map<uint64_t, std::pair<HandleType, std::shared_ptr<void>>> live;
  };
  Shard& ShardOf(uint64_t handle) { return shards_[handle & (kShards - 1)]; }
  const Shard& ShardOf(uint64_t handle) const { return shards_[handle & (kShards - 1)]; }

  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> next_{1};
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_HANDLES_H_
