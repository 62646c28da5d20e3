// Memory on the host device: round trips in every direction, fills, maps,
// pinned memory, memory info, stream-ordered free.
#include <atomic>
#include <cstring>
#include <latch>
#include <numeric>
#include <vector>

#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::ScopedInstance;

class MemoryTest : public ::testing::TestWithParam<accel_memory_kind_t> {
 protected:
  void SetUp() override {
    device_ = instance_.DeviceOf("host");
    ASSERT_NE(device_, nullptr);
    ASSERT_EQ(accel_stream_create(device_, nullptr, &stream_), ACCEL_SUCCESS) << accel_last_error();
  }
  void TearDown() override { EXPECT_EQ(accel_stream_destroy(stream_), ACCEL_SUCCESS); }
  accel_buffer_t Make(uint64_t size) {
    accel_buffer_desc_t desc = BufferDesc(size, GetParam());
    accel_buffer_t b = nullptr;
    EXPECT_EQ(accel_buffer_create(device_, &desc, &b), ACCEL_SUCCESS) << accel_last_error();
    return b;
  }
  void Sync() {
    ASSERT_EQ(accel_stream_synchronize(stream_, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  }

  ScopedInstance instance_{nullptr};
  accel_device_t device_ = nullptr;
  accel_stream_t stream_ = nullptr;
};

TEST_P(MemoryTest, RoundTripsEveryDirection) {
  constexpr size_t kSize = 1 << 20;
  std::vector<uint8_t> in(kSize), out(kSize, 0);
  for (size_t i = 0; i < kSize; ++i) in[i] = static_cast<uint8_t>(i * 131 + 7);
  accel_buffer_t a = Make(kSize), b = Make(kSize);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, in.data(), a, 0, kSize), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer(stream_, a, 0, b, 0, kSize), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out.data(), kSize), ACCEL_SUCCESS);
  Sync();
  EXPECT_EQ(in, out);
  EXPECT_EQ(accel_buffer_destroy(a), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
}

TEST_P(MemoryTest, OffsetsAndEdgesAreHonoured) {
  accel_buffer_t a = Make(4096), b = Make(4096);
  std::vector<uint8_t> zeros(4096, 0), in(100), out(4096);
  std::iota(in.begin(), in.end(), 1);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, zeros.data(), b, 0, 4096), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, in.data(), a, 4096 - 100, 100), ACCEL_SUCCESS);  // last bytes
  ASSERT_EQ(accel_stream_copy_buffer(stream_, a, 4096 - 100, b, 1, 100), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out.data(), 4096), ACCEL_SUCCESS);
  Sync();
  EXPECT_EQ(out[0], 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(out[1 + i], in[i]) << i;
  EXPECT_EQ(out[101], 0);
  // One byte past the end is refused and nothing was enqueued.
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream_, in.data(), a, 4096 - 99, 100), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'dst_offset' + 'size' (3997 + 100) is past the end of 'dst'"),
            std::string::npos)
      << accel_last_error();
  // Zero-size copies are valid no-ops.
  EXPECT_EQ(accel_stream_copy_buffer(stream_, a, 4096, b, 0, 0), ACCEL_SUCCESS);
  // Overlap within one buffer is refused.
  EXPECT_EQ(accel_stream_copy_buffer(stream_, a, 0, a, 10, 20), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(accel_stream_copy_buffer(stream_, a, 0, a, 20, 20), ACCEL_SUCCESS);
  Sync();
  accel_buffer_destroy(a);
  accel_buffer_destroy(b);
}

TEST_P(MemoryTest, FillsWithEachPatternSize) {
  accel_buffer_t a = Make(64);
  const uint8_t p1 = 0xAB;
  const uint16_t p2 = 0x1234;
  const uint32_t p4 = 0xDEADBEEF;
  ASSERT_EQ(accel_stream_fill_buffer(stream_, a, 0, 64, &p1, 1), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_fill_buffer(stream_, a, 8, 8, &p2, 2), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_fill_buffer(stream_, a, 32, 16, &p4, 4), ACCEL_SUCCESS);
  uint8_t out[64];
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a, 0, out, 64), ACCEL_SUCCESS);
  Sync();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], 0xAB);
  for (int i = 8; i < 16; i += 2) EXPECT_EQ(out[i] | (out[i + 1] << 8), 0x1234);
  for (int i = 32; i < 48; i += 4) {
    uint32_t v;
    std::memcpy(&v, out + i, 4);
    EXPECT_EQ(v, p4);
  }
  EXPECT_EQ(out[48], 0xAB);
  EXPECT_EQ(accel_stream_fill_buffer(stream_, a, 2, 8, &p4, 4), ACCEL_ERROR_INVALID_ARGUMENT);
  accel_buffer_destroy(a);
}

TEST_P(MemoryTest, MapSeesStreamWritesAndStreamSeesMapWrites) {
  accel_buffer_t a = Make(256);
  const uint32_t pattern = 0x01020304;
  ASSERT_EQ(accel_stream_fill_buffer(stream_, a, 0, 256, &pattern, 4), ACCEL_SUCCESS);
  Sync();
  void* p = nullptr;
  ASSERT_EQ(accel_buffer_map(a, 16, 32, ACCEL_MAP_READ | ACCEL_MAP_WRITE, &p), ACCEL_SUCCESS) << accel_last_error();
  uint32_t v;
  std::memcpy(&v, p, 4);
  EXPECT_EQ(v, pattern);
  std::memset(p, 0x77, 32);
  void* again = nullptr;
  EXPECT_EQ(accel_buffer_map(a, 0, 8, ACCEL_MAP_READ, &again), ACCEL_ERROR_FAILED_PRECONDITION);
  accel_buffer_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES;
  props.struct_size = sizeof(props);
  ASSERT_EQ(accel_buffer_get_properties(a, &props), ACCEL_SUCCESS);
  EXPECT_EQ(props.mapped, 1u);
  EXPECT_EQ(props.size, 256u);
  EXPECT_EQ(props.memory_kind, GetParam());
  EXPECT_EQ(props.device, device_);
  ASSERT_EQ(accel_buffer_unmap(a), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_unmap(a), ACCEL_ERROR_FAILED_PRECONDITION);
  uint8_t out[64];
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a, 0, out, 64), ACCEL_SUCCESS);
  Sync();
  EXPECT_EQ(out[15], 0x01);
  EXPECT_EQ(out[16], 0x77);
  EXPECT_EQ(out[47], 0x77);
  EXPECT_EQ(out[48], 0x04);
  accel_buffer_destroy(a);
}

accel_status_t WaitOnLatch(void* latch, accel_status_t status) {
  if (status == ACCEL_SUCCESS) static_cast<std::latch*>(latch)->wait();
  return ACCEL_SUCCESS;
}

TEST_P(MemoryTest, StreamOrderedFreeOutlivesQueuedWork) {
  // Queued work still reads the buffer after both kinds of free; ASan would
  // report a use after free if the memory went early.
  constexpr size_t kSize = 1 << 16;
  std::vector<uint8_t> in(kSize, 0x5A), out1(kSize, 0), out2(kSize, 0);
  accel_buffer_t a = Make(kSize), b = Make(kSize);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, in.data(), a, 0, kSize), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream_, in.data(), b, 0, kSize), ACCEL_SUCCESS);
  std::latch gate(1);
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream_, &WaitOnLatch, &gate), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, a, 0, out1.data(), kSize), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream_, b, 0, out2.data(), kSize), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_destroy(a), ACCEL_SUCCESS);  // handle gone now
  ASSERT_EQ(accel_stream_free_buffer(stream_, b), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(a), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_stream_query(stream_), ACCEL_NOT_READY);
  gate.count_down();
  Sync();
  EXPECT_EQ(out1, in);
  EXPECT_EQ(out2, in);
}

TEST_P(MemoryTest, AllocationPastTheDeviceIsRefusedWithSizes) {
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_info(device_, ACCEL_DEVICE_INFO_MAX_ALLOCATION, sizeof(total), &total, nullptr),
            ACCEL_SUCCESS);
  accel_buffer_desc_t desc = BufferDesc(total + 1, GetParam());
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(device_, &desc, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  std::string message = accel_last_error();
  EXPECT_NE(message.find("accel_buffer_create: device 0 (host: "), std::string::npos) << message;
  EXPECT_NE(message.find("requested"), std::string::npos) << message;
  EXPECT_EQ(b, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Kinds, MemoryTest, ::testing::Values(ACCEL_MEMORY_KIND_DEVICE, ACCEL_MEMORY_KIND_HOST_PINNED),
                         [](const auto& param_info) {
                           return param_info.param == ACCEL_MEMORY_KIND_DEVICE ? std::string("Device")
                                                                               : std::string("HostPinned");
                         });

TEST(Memory, MemoryInfoMatchesTheMachine) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_EQ(accel_device_get_memory_info(host, &free_bytes, &total), ACCEL_SUCCESS);
  EXPECT_GT(free_bytes, 0u);
  EXPECT_LE(free_bytes, total);
  EXPECT_EQ(total, ScopedInstance::Capabilities(host).memory_total);
  uint64_t via_key = 0;
  ASSERT_EQ(accel_device_get_info(host, ACCEL_DEVICE_INFO_MEMORY_FREE, sizeof(via_key), &via_key, nullptr),
            ACCEL_SUCCESS);
  EXPECT_GT(via_key, 0u);
}

}  // namespace
