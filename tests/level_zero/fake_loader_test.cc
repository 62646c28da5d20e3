// The Level Zero backend's streams on the fake loader (tests/level_zero/fake_libze_loader.cc) where a conformance
// run cannot show it.
//
// Streams polled while their work runs (backends/level_zero/stream.cc, "markers"):
// stream_query and a bounded stream_synchronize ask a marker event appended after the stream's commands. A marker is
// an event in an event pool of its own; one appended per poll made an application that busy-polls a long kernel
// create 10^5 pools and barriers. Polls with nothing appended in between share one marker, and the stream keeps only
// a few signalled ones for reuse.
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

using accel_test::ScopedInstance;

// Points the backend at the fake loader, with `devices` devices and the fake's other settings given (each test runs
// in a process of its own: the settings are read when the instance loads the backend).
void UseFakeLoader(const char* devices, std::initializer_list<std::pair<const char*, const char*>> settings = {}) {
  setenv("ACCEL_LEVEL_ZERO_LIBRARY", ACCEL_TEST_FAKE_ZE, 1);
  setenv("ACCEL_FAKE_ZE_DEVICES", devices, 1);
  for (const auto& [name, value] : settings) setenv(name, value, 1);
}

class LevelZeroPolling : public ::testing::Test {
 protected:
  void SetUp() override {
    UseFakeLoader("1", {{"ACCEL_FAKE_ZE_COMMAND_DELAY_US", "100000"}});  // every command of a list takes 100 ms
    fake_ = dlopen(ACCEL_TEST_FAKE_ZE, RTLD_NOW | RTLD_LOCAL);           // the handle the backend's dlopen will share
    ASSERT_NE(fake_, nullptr) << dlerror();
    live_pools_ = reinterpret_cast<int64_t (*)()>(dlsym(fake_, "accel_fake_ze_live_event_pools"));
    ASSERT_NE(live_pools_, nullptr);
  }
  void TearDown() override {
    if (fake_ != nullptr) dlclose(fake_);
  }
  void* fake_ = nullptr;
  int64_t (*live_pools_)() = nullptr;
};

TEST_F(LevelZeroPolling, PollingPendingWorkSharesOneMarker) {
  accel_instance_desc_t desc = ScopedInstance::Backends("level_zero");
  ScopedInstance instance(&desc);
  std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_EQ(devices.size(), 1U) << "the fake loader's one device";
  accel_buffer_desc_t bdesc = accel_test::BufferDesc(4096);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(devices[0], &bdesc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  const int64_t without_stream = live_pools_();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(devices[0], nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  const uint32_t pattern = 7;
  const int64_t before = live_pools_();

  // stream_query, polled until the 100 ms fill is done.
  ASSERT_EQ(accel_stream_fill_buffer(stream, buffer, 0, 4096, &pattern, sizeof(pattern)), ACCEL_SUCCESS)
      << accel_last_error();
  int polls = 0;
  int64_t most = 0;
  accel_status_t status = ACCEL_NOT_READY;
  while ((status = accel_stream_query(stream)) == ACCEL_NOT_READY) {
    ++polls;
    most = std::max(most, live_pools_() - before);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_EQ(status, ACCEL_SUCCESS) << accel_last_error();
  EXPECT_GE(polls, 10) << "the fill was not pending while polled";
  EXPECT_LE(most, 1) << polls << " polls of one pending fill made " << most << " markers";

  // A bounded synchronize polls the same way, and so do many fills' worth of queries.
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(accel_stream_fill_buffer(stream, buffer, 0, 4096, &pattern, sizeof(pattern)), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_synchronize(stream, 10'000'000'000), ACCEL_SUCCESS) << accel_last_error();
  }
  EXPECT_LE(live_pools_() - before, 4) << "the stream keeps at most four signalled markers for reuse";
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(live_pools_(), without_stream) << "the stream's markers (and its own drain event) go with it";
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
}

// A kernel compiled for a fixed work-group size says so (accel_kernel_properties_t.required_work_group_size), and the
// core refuses another block at launch with the reason; before, the size only lowered max_work_group_size and the
// launch failed later, as the stream's error, from zeKernelSetGroupSize.
TEST(LevelZeroKernels, RequiredWorkGroupSizeIsReportedAndEnforced) {
  UseFakeLoader("1", {{"ACCEL_FAKE_ZE_REQUIRED_GROUP", "16,1,1"}});
  accel_instance_desc_t desc = ScopedInstance::Backends("level_zero");
  ScopedInstance instance(&desc);
  std::vector<accel_device_t> devices = instance.Devices();
  ASSERT_EQ(devices.size(), 1U);
  const std::string path = std::string(ACCEL_TEST_CORPUS) + "/spirv-opencl/corpus.spv";
  accel_module_source_t source{};
  source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  source.struct_size = sizeof(source);
  source.format = ACCEL_KERNEL_FORMAT_SPIRV_OPENCL;
  source.path = path.c_str();
  accel_module_desc_t mdesc{};
  mdesc.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
  mdesc.struct_size = sizeof(mdesc);
  mdesc.sources = &source;
  mdesc.source_count = 1;
  accel_module_t module = nullptr;
  ASSERT_EQ(accel_module_create(devices[0], &mdesc, &module), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t kernel = nullptr;
  ASSERT_EQ(accel_module_get_kernel(module, "fill_u32", &kernel), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES;
  props.struct_size = sizeof(props);
  ASSERT_EQ(accel_kernel_get_properties(kernel, &props), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(props.required_work_group_size[0], 16U);
  EXPECT_EQ(props.required_work_group_size[1], 1U);
  EXPECT_EQ(props.required_work_group_size[2], 1U);
  EXPECT_EQ(props.max_work_group_size, 16U);

  accel_buffer_desc_t bdesc = accel_test::BufferDesc(4096);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(devices[0], &bdesc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(devices[0], nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  const uint32_t value = 5;
  const uint32_t count = 1024;
  accel_kernel_arg_t args[3] = {};
  for (auto& a : args) {
    a.stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
    a.struct_size = sizeof(a);
  }
  args[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  args[0].buffer = buffer;
  args[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[1].size = sizeof(value);
  args[1].value = &value;
  args[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[2].size = sizeof(count);
  args[2].value = &count;
  accel_launch_desc_t launch{};
  launch.stype = ACCEL_STRUCTURE_TYPE_LAUNCH_DESC;
  launch.struct_size = sizeof(launch);
  launch.grid[0] = 64;
  launch.grid[1] = launch.grid[2] = 1;
  launch.block[0] = 8;  // not the required 16
  launch.block[1] = launch.block[2] = 1;
  launch.args = args;
  launch.arg_count = 3;
  EXPECT_EQ(accel_stream_launch_kernel(stream, kernel, &launch), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("16"), std::string::npos) << accel_last_error();
  launch.block[0] = 16;
  launch.grid[0] = 64;
  EXPECT_EQ(accel_stream_launch_kernel(stream, kernel, &launch), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
  EXPECT_EQ(accel_module_destroy(module), ACCEL_SUCCESS);
}

}  // namespace
