// The runtime's handles (docs/handles.md): a value names a type (its top
// byte), a slot of one table and that slot's generation, so a garbage, stale
// or wrong-type value is refused. The runtime keeps its own table: it sees
// libaccel only through the public API. A value is never given out twice: a
// slot is reused, first in first out, only once a thousand others are free,
// with its generation one higher, and retired when the generation runs out.
//
//   uint64_t h = HandleTable::Get().Insert(HandleType::kFuture, task);
//   auto found = HandleTable::Get().Find(h, HandleType::kFuture, &why);  // null and why: stale, wrong type...
//   HandleTable::Get().Remove(h);
//
// Thread-safe: each slot has its own spin lock (the innermost lock, held for
// a compare and a shared_ptr copy), free slots are kept in per-thread-slot
// lists, so the submitting, waiting and worker threads of many small tasks
// rarely meet, and never sleep in the kernel when they do.
#ifndef ACCEL_RUNTIME_HANDLES_H_
#define ACCEL_RUNTIME_HANDLES_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "spin_lock.h"

namespace accel::runtime {

enum class HandleType : uint8_t {
  kRuntime = 0xB1,
  kFuture = 0xB2,
  kPlacementGroup = 0xB3,
  kQueue = 0xB4,
  kActor = 0xB5,
  kObject = 0xB6,
  kObjectView = 0xB7,
  kTaskGroup = 0xB8
};

const char* HandleTypeName(HandleType type);

class HandleTable {
 public:
  static HandleTable& Get();

  // Registers `object`; the value returned is never given out again.
  uint64_t Insert(HandleType type, std::shared_ptr<void> object);
  // Unregisters; false when it was not live. The object's reference is dropped outside the table's locks.
  bool Remove(uint64_t handle);
  // Unregisters a live value of `type` and gives the table's reference to the caller (one lookup for a find and
  // a remove); null when the value is not a live one of `type` (Find says why).
  std::shared_ptr<void> Take(uint64_t handle, HandleType type);
  // The live object of `type`, or null with `*why` saying what the value is
  // ("is a stale future handle", "is NULL (expected a runtime handle)").
  std::shared_ptr<void> Find(uint64_t handle, HandleType type, std::string* why) const;
  // The live object of `type` behind `handle`, read without a lock or a
  // reference (null otherwise: Find says why). The caller keeps it alive by
  // other means: a pin (pins.h) and then a second Peek that still finds it.
  void* Peek(uint64_t handle, HandleType type) const noexcept;

 private:
  struct alignas(64) Slot {  // a line each: slots next to each other are often different threads'
    mutable SpinLock lock;
    // The live value naming this slot; 0 when free. Written under the lock, read by Peek without it.
    std::atomic<uint64_t> handle{0};
    std::atomic<void*> raw{nullptr};  // object.get() while `handle` is live
    std::shared_ptr<void> object;
    uint32_t generation = 0;  // of the last value given out here
  };
  static constexpr uint32_t kChunkSlots = 4096;
  static constexpr uint32_t kChunks = 4096;  // 2^24 live handles at most
  static constexpr size_t kFreeLists = 16;   // a power of two
  static constexpr size_t kKeepFree = 1024;  // a list reuses a slot only when it holds more than this

  struct alignas(64) FreeList {
    SpinLock lock;
    std::deque<uint32_t> slots;
  };

  // The slot at `index`; null past the slots made.
  Slot* SlotAt(uint32_t index) const;
  // A free slot's index and the generation its next value gets.
  uint32_t TakeSlot();
  void GiveBack(uint32_t index, uint32_t generation);
  std::shared_ptr<void> Take(uint64_t handle);  // Remove's and Take's: any type

  std::unique_ptr<std::atomic<Slot*>[]> chunks_ { new std::atomic<Slot*>[ kChunks ]() };
  std::mutex grow_mutex_;                      // making a chunk
  alignas(64) std::atomic<uint32_t> next_{0};  // slots made so far
  std::array<FreeList, kFreeLists> free_;
};

}  // namespace accel::runtime

#endif  // ACCEL_RUNTIME_HANDLES_H_
