// The core's handle table on its own (core/lib/handle_table.cc, docs/handles.md): a slot that used all its
// generations is retired, so no handle it gave out ever names a later object.
#include "handle_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
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

}  // namespace
}  // namespace accel::core
