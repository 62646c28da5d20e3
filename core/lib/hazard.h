// Hazard pointers with an asymmetric barrier: how a handle lookup keeps its
// object alive for the length of a call without a read-modify-write
// (docs/handles.md, "Lookup").
//
// A reader publishes the object it is about to use in one of its thread's
// slots with a plain store, then checks that the object is still current; a
// remover that made the object unreachable issues a process-wide barrier
// (membarrier(2), which makes every thread's earlier stores visible) and then
// looks at every slot: an object some reader still publishes is kept in a
// retired list until no reader does. Readers pay two plain stores; removers
// pay the barrier. Where membarrier is not available, Enabled() is false and
// callers keep counted references instead.
//
//   hazard::Record* r = hazard::tls_record;  // null: hazard::Acquire() first
//   int i = r->Take(object);                 // -1: no slot free (or publication off): a counted reference
//   ... check the object is still current, else hazard::Drop(r, i) ...
//   hazard::Release(r, i);                   // when done with it
//
// Thread safety: a Record belongs to one thread (Take, Drop and Release on
// that thread only); Retire and Reclaim may be called from any thread.
#ifndef ACCEL_CORE_HAZARD_H_
#define ACCEL_CORE_HAZARD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace accel::core::hazard {

inline constexpr int kSlots = 8;  // objects one thread may hold at once; more take counted references

class RetireList;
struct RetiredList;
void Retire(RetireList&& list) noexcept;
// Drops the retired objects no reader publishes any more. Never throws.
void Reclaim() noexcept;

// Base of what can be retired: while retired, an object holds its own reference and links to the next, so that
// retiring allocates nothing (and so never fails).
class Retirable {
 public:
  virtual ~Retirable() = default;

 private:
  friend class RetireList;
  friend struct RetiredList;
  friend void Retire(RetireList&& list) noexcept;
  friend void Reclaim() noexcept;
  friend void ReclaimFromReader(const Retirable* object) noexcept;
  friend bool IsRetired(const Retirable* object);
  friend size_t RetiredForTesting();
  mutable std::shared_ptr<const Retirable> keep_;  // set while on a RetireList or the retired list
  mutable const Retirable* next_ = nullptr;
};

// Objects whose handles were cleared, on their way to Retire. Move-only; one thread's.
class RetireList {
 public:
  RetireList() = default;
  RetireList(RetireList&& other) noexcept : head_(std::exchange(other.head_, nullptr)) {}
  RetireList(const RetireList&) = delete;
  RetireList& operator=(const RetireList&) = delete;
  RetireList& operator=(RetireList&&) = delete;
  ~RetireList();  // retires what is left

  void Add(std::shared_ptr<const Retirable> object) noexcept {
    if (object == nullptr) return;
    const Retirable* o = object.get();
    o->keep_ = std::move(object);
    o->next_ = head_;
    head_ = o;
  }

 private:
  friend void Retire(RetireList&& list) noexcept;
  const Retirable* head_ = nullptr;
};

// One thread's published objects. Records are never freed: a thread that exits gives its record back for reuse.
struct Record {
  std::atomic<const Retirable*> slots[kSlots] = {};
  uint32_t free_mask = (1U << kSlots) - 1;  // the owner's: slots not in use
  std::atomic<bool> taken{false};
  Record* next = nullptr;  // the list of every record; set before the record is published

  // Publishes `object` in a free slot and returns its index, or -1 when every slot is in use. The caller then checks
  // that `object` is still current (after Fence()) and either keeps it (Keep) or gives the slot back (hazard::Drop).
  int Take(const Retirable* object) noexcept {
    if (free_mask == 0) return -1;
    const int i = __builtin_ctz(free_mask);
    slots[i].store(object, std::memory_order_relaxed);
    return i;
  }
  void Keep(int i) noexcept { free_mask &= ~(1U << i); }
};

// The calling thread's record: null before Acquire; a record with no free slot, not on the list, where publication
// is not possible (membarrier unavailable, or the thread is exiting). constinit: an access is a plain thread-local
// load, with no initialization check.
extern constinit thread_local Record* tls_record;
// Set while the retired list holds anything: a Release then tries to reclaim.
extern std::atomic<bool> retired_pending;

// Whether readers publish (membarrier available and ACCEL_HANDLE_HAZARDS is not 0); decided once per process.
bool Enabled();

// Gets the calling thread's record (taking a free one or making one); null when publication is not possible.
Record* Acquire();

// Orders a reader's slot store before its next load, as far as the compiler is concerned: the remover's barrier
// does the rest.
inline void Fence() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

// Drops `object` if it is retired and no reader publishes it any more. Only the readers of an object reclaim it,
// so the last of them destroys it before its call returns, as the last counted reference would.
void ReclaimFromReader(const Retirable* object) noexcept;

// Gives up a Take whose object turned out not current: a removal may have seen the slot and retired the object for
// it, so the object is reclaimed as after a Release.
inline void Drop(Record* r, int i) noexcept {
  const Retirable* object = r->slots[i].load(std::memory_order_relaxed);
  r->slots[i].store(nullptr, std::memory_order_release);
  Fence();
  if (retired_pending.load(std::memory_order_relaxed)) ReclaimFromReader(object);
}

// Ends a Take + Keep.
inline void Release(Record* r, int i) noexcept {
  r->free_mask |= 1U << i;
  Drop(r, i);
}

// Called once the objects of `list` can no longer be found by new readers (their handles cleared), outside any lock
// an object's destructor may take: drops the list's reference to each object no reader publishes, and keeps the
// others in the retired list until none does (the callers drop their own references as usual).
void Retire(RetireList&& list) noexcept;

// Whether a thread other than the caller publishes `object` (after the removal that made it unreachable: a caller
// deciding whether another call still uses it).
bool PublishedByOthers(const Retirable* object);
// Whether `object` is on the retired list (holding one reference to itself there).
bool IsRetired(const Retirable* object);

// How many objects the retired list holds, and how many records were ever made (for tests).
size_t RetiredForTesting();
size_t RecordsForTesting();

}  // namespace accel::core::hazard

#endif  // ACCEL_CORE_HAZARD_H_
