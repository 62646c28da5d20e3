// Per-thread pin records (pins.h).
#include "pins.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "spin_lock.h"

namespace accel::runtime {

namespace {

struct alignas(64) Record {
  std::atomic<const void*> slots[Pins::kPerThread] = {};
  std::atomic<bool> taken{false};
  Record* next = nullptr;  // fixed once the record is on the list
};

// Every record made; never freed (a record outlives its thread and is taken by a later one).
std::atomic<Record*> g_records{nullptr};

Record* TakeRecord() {
  for (Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    bool expected = false;
    if (!r->taken.load(std::memory_order_relaxed) &&
        r->taken.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      return r;
    }
  }
  auto* r = new Record;  // reachable from g_records for the process's life
  r->taken.store(true, std::memory_order_relaxed);
  Record* head = g_records.load(std::memory_order_relaxed);
  do {
    r->next = head;
  } while (!g_records.compare_exchange_weak(head, r, std::memory_order_release, std::memory_order_relaxed));
  return r;
}

// The calling thread's record: a plain pointer (read without an initialisation guard on every pin) and, beside it,
// the object that gives the record back when the thread exits (its slots are empty then: every pin is scoped). A
// pin after the thread's destructors ran takes a record that stays taken.
thread_local Record* t_record = nullptr;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

struct GiveBack {
  GiveBack() = default;
  GiveBack(const GiveBack&) = delete;
  GiveBack& operator=(const GiveBack&) = delete;
  ~GiveBack() {
    if (t_record != nullptr) t_record->taken.store(false, std::memory_order_release);
    t_record = nullptr;
  }
};

Record& Mine() {
  if (t_record == nullptr) [[unlikely]] {
    t_record = TakeRecord();
    thread_local GiveBack give_back;
  }
  return *t_record;
}

// seq_cst loads: they follow, in the single order of seq_cst operations, the destroyer's seq_cst store that ended
// the object's liveness (HandleTable::Remove), as Pin's store precedes its caller's seq_cst re-check.
bool PinnedByOthers(const void* object, const Record* mine) {
  for (const Record* r = g_records.load(std::memory_order_acquire); r != nullptr; r = r->next) {
    if (r == mine) continue;
    for (const auto& slot : r->slots) {
      if (slot.load(std::memory_order_seq_cst) == object) return true;
    }
  }
  return false;
}

}  // namespace

int Pins::Pin(const void* object) noexcept {
  Record& r = Mine();
  int free = -1;
  for (int i = 0; i < kPerThread; ++i) {
    const void* pinned = r.slots[i].load(std::memory_order_relaxed);
    if (pinned == object) return kAlreadyPinned;
    if (pinned == nullptr && free < 0) free = i;
  }
  // A seq_cst store (a locked exchange on x86, a full barrier): the caller's seq_cst re-check of the object's
  // liveness comes after it, and a destroyer's seq_cst loads of the slots come after its seq_cst store that ended
  // that liveness; in their single order one of the two sees the other.
  if (free >= 0) r.slots[free].store(object, std::memory_order_seq_cst);
  return free;
}

void Pins::Unpin(int slot) noexcept {
  if (slot != kAlreadyPinned) Mine().slots[slot].store(nullptr, std::memory_order_release);
}

bool Pins::PinnedByMe(const void* object) noexcept {
  Record& r = Mine();
  for (const auto& slot : r.slots) {
    if (slot.load(std::memory_order_relaxed) == object) return true;
  }
  return false;
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
