// Per-thread pin records (pins.h).
#include "pins.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <thread>

#include "spin_lock.h"

namespace accel::runtime {

thread_local Pins::Record* Pins::t_record = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

namespace {

// Every record made; never freed (a record outlives its thread and is taken by a later one).
std::atomic<Pins::Record*> g_records{nullptr};

Pins::Record* TakeFree() {
  for (Pins::Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    bool expected = false;
    if (!r->taken.load(std::memory_order_relaxed) &&
        r->taken.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      return r;
    }
  }
  auto* r = new (std::nothrow) Pins::Record;  // reachable from g_records for the process's life
  if (r == nullptr) std::terminate();         // 64 bytes once per thread: nothing to give back an error through
  r->taken.store(true, std::memory_order_relaxed);
  Pins::Record* head = g_records.load(std::memory_order_relaxed);
  do {
    r->next = head;
  } while (!g_records.compare_exchange_weak(head, r, std::memory_order_release, std::memory_order_relaxed));
  return r;
}

// Gives the thread's record back when the thread exits (its slots are empty then: every pin is scoped), and forgets
// it, so that a pin made later in the thread's exit (another thread-local's destructor calling the runtime) takes a
// record of its own, which stays taken, rather than write to one a new thread may hold.
struct GiveBack {
  Pins::Record** mine;  // the thread's Pins::t_record (trivially destructible: valid through the thread's exit)
  explicit GiveBack(Pins::Record** m) : mine(m) {}
  GiveBack(const GiveBack&) = delete;
  GiveBack& operator=(const GiveBack&) = delete;
  ~GiveBack() {
    (*mine)->taken.store(false, std::memory_order_release);
    *mine = nullptr;
  }
};

// seq_cst loads: they follow, in the single order of seq_cst operations, the destroyer's seq_cst store that ended
// the object's liveness (HandleTable::Remove), as Pin's store precedes its caller's seq_cst re-check.
bool PinnedByOthers(const void* object, const Pins::Record* mine) {
  for (const Pins::Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    if (r == mine) continue;
    for (const auto& slot : r->slots) {
      if (slot.load(std::memory_order_seq_cst) == object) return true;
    }
  }
  return false;
}

}  // namespace

Pins::Record& Pins::TakeRecord() noexcept {
  Record* r = TakeFree();
  t_record = r;
  thread_local GiveBack give_back{&t_record};
  (void)give_back;
  return *r;
}

void Pins::WaitUnpinnedByOthers(const void* object) noexcept {
  const Record* mine = &Mine();
  auto sleep = std::chrono::microseconds(20);
  for (int spins = 0; PinnedByOthers(object, mine); ++spins) {
    if (spins < 64) {
      SpinPause();
    } else if (spins < 128) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(2000));
    }
  }
}

}  // namespace accel::runtime
