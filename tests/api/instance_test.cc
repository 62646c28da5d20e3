// Instances: independence of two instances in one process, teardown of
// everything left alive, stale handles afterwards, description checks.
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::ManifestJson;
using accel_test::ScopedInstance;
using accel_test::TempDir;
using accel_test::TestBackend;

TEST(Instance, TwoInstancesWithDifferentSettingsAreIndependent) {
  TempDir dir;
  std::string fake = dir.Write("fake.json", ManifestJson("fake_good", TestBackend("fake_good")));
  accel_instance_desc_t host_only = ScopedInstance::Files(ACCEL_TEST_HOST_MANIFEST);
  accel_instance_desc_t fake_only = ScopedInstance::Files(fake);
  auto a = std::make_unique<ScopedInstance>(&host_only);
  auto b = std::make_unique<ScopedInstance>(&fake_only);
  ASSERT_NE(a->DeviceOf("host"), nullptr);
  EXPECT_EQ(a->DeviceOf("fake_good"), nullptr);
  ASSERT_NE(b->DeviceOf("fake_good"), nullptr);
  EXPECT_EQ(b->DeviceOf("host"), nullptr);
  EXPECT_EQ(a->Report().size(), 1u);
  EXPECT_EQ(b->Report().size(), 1u);

  // Work in A while B is torn down.
  accel_device_t host = a->DeviceOf("host");
  accel_device_t fake_device = b->DeviceOf("fake_good");
  accel_buffer_desc_t desc = BufferDesc(128);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(host, &desc, &buffer), ACCEL_SUCCESS);
  b.reset();
  uint32_t kind = 0;
  EXPECT_EQ(accel_device_get_info(fake_device, ACCEL_DEVICE_INFO_KIND, sizeof(kind), &kind, nullptr),
            ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("stale device handle"), std::string::npos) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(host, nullptr, &stream), ACCEL_SUCCESS);
  const uint32_t pattern = 7;
  uint32_t out = 0;
  ASSERT_EQ(accel_stream_fill_buffer(stream, buffer, 0, 128, &pattern, 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 124, &out, 4), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS);
  EXPECT_EQ(out, 7u);
  // A's objects are deliberately left alive: destroying A frees them (ASan
  // reports a leak otherwise) and makes their handles stale.
  a.reset();
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_stream_query(stream), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_EQ(accel_device_get_info(host, ACCEL_DEVICE_INFO_KIND, sizeof(kind), &kind, nullptr),
            ACCEL_ERROR_INVALID_HANDLE);
}

TEST(Instance, SameDevicesGetTheSameStableIdsInEveryInstance) {
  ScopedInstance a(nullptr), b(nullptr);
  auto da = a.Devices(), db = b.Devices();
  ASSERT_EQ(da.size(), db.size());
  ASSERT_FALSE(da.empty());
  for (size_t i = 0; i < da.size(); ++i) {
    EXPECT_NE(da[i], db[i]) << "handles are per instance";
    EXPECT_STREQ(ScopedInstance::Capabilities(da[i]).stable_id, ScopedInstance::Capabilities(db[i]).stable_id);
  }
}

TEST(Instance, CreatesAndDestroysFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        accel_instance_t instance = nullptr;
        if (accel_instance_create(nullptr, &instance) != ACCEL_SUCCESS) ++failures;
        uint32_t n = 0;
        if (accel_instance_enumerate_devices(instance, &n, nullptr) != ACCEL_SUCCESS || n == 0) ++failures;
        if (accel_instance_destroy(instance) != ACCEL_SUCCESS) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Instance, DestroyTwiceIsAStaleHandle) {
  accel_instance_t instance = nullptr;
  ASSERT_EQ(accel_instance_create(nullptr, &instance), ACCEL_SUCCESS);
  ASSERT_EQ(accel_instance_destroy(instance), ACCEL_SUCCESS);
  EXPECT_EQ(accel_instance_destroy(instance), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("accel_instance_destroy: 'instance' is a stale instance handle"),
            std::string::npos)
      << accel_last_error();
}

// Two threads destroy the same instance at once: one tears it down, the other finds the handle stale (before, both
// could pass the lookup and run the teardown concurrently).
TEST(Instance, TwoRacingDestroysTearDownOnce) {
  constexpr int kRounds = 60;
  int both = 0, neither = 0, wrong = 0;
  for (int round = 0; round < kRounds; ++round) {
    accel_instance_t instance = nullptr;
    ASSERT_EQ(accel_instance_create(nullptr, &instance), ACCEL_SUCCESS) << accel_last_error();
    accel_status_t results[2] = {ACCEL_SUCCESS, ACCEL_SUCCESS};
    accel_test::RaceTwo([&](int t) { results[t] = accel_instance_destroy(instance); });
    const int ok = (results[0] == ACCEL_SUCCESS) + (results[1] == ACCEL_SUCCESS);
    if (ok == 2) ++both;
    if (ok == 0) ++neither;
    for (accel_status_t r : results) {
      if (r != ACCEL_SUCCESS && r != ACCEL_ERROR_INVALID_HANDLE) ++wrong;
    }
  }
  EXPECT_EQ(both, 0) << "both destroys succeeded: the teardown ran twice";
  EXPECT_EQ(neither, 0);
  EXPECT_EQ(wrong, 0);
}

TEST(Instance, RejectsMalformedDescriptions) {
  accel_instance_t instance = nullptr;
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  desc.struct_size = sizeof(desc);
  EXPECT_EQ(accel_instance_create(&desc, &instance), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc' has stype 7, expected 2"), std::string::npos);
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.flags = 0x100;
  EXPECT_EQ(accel_instance_create(&desc, &instance), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->flags' has unknown bits 0x100"), std::string::npos);
  desc.flags = 0;
  desc.log_level = static_cast<accel_log_level_t>(9);
  EXPECT_EQ(accel_instance_create(&desc, &instance), ACCEL_ERROR_INVALID_ENUM);
  EXPECT_EQ(instance, nullptr);
  EXPECT_EQ(accel_instance_create(nullptr, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
}

TEST(Instance, OlderSmallerDescriptionGetsDefaults) {
  // A caller compiled against a description that ended after `flags`.
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = offsetof(accel_instance_desc_t, backend_files);
  desc.backend_files = "/nonexistent.json";  // past struct_size: must be ignored
  ScopedInstance instance(&desc);
  EXPECT_NE(instance.DeviceOf("host"), nullptr);
}

struct LogCapture {
  std::vector<std::string> lines;
  std::mutex mutex;
  static void Callback(void* user, accel_log_level_t, const char* message) {
    auto* self = static_cast<LogCapture*>(user);
    std::lock_guard lock(self->mutex);
    self->lines.emplace_back(message);
  }
};

TEST(Instance, LogCallbackReceivesLoaderMessages) {
  LogCapture capture;
  accel_instance_desc_t desc = ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST) + ":/nonexistent/x.json");
  desc.log_level = ACCEL_LOG_LEVEL_DEBUG;
  desc.log_callback = &LogCapture::Callback;
  desc.log_user_data = &capture;
  { ScopedInstance instance(&desc); }
  bool saw_failure = false, saw_loaded = false;
  for (const auto& line : capture.lines) {
    if (line.find("/nonexistent/x.json") != std::string::npos) saw_failure = true;
    if (line.find("loaded backend 'host'") != std::string::npos) saw_loaded = true;
  }
  EXPECT_TRUE(saw_failure);
  EXPECT_TRUE(saw_loaded);
}

}  // namespace
