// accel.hpp against the host backend: RAII ownership, exceptions that carry
// the status and the C message, host callbacks from lambdas.
#include <gtest/gtest.h>
#include <accel/accel.hpp>

#include <atomic>
#include <cstring>
#include <vector>

namespace {

TEST(Hpp, RoundTripThroughOwners) {
  accel::Instance instance;
  std::vector<accel::Device> devices = instance.devices();
  ASSERT_FALSE(devices.empty());
  accel::Device device = devices[0];
  accel::Buffer a(device, 1024), b(device, 1024);
  accel::Stream stream(device);
  std::vector<uint32_t> in(256), out(256, 0);
  for (uint32_t i = 0; i < 256; ++i) in[i] = i * 3;
  stream.copy_from_host(in.data(), a, 1024);
  stream.copy(a, b, 1024);
  stream.copy_to_host(b, out.data(), 1024);
  std::atomic<int> ran{0};
  stream.host_callback([&ran] { ++ran; });
  stream.free(std::move(a));
  ASSERT_TRUE(stream.synchronize());
  EXPECT_EQ(out, in);
  EXPECT_EQ(ran.load(), 1);
}

TEST(Hpp, ErrorsCarryStatusAndMessage) {
  accel::Instance instance;
  accel::Device device = instance.devices().at(0);
  try {
    accel::Buffer huge(device, uint64_t{1} << 62);
    FAIL() << "allocation past the device succeeded";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_STREQ(e.status_name(), "ACCEL_ERROR_RESOURCE_EXHAUSTED");
    EXPECT_NE(std::string(e.what()).find("accel_buffer_create: device 0 (host: "), std::string::npos) << e.what();
  }
}

TEST(Hpp, AsynchronousErrorThrowsFromSynchronizeAndSkippedCallablesAreFreed) {
  accel::Instance instance;
  accel::Stream stream(instance.devices().at(0));
  auto shared = std::make_shared<int>(1);
  stream.host_callback([]() -> accel_status_t { return ACCEL_ERROR_DEVICE_LOST; });
  stream.host_callback([shared] { *shared = 2; });  // skipped: must not run, must be freed
  try {
    stream.synchronize();
    FAIL() << "no asynchronous error";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_DEVICE_LOST);
    EXPECT_NE(std::string(e.what()).find("accel_stream_synchronize"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*shared, 1);
  EXPECT_EQ(shared.use_count(), 1) << "the skipped callable was not destroyed";
  stream.clear_error();
  EXPECT_TRUE(stream.synchronize());
}

TEST(Hpp, LoaderReportAndCapabilities) {
  accel::Instance instance;
  auto report = instance.loader_report();
  ASSERT_FALSE(report.empty());
  bool host_loaded = false;
  for (const auto& entry : report) host_loaded = host_loaded || entry.backend_name == "host";
  EXPECT_TRUE(host_loaded);
  accel::Device device = instance.devices().at(0);
  EXPECT_EQ(device.info<uint64_t>(ACCEL_DEVICE_INFO_MEMORY_TOTAL), device.capabilities().memory_total);
  EXPECT_EQ(device.stable_id(), device.capabilities().stable_id);
  EXPECT_THROW(device.info<uint32_t>(ACCEL_DEVICE_INFO_MEMORY_TOTAL), accel::Error) << "size mismatch must throw";
}

}  // namespace
