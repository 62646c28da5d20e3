// What the in-tree backends share (backends/common/backend_support.h): the ring their streams queue operations in,
// and the host pattern fill of the host and Vulkan backends.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/fill.h"
#include "common/ring.h"

namespace {

using accel::backend::FillPattern;
using accel::backend::Ring;

TEST(Ring, AppendedAndPushedElementsComeOutInOrderAcrossGrowth) {
  Ring<int> ring;
  for (int i = 0; i < 40; ++i) {
    if (i % 2 == 0) {
      ring.push_back(i);
    } else {
      ring.append() = i;
    }
    if (i % 3 == 2) {
      ASSERT_EQ(ring.front(), i / 3);  // the (i / 3)-th drop takes element i / 3
      ring.drop_front();
    }
  }
  std::vector<int> rest;
  while (!ring.empty()) rest.push_back(ring.pop_front());
  ASSERT_EQ(rest.size(), 40u - 13u);
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i], static_cast<int>(13 + i));
}

TEST(Ring, DropFrontLeavesTheSlotForTheCallerToRelease) {
  // A slot dropped without a move keeps its value until it is released or reused: the caller releases it first.
  Ring<std::unique_ptr<int>> ring;
  ring.append() = std::make_unique<int>(1);
  ring.append() = std::make_unique<int>(2);
  ring.front().reset();
  ring.drop_front();
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(*ring.front(), 2);
  std::unique_ptr<int>& reused = ring.append();  // wraps to a fresh slot of the 16, never the live one
  EXPECT_EQ(reused, nullptr);
  reused = std::make_unique<int>(3);
  EXPECT_EQ(*ring.pop_front(), 2);
  EXPECT_EQ(*ring.pop_front(), 3);
  EXPECT_TRUE(ring.empty());
}

TEST(FillPattern, EveryPatternSizeAndLengthRepeatsFromItsFirstByte) {
  const std::byte pattern[4] = {std::byte{0x11}, std::byte{0x22}, std::byte{0x33}, std::byte{0x44}};
  for (uint32_t pattern_size : {1u, 2u, 4u}) {
    for (uint64_t size : {0u, 1u, 3u, 4u, 7u, 64u, 1000u, 4099u}) {
      std::vector<std::byte> out(size + 2, std::byte{0xee});
      FillPattern(out.data() + 1, size, pattern, pattern_size);
      EXPECT_EQ(out.front(), std::byte{0xee}) << "wrote before the range";
      EXPECT_EQ(out.back(), std::byte{0xee}) << "wrote past the range";
      for (uint64_t i = 0; i < size; ++i) {
        ASSERT_EQ(out[1 + i], pattern[i % pattern_size])
            << "pattern " << pattern_size << ", size " << size << ", byte " << i;
      }
    }
  }
}

}  // namespace
