#include "hazard.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace accel::core::hazard {

constinit thread_local Record* tls_record = nullptr;
std::atomic<bool> retired_pending{false};

// The retired objects (hazard.h, Retirable).
struct RetiredList {
  std::mutex mutex;
  const Retirable* head = nullptr;  // linked through next_, each holding itself through keep_

  // Unlinks `*link` and returns the list's reference to it, to be dropped once the mutex is released (under it).
  std::shared_ptr<const Retirable> Unlink(const Retirable** link) {
    const Retirable* o = *link;
    *link = o->next_;
    o->next_ = nullptr;
    if (head == nullptr) retired_pending.store(false, std::memory_order_relaxed);
    return std::move(o->keep_);
  }
};

namespace {

// A full fence. ThreadSanitizer (GCC's) does not model std::atomic_thread_fence and refuses it: a sequentially
// consistent read-modify-write of a word of our own orders the same way on every target we build for.
#if defined(__SANITIZE_THREAD__)
std::atomic<int> fence_word{0};
void FullFence() { fence_word.fetch_add(0, std::memory_order_seq_cst); }
#else
void FullFence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

constinit thread_local bool tls_exited = false;  // the thread's record went back: counted references from now on

std::atomic<Record*> g_records{nullptr};  // every record ever made, never freed
std::atomic<int> g_taken{0};              // records held by threads

// A child of fork() starts a new list (AfterForkInChild); until then, the first one. Never destroyed: used by
// threads that exit after main.
std::atomic<RetiredList*> g_retired{nullptr};
RetiredList& TheRetired() {
  static RetiredList* const first = new RetiredList();
  RetiredList* forked = g_retired.load(std::memory_order_acquire);
  return forked != nullptr ? *forked : *first;
}
// Set once a barrier failed (a seccomp policy installed after the first lookup, say): a reader's slot store may then
// be invisible to a scan, so from then on retired objects are never dropped (a leak, never a use after free).
std::atomic<bool> g_broken{false};

// Makes every thread's earlier stores (a reader's slot) visible to this thread's later loads, and this thread's
// earlier stores (a cleared handle) visible to every thread's later loads. False, and g_broken set, when it could not.
bool Barrier() {
  FullFence();
#if defined(__linux__) && defined(__NR_membarrier)
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return true;
  // Registered in Enabled(); a child of fork() whose kernel did not carry the registration over registers again.
  if (errno == EPERM && syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
      syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return true;
  }
#endif
  g_broken.store(true);
  return false;
}

// What tls_record points to in a thread that cannot publish (publication off, or the thread exiting): no free slot,
// never on the list, never taken, so that its lookups go straight to counted references.
Record* NoRecord() {
  static Record* const none = [] {
    auto* r = new Record();
    r->free_mask = 0;
    return r;
  }();
  return none;
}

// Whether the calling thread holds a record of the list.
bool HoldsRecord() { return tls_record != nullptr && tls_record != NoRecord(); }

// Whether a slot of `r` publishes `object`.
bool Publishes(const Record& r, const Retirable* object) {
  for (const auto& slot : r.slots) {
    if (slot.load(std::memory_order_acquire) == object) return true;
  }
  return false;
}

// Whether any reader publishes `object`; `by_others` is set when a record other than the caller's does.
bool Published(const Retirable* object, bool* by_others) {
  bool found = false;
  for (Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    if (!Publishes(*r, object)) continue;
    found = true;
    if (r != tls_record) *by_others = true;
  }
  return found;
}

// Gives `r` back for another thread to take: its slots empty, all free.
void GiveBack(Record* r) {
  for (auto& slot : r->slots) slot.store(nullptr, std::memory_order_release);
  r->free_mask = (1U << kSlots) - 1;
  r->taken.store(false, std::memory_order_release);
}

// Gives the thread's record back when the thread exits.
struct Holder {
  Holder() = default;
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;
  ~Holder() {
    tls_exited = true;
    Record* r = tls_record;
    tls_record = nullptr;
    if (r == nullptr || r == NoRecord()) return;
    GiveBack(r);
    g_taken.fetch_sub(1, std::memory_order_seq_cst);  // its slots were empty: every Ref went before the thread ends
  }
  void Arm() {}
};
thread_local Holder tls_holder;

// In a child of fork(), only the forking thread lives on: the other threads' records are given back (their slots
// held what those threads were using), and the retired list starts empty (its mutex may have been held by a thread
// that is gone; its objects were the parent's, left as they are).
void AfterForkInChild() {
  int taken = 0;
  for (Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    if (r == tls_record) {
      taken += r->taken.load() ? 1 : 0;
    } else {
      GiveBack(r);
    }
  }
  g_taken.store(taken);
  if (auto* fresh = new (std::nothrow) RetiredList()) g_retired.store(fresh);  // out of memory: the parent's stays
  retired_pending.store(false);
}

}  // namespace

// Publication needs membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14); ACCEL_HANDLE_HAZARDS=0 turns it off
// (every lookup then takes a counted reference, as before: accel-bench compares the two in one build).
bool Enabled() {
  static const bool enabled = [] {
    if (const char* v = std::getenv("ACCEL_HANDLE_HAZARDS"); v != nullptr && std::strcmp(v, "0") == 0) return false;
#if defined(__linux__) && defined(__NR_membarrier)
    const long commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return false;
    return pthread_atfork(nullptr, nullptr, AfterForkInChild) == 0;
#else
    return false;
#endif
  }();
  return enabled;
}

Record* Acquire() {
  if (tls_exited || !Enabled()) {
    tls_record = NoRecord();  // later lookups of this thread take counted references without asking again
    return nullptr;
  }
  Record* r = nullptr;
  for (Record* it = g_records.load(std::memory_order_acquire); it != nullptr; it = it->next) {
    bool expected = false;
    if (!it->taken.load(std::memory_order_relaxed) &&
        it->taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      r = it;
      break;
    }
  }
  if (r == nullptr) {
    r = new (std::nothrow) Record();
    if (r == nullptr) return nullptr;  // counted references for this call; the next tries again
    r->taken.store(true, std::memory_order_relaxed);
    Record* head = g_records.load(std::memory_order_relaxed);
    do {
      r->next = head;
    } while (!g_records.compare_exchange_weak(head, r, std::memory_order_release, std::memory_order_relaxed));
  }
  // A remover that counted the records before this one was taken cleared its handle before counting: the fence
  // makes this thread's lookups from here on see that.
  g_taken.fetch_add(1, std::memory_order_seq_cst);
  FullFence();
  tls_holder.Arm();  // constructs the thread's holder, whose destructor gives the record back
  tls_record = r;
  return r;
}

RetireList::~RetireList() {
  if (head_ != nullptr) Retire(std::move(*this));
}

void Retire(RetireList&& list) noexcept {
  const Retirable* next = std::exchange(list.head_, nullptr);
  if (next == nullptr) return;
  FullFence();
  // Other threads hold records: make their slots visible. Alone, this thread's own slots are all there is.
  const bool enabled = Enabled();
  if (enabled && g_taken.load(std::memory_order_seq_cst) > (HoldsRecord() ? 1 : 0)) Barrier();
  const bool broken = enabled && g_broken.load();
  RetiredList& retired = TheRetired();
  bool kept_for_others = false;
  while (next != nullptr) {
    const Retirable* o = std::exchange(next, next->next_);
    bool by_others = false;
    if (!enabled || (!broken && !Published(o, &by_others))) {
      o->next_ = nullptr;
      std::shared_ptr<const Retirable> drop = std::move(o->keep_);  // o may go with it
      continue;
    }
    std::lock_guard lock(retired.mutex);
    o->next_ = retired.head;
    retired.head = o;
    retired_pending.store(true, std::memory_order_seq_cst);
    kept_for_others = kept_for_others || by_others;
  }
  // A reader that stops publishing checks retired_pending afterwards: either it sees it set and reclaims, or the scan
  // after this barrier sees its slot cleared. (This thread's own Release sees it in program order.)
  if (kept_for_others) {
    Barrier();
    Reclaim();
  }
}

void Reclaim() noexcept {
  if (g_broken.load()) return;
  RetiredList& retired = TheRetired();
  for (;;) {
    std::shared_ptr<const Retirable> drop;  // destroyed outside the lock: an object's destructor may remove handles
    {
      std::lock_guard lock(retired.mutex);
      for (const Retirable** link = &retired.head; *link != nullptr; link = &(*link)->next_) {
        bool by_others = false;
        if (Published(*link, &by_others)) continue;
        drop = retired.Unlink(link);
        break;
      }
      if (drop == nullptr) return;
    }
  }
}

void ReclaimFromReader(const Retirable* object) noexcept {
  if (g_broken.load()) return;
  RetiredList& retired = TheRetired();
  std::shared_ptr<const Retirable> drop;  // destroyed outside the lock
  std::lock_guard lock(retired.mutex);
  for (const Retirable** link = &retired.head; *link != nullptr; link = &(*link)->next_) {
    if (*link != object) continue;
    bool by_others = false;
    if (!Published(object, &by_others)) drop = retired.Unlink(link);  // else another reader's: the last drops it
    return;
  }
}

bool PublishedByOthers(const Retirable* object) {
  if (!Enabled()) return false;
  bool by_others = false;
  Published(object, &by_others);
  return by_others;
}

bool IsRetired(const Retirable* object) {
  std::lock_guard lock(TheRetired().mutex);  // Retire and Reclaim change keep_ under it once the object is retired
  return object->keep_ != nullptr;
}

size_t RecordsForTesting() {
  size_t n = 0;
  for (Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) ++n;
  return n;
}

size_t RetiredForTesting() {
  RetiredList& retired = TheRetired();
  std::lock_guard lock(retired.mutex);
  size_t n = 0;
  for (const Retirable* o = retired.head; o != nullptr; o = o->next_) ++n;
  return n;
}

}  // namespace accel::core::hazard
