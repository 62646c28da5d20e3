// The core's handle table on its own (core/lib/handle_table.cc, docs/handles.md): a slot that used all its
// generations is retired, so no handle it gave out ever names a later object; a pinned lookup (core/lib/hazard.h)
// keeps its object alive past the handle's removal until the lookup's Ref goes, on its own thread or another.
// ctest runs it twice: with hazard pointers, and with ACCEL_HANDLE_HAZARDS=0 (counted references).
#include "handle_table.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace accel::core {

// Sets the generation the next handle of `handle`'s slot gets (the slot is free).
struct HandleTableTesting {
  static void SetNextGeneration(uint64_t handle, uint32_t generation) {
    HandleTable& table = HandleTable::Get();
    std::lock_guard lock(table.mutex_);
    table.SlotLocked(static_cast<uint32_t>((handle >> 32) & HandleTable::kSlotMask))->generation = generation;
  }
  // Runs `body` with every slot taken (the slot count at its limit, none free), then puts the table back.
  template <typename Body>
  static void WithEverySlotTaken(Body&& body) {
    HandleTable& table = HandleTable::Get();
    uint32_t slots = 0;
    std::vector<uint32_t> free_slots;
    {
      std::lock_guard lock(table.mutex_);
      slots = table.slots_;
      free_slots.swap(table.free_slots_);
      table.slots_ = static_cast<uint32_t>(HandleTable::kSlotMask) + 1;
    }
    body();
    std::lock_guard lock(table.mutex_);
    table.slots_ = slots;
    table.free_slots_.swap(free_slots);
  }
};

namespace {

struct Thing : Object {};

uint32_t SlotOf(uint64_t handle) { return static_cast<uint32_t>((handle >> 32) & 0xFFFFFF); }
uint32_t GenerationOf(uint64_t handle) { return static_cast<uint32_t>(handle); }

TEST(CoreHandleTable, ASlotPastItsLastGenerationIsRetiredNotWrapped) {
  HandleTable& table = HandleTable::Get();
  const uint64_t first = table.Insert(HandleType::kEvent, std::make_shared<Thing>());
  ASSERT_NE(table.Remove(first), nullptr);
  HandleTableTesting::SetNextGeneration(first, UINT32_MAX);
  const uint64_t last = table.Insert(HandleType::kEvent, std::make_shared<Thing>());  // the freed slot, reused
  ASSERT_EQ(SlotOf(last), SlotOf(first));
  ASSERT_EQ(GenerationOf(last), UINT32_MAX);
  ASSERT_NE(table.Remove(last), nullptr);
  std::vector<uint64_t> later;
  for (int i = 0; i < 8; ++i) later.push_back(table.Insert(HandleType::kEvent, std::make_shared<Thing>()));
  for (uint64_t h : later) {
    EXPECT_NE(SlotOf(h), SlotOf(first)) << "the retired slot was given out again";
    EXPECT_NE(GenerationOf(h), 0u);
  }
  EXPECT_EQ(table.TryFind(first, HandleType::kEvent), nullptr) << "the slot's first handle names a new object";
  EXPECT_EQ(table.TryFind(last, HandleType::kEvent), nullptr);
  for (uint64_t h : later) EXPECT_NE(table.TryFind(h, HandleType::kEvent), nullptr);
  for (uint64_t h : later) table.Remove(h);
}

TEST(CoreHandleTable, EverySlotTakenSaysSoNotOutOfMemory) {
  HandleTableTesting::WithEverySlotTaken([] {
    try {
      HandleTable::Get().Insert(HandleType::kEvent, std::make_shared<Thing>());
      ADD_FAILURE() << "Insert succeeded with every slot taken";
    } catch (const HandlesExhausted& e) {
      EXPECT_NE(std::string(e.what()).find("2^24 handle slots"), std::string::npos) << e.what();
    }
  });
  const uint64_t after = HandleTable::Get().Insert(HandleType::kEvent, std::make_shared<Thing>());
  EXPECT_NE(HandleTable::Get().Remove(after), nullptr) << "the table works again once slots are free";
}

TEST(CoreHandleTable, AFreedSlotIsReusedWithTheNextGeneration) {
  HandleTable& table = HandleTable::Get();
  const uint64_t a = table.Insert(HandleType::kBuffer, std::make_shared<Thing>());
  ASSERT_NE(table.Remove(a), nullptr);
  const uint64_t b = table.Insert(HandleType::kBuffer, std::make_shared<Thing>());
  EXPECT_EQ(SlotOf(b), SlotOf(a));
  EXPECT_EQ(GenerationOf(b), GenerationOf(a) + 1);
  EXPECT_EQ(table.TryFind(a, HandleType::kBuffer), nullptr);
  EXPECT_NE(table.TryFind(b, HandleType::kBuffer), nullptr);
  EXPECT_EQ(table.TryFind(b, HandleType::kStream), nullptr) << "another type's lookup";
  table.Remove(b);
}

// Counts its destruction; `magic` is overwritten when it goes, so a use after that is seen (and ASan reports it).
struct Counted : Object {
  static constexpr HandleType kHandleType = HandleType::kEvent;
  static constexpr uint64_t kAlive = 0x600DF00D600DF00D;
  explicit Counted(std::atomic<int>* destroyed_count) : destroyed(destroyed_count) {}
  ~Counted() override {
    magic = 0;
    destroyed->fetch_add(1);
  }
  std::atomic<int>* destroyed;
  uint64_t magic = kAlive;
};

// Another thread that pins `handle` (the constructor returns once it has) and holds the pin until Release.
class PinOnAnotherThread {
 public:
  explicit PinOnAnotherThread(uint64_t handle)
      : thread_([this, handle, release = release_.get_future()] {
          Ref<Counted> ref = Pin<Counted>(handle);
          pinned_.set_value();
          release.wait();
          alive_ = ref != nullptr && ref->magic == Counted::kAlive;
        }) {
    pinned_.get_future().wait();
  }
  PinOnAnotherThread(const PinOnAnotherThread&) = delete;
  PinOnAnotherThread& operator=(const PinOnAnotherThread&) = delete;
  ~PinOnAnotherThread() {
    if (thread_.joinable()) Release();
  }
  // Lets go of the pin; returns whether the object was found and alive until then.
  bool Release() {
    release_.set_value();
    thread_.join();
    return alive_;
  }

 private:
  std::promise<void> pinned_;
  std::promise<void> release_;
  bool alive_ = false;
  std::thread thread_;  // last: started once the promises exist
};

// Tests of pinned lookups: `destroyed` counts the Counted objects gone; New() registers one.
class CoreHandleTablePins : public testing::Test {
 protected:
  uint64_t New() { return table.Insert(HandleType::kEvent, std::make_shared<Counted>(&destroyed)); }

  std::atomic<int> destroyed{0};
  HandleTable& table = HandleTable::Get();
};

TEST_F(CoreHandleTablePins, APinnedObjectOutlivesItsRemovalUntilItsRefGoes) {
  const uint64_t h = New();
  {
    Ref<Counted> ref = Pin<Counted>(h);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(ref->handle(), h);
    EXPECT_EQ(Pin<Counted>(uint64_t{0}), nullptr);
    ASSERT_NE(table.Remove(h), nullptr);  // the reference it returns goes at once
    EXPECT_EQ(Pin<Counted>(h), nullptr) << "a removed handle is found no more";
    EXPECT_EQ(destroyed.load(), 0) << "the object went while a lookup held it";
    EXPECT_EQ(ref->magic, Counted::kAlive);
    EXPECT_EQ(hazard::RetiredForTesting(), hazard::Enabled() ? 1U : 0U);
    std::shared_ptr<Counted> counted = ref.shared();  // a counted reference from a pinned one
    EXPECT_EQ(counted.get(), ref.get());
  }
  EXPECT_EQ(destroyed.load(), 1) << "the object outlived its last lookup";
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

TEST_F(CoreHandleTablePins, AnObjectPinnedOnAnotherThreadGoesWhenThatThreadLetsGo) {
  const uint64_t h = New();
  PinOnAnotherThread reader(h);
  ASSERT_NE(table.Remove(h), nullptr);
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_TRUE(reader.Release()) << "the object went while another thread held it";
  EXPECT_EQ(destroyed.load(), 1) << "the object outlived the other thread's lookup";
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

TEST_F(CoreHandleTablePins, MorePinsThanHazardSlotsTakeCountedReferences) {
  std::vector<uint64_t> handles;
  for (int i = 0; i < 3 * hazard::kSlots; ++i) {
    handles.push_back(New());
  }
  std::vector<Ref<Counted>> refs;
  for (uint64_t h : handles) refs.push_back(Pin<Counted>(h));
  for (size_t i = 0; i < handles.size(); ++i) {
    ASSERT_NE(refs[i], nullptr) << i;
    EXPECT_EQ(refs[i]->handle(), handles[i]);
  }
  for (uint64_t h : handles) table.Remove(h);
  EXPECT_EQ(destroyed.load(), 0);
  for (auto& ref : refs) EXPECT_EQ(ref->magic, Counted::kAlive);
  refs.clear();
  EXPECT_EQ(destroyed.load(), static_cast<int>(handles.size()));
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

TEST_F(CoreHandleTablePins, ThreadsThatExitGiveTheirHazardRecordsBack) {
  if (!hazard::Enabled()) {
    GTEST_SKIP() << "hazard pointers are off here (no membarrier, or ACCEL_HANDLE_HAZARDS=0): no records are made";
  }
  const uint64_t h = New();
  std::thread([&] { EXPECT_NE(Pin<Counted>(h), nullptr); }).join();
  const size_t records = hazard::RecordsForTesting();
  for (int i = 0; i < 32; ++i) std::thread([&] { EXPECT_NE(Pin<Counted>(h), nullptr); }).join();
  EXPECT_EQ(hazard::RecordsForTesting(), records) << "each exiting thread's record is taken by the next";
  table.Remove(h);
  EXPECT_EQ(destroyed.load(), 1);
}

// Lookups racing removals and reinsertions: every Ref names a live object of its own handle.
TEST_F(CoreHandleTablePins, PinsRacingRemovalsNeverSeeAFreedOrForeignObject) {
  constexpr int kHandles = 16;
  std::vector<std::atomic<uint64_t>> handles(kHandles);
  for (auto& h : handles) h = New();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> found{0};
  auto reader = [&] {
    for (uint32_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      const uint64_t h = handles[i % kHandles].load();
      Ref<Counted> a = Pin<Counted>(h);
      Ref<Counted> b = Pin<Counted>(handles[(i + 1) % kHandles].load());
      if (a == nullptr) continue;
      found.fetch_add(1, std::memory_order_relaxed);
      if (a->handle() != h || a->magic != Counted::kAlive) {
        ADD_FAILURE() << "handle " << h << " pinned object of handle " << a->handle() << ", magic " << a->magic;
        return;
      }
      if (b != nullptr && b->magic != Counted::kAlive) {
        ADD_FAILURE() << "a second pin saw a freed object";
        return;
      }
    }
  };
  std::thread r1(reader);
  std::thread r2(reader);
  int rounds = 0;
  // At least 4000 replacements, and on until the readers found objects while they happened.
  for (; rounds < 4000 || (found.load() < 2000 && rounds < 4'000'000); ++rounds) {
    auto& slot = handles[rounds % kHandles];
    const uint64_t old = slot.load();
    slot = New();
    table.Remove(old);
  }
  stop = true;
  r1.join();
  r2.join();
  EXPECT_GE(found.load(), 2000U) << "the readers hardly ran";
  for (auto& h : handles) table.Remove(h.load());
  EXPECT_EQ(destroyed.load(), rounds + kHandles);
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

// The last reader of a retired object destroys it before its Release returns, even while other threads release
// pins of their own with the retired list non-empty (a destroy returns with its buffer's bytes given back).
TEST_F(CoreHandleTablePins, TheLastReaderDestroysARetiredObjectBeforeItsCallReturns) {
  const uint64_t held = New();
  PinOnAnotherThread holder(held);  // keeps an object retired, so that every Release looks at the list
  table.Remove(held);
  const uint64_t busy = New();
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop.load(std::memory_order_relaxed)) EXPECT_NE(Pin<Counted>(busy), nullptr);
  });
  int late = 0;
  for (int round = 0; round < 20000; ++round) {
    const int before = destroyed.load();
    {
      Ref<Counted> ref = Pin<Counted>(New());
      table.Remove(ref->handle());
    }
    late += destroyed.load() == before + 1 ? 0 : 1;
  }
  stop = true;
  other.join();
  EXPECT_EQ(late, 0) << "destroyed after the last reader's Release returned, " << late << " times of 20000";
  EXPECT_TRUE(holder.Release());
  table.Remove(busy);
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

// A child of fork() looks up and removes objects of its own while a parent's thread was inside a lookup of a removed
// object at the fork (docs/threading.md, "fork()"): the child starts with that thread's record given back and an
// empty retired list, and its removals work and free.
TEST_F(CoreHandleTablePins, AForkedChildPinsAndRemovesItsOwnObjects) {
  const uint64_t held = New();
  PinOnAnotherThread holder(held);
  table.Remove(held);  // retired, published by the holder: the parent's retired list is not empty at the fork
  const pid_t child = fork();
  if (child == 0) {
    int failures = hazard::RetiredForTesting() != 0 ? 1 : 0;  // the parent's list stayed with the parent
    std::atomic<int> child_destroyed{0};
    const uint64_t h = table.Insert(HandleType::kEvent, std::make_shared<Counted>(&child_destroyed));
    {
      Ref<Counted> ref = Pin<Counted>(h);
      failures += ref == nullptr ? 1 : 0;
      table.Remove(h);
      failures += child_destroyed.load() != 0 ? 1 : 0;  // still pinned here
    }
    failures += child_destroyed.load() != 1 ? 1 : 0;
    _exit(failures);
  }
  EXPECT_TRUE(holder.Release());
  ASSERT_GT(child, 0) << "fork failed";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's checks failed: status " << status;
  EXPECT_EQ(destroyed.load(), 1);
  EXPECT_EQ(hazard::RetiredForTesting(), 0U);
}

}  // namespace
}  // namespace accel::core
