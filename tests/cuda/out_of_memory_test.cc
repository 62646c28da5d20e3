// Host memory running out on a GPU stream's worker (backends/common/gpu_stream.h), on the fake CUDA driver
// (fake_libcuda.cc): the worker, which waits for the device once 256 operations are outstanding and then lets go
// of what they held, allocates nothing to do so, so that it cannot end the process (docs/errors.md: never abort);
// the stream goes on and its work completes.
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "failing_allocator.h"
#include "test_util.h"

namespace {

using accel_test::ScopedInstance;

accel_copy_statistics_t Statistics(accel_stream_t stream) {
  accel_copy_statistics_t s{};
  s.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  s.struct_size = sizeof(s);
  EXPECT_EQ(accel_stream_get_copy_statistics(stream, &s), ACCEL_SUCCESS) << accel_last_error();
  return s;
}

// Allocations of 16 KiB and more fail while 600 copies are enqueued and the worker waits for the first 256 and
// releases them (a list of 64 completed operations is about 16 KiB): every copy is accepted, the worker completes
// them, a query meanwhile says NOT_READY or SUCCESS, and once memory is back everything has run.
TEST(GpuStreamOutOfMemory, TheWorkerReleasesCompletedWorkWithoutAllocating) {
  ASSERT_EQ(setenv("ACCEL_CUDA_LIBRARY", ACCEL_TEST_FAKE_CUDA, 1), 0);
  ASSERT_EQ(setenv("ACCEL_FAKE_CUDA_DEVICES", "1", 1), 0);
  const accel_instance_desc_t desc = ScopedInstance::Backends("cuda");
  ScopedInstance instance(&desc);
  const std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_EQ(devices.size(), 1u) << "the fake CUDA driver's one device";
  accel_buffer_desc_t bd{};
  bd.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  bd.struct_size = sizeof(bd);
  bd.size = 4096;
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(devices[0], &bd, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(devices[0], nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  std::vector<unsigned char> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7 + 1);

  constexpr int kCopies = 600;
  accel_test::FailAllocationsFrom(16 * 1024);
  int accepted = 0;
  for (int i = 0; i < kCopies; ++i) {
    if (accel_stream_copy_host_to_buffer(stream, data.data(), buffer, 0, data.size()) == ACCEL_SUCCESS) ++accepted;
  }
  // The worker is woken once 256 are outstanding; wait (asleep, bounded) until it has completed some.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  uint64_t completed = 0;
  while ((completed = Statistics(stream).host_to_device_copies) < 256 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const accel_status_t queried = accel_stream_query(stream);
  accel_test::FailAllocationsFrom(0);
  EXPECT_EQ(accepted, kCopies) << accel_last_error();
  EXPECT_GE(completed, 256u) << "the worker did not complete the first 256 copies within 60 s";
  EXPECT_TRUE(queried == ACCEL_SUCCESS || queried == ACCEL_NOT_READY) << accel_status_name(queried);

  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Statistics(stream).host_to_device_copies, static_cast<uint64_t>(kCopies));
  std::vector<unsigned char> back(data.size());
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 0, back.data(), back.size()), ACCEL_SUCCESS)
      << accel_last_error();
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back, data);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS) << accel_last_error();
}

}  // namespace
