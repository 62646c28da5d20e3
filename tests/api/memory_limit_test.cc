// Process memory limits (ACCEL_MEMORY_LIMIT) and tenants: every device
// allocation is counted once per physical device, and one past a limit fails
// for that process or tenant alone (docs/memory-limits.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::RunCommand;
using accel_test::ScopedInstance;
using accel_test::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Every test runs on a simulated 8-GPU node (ACCEL_BACKENDS=sim from ctest).
const bool kProfileSet = setenv("ACCEL_SIM_PROFILE", "h100-sxm-8", 0) == 0;

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

std::vector<accel_physical_device_t> Physical(accel_instance_t instance) {
  uint32_t n = 0;
  EXPECT_EQ(accel_instance_enumerate_physical_devices(instance, &n, nullptr), ACCEL_SUCCESS);
  std::vector<accel_physical_device_t> v(n);
  if (n > 0) {
    EXPECT_EQ(accel_instance_enumerate_physical_devices(instance, &n, v.data()), ACCEL_SUCCESS);
  }
  return v;
}

accel_device_t FirstPath(accel_physical_device_t physical) {
  uint32_t n = 1;
  accel_device_t device = nullptr;
  EXPECT_EQ(accel_physical_device_enumerate_devices(physical, &n, &device), ACCEL_SUCCESS);
  return device;
}

accel_memory_usage_t Usage(accel_physical_device_t physical) {
  accel_memory_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_physical_device_get_memory_usage(physical, &u), ACCEL_SUCCESS) << accel_last_error();
  return u;
}

accel_memory_usage_t Usage(accel_tenant_t tenant, accel_physical_device_t physical) {
  accel_memory_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_tenant_get_memory_usage(tenant, physical, &u), ACCEL_SUCCESS) << accel_last_error();
  return u;
}

accel_status_t Alloc(accel_device_t device, uint64_t size, accel_buffer_t* out,
                     accel_memory_kind_t kind = ACCEL_MEMORY_KIND_DEVICE) {
  const accel_buffer_desc_t desc = BufferDesc(size, kind);
  return accel_buffer_create(device, &desc, out);
}

accel_tenant_t MakeTenant(accel_instance_t instance, const char* name, std::vector<accel_tenant_limit_t> limits,
                          uint64_t other_limit = 0) {
  accel_tenant_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  d.struct_size = sizeof(d);
  d.name = name;
  d.limits = limits.data();
  d.limit_count = static_cast<uint32_t>(limits.size());
  d.other_limit = other_limit;
  accel_tenant_t tenant = nullptr;
  EXPECT_EQ(accel_tenant_create(instance, &d, &tenant), ACCEL_SUCCESS) << accel_last_error();
  return tenant;
}

TEST(MemoryLimit, ProcessLimitRefusesPastItAndReportsUsage) {
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "64MiB");
  ScopedInstance instance(nullptr);
  auto physical = Physical(instance.get());
  ASSERT_FALSE(physical.empty());
  accel_device_t device = FirstPath(physical[0]);

  accel_buffer_t a = nullptr;
  accel_buffer_t b = nullptr;
  ASSERT_EQ(Alloc(device, 48 * kMiB, &a), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Alloc(device, 32 * kMiB, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("32 MiB requested"), std::string::npos) << message;
  EXPECT_NE(message.find("48 MiB of its 64 MiB limit"), std::string::npos) << message;
  EXPECT_NE(message.find("ACCEL_MEMORY_LIMIT"), std::string::npos) << message;
  EXPECT_EQ(b, nullptr);

  accel_memory_usage_t u = Usage(physical[0]);
  EXPECT_EQ(u.used, 48 * kMiB);
  EXPECT_EQ(u.limit, 64 * kMiB);
  EXPECT_EQ(u.refused, 1U);
  EXPECT_EQ(u.buffers, 1U);
  uint64_t free_bytes = 0;
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_memory_info(device, &free_bytes, &total), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(total, 64 * kMiB);
  EXPECT_LE(free_bytes, 16 * kMiB);

  // Pinned host memory is not device memory: not counted.
  accel_buffer_t pinned = nullptr;
  ASSERT_EQ(Alloc(device, 32 * kMiB, &pinned, ACCEL_MEMORY_KIND_HOST_PINNED), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Usage(physical[0]).used, 48 * kMiB);
  ASSERT_EQ(accel_buffer_destroy(pinned), ACCEL_SUCCESS);

  // 16 MiB still fit exactly; freeing gives the bytes back.
  ASSERT_EQ(Alloc(device, 16 * kMiB, &b), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_buffer_destroy(a), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  u = Usage(physical[0]);
  EXPECT_EQ(u.used, 0U);
  EXPECT_EQ(u.peak, 64 * kMiB);
  EXPECT_EQ(u.buffers, 0U);
}

TEST(MemoryLimit, SharedByEveryInstanceOfTheProcess) {
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "8MiB");
  ScopedInstance one(nullptr);
  ScopedInstance two(nullptr);
  accel_device_t d1 = FirstPath(Physical(one.get())[0]);
  accel_device_t d2 = FirstPath(Physical(two.get())[0]);
  accel_buffer_t a = nullptr;
  accel_buffer_t b = nullptr;
  ASSERT_EQ(Alloc(d1, 6 * kMiB, &a), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Alloc(d2, 6 * kMiB, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED) << "a second instance is no way around the limit";
  ASSERT_EQ(accel_buffer_destroy(a), ACCEL_SUCCESS);
  ASSERT_EQ(Alloc(d2, 6 * kMiB, &b), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
}

TEST(MemoryLimit, FreeMemoryIsWhatTheLimitLeavesByEitherCall) {
  // accel_device_get_info(MEMORY_FREE) gave the device's free bytes, past the limit get_memory_info applied.
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "64MiB");
  ScopedInstance instance(nullptr);
  accel_device_t device = FirstPath(Physical(instance.get())[0]);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(Alloc(device, 16 * kMiB, &b), ACCEL_SUCCESS) << accel_last_error();
  uint64_t free_bytes = 0;
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_memory_info(device, &free_bytes, &total), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(total, 64 * kMiB);
  EXPECT_EQ(free_bytes, 48 * kMiB);
  uint64_t info_free = 0;
  ASSERT_EQ(accel_device_get_info(device, ACCEL_DEVICE_INFO_MEMORY_FREE, sizeof(info_free), &info_free, nullptr),
            ACCEL_SUCCESS)
      << accel_last_error();
  EXPECT_EQ(info_free, 48 * kMiB);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
}

TEST(MemoryLimit, AnInstanceThatCountsDevicesOtherwiseCannotRaiseTheLimit) {
  // "0=20MiB" names index 0, which is another physical device in an instance that sees less: the instance that sees
  // only device 1 limits it; one that sees everything limits device 0. Each keeps its own limit on the shared
  // accounts, which obey the lowest (the later instance's "unlimited" for device 1 raised it).
  ASSERT_TRUE(kProfileSet);
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "0=20MiB");
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.visible_devices = "1";
  auto narrow = std::make_unique<ScopedInstance>(&desc);
  ASSERT_EQ(Physical(narrow->get()).size(), 1U);
  ScopedInstance wide(nullptr);
  auto physical = Physical(wide.get());
  ASSERT_GE(physical.size(), 2U);
  EXPECT_EQ(Usage(physical[0]).limit, 20 * kMiB);
  EXPECT_EQ(Usage(physical[1]).limit, 20 * kMiB) << "the narrow instance's limit on device 1 stands";
  accel_buffer_t b = nullptr;
  EXPECT_EQ(Alloc(FirstPath(physical[1]), 32 * kMiB, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  narrow.reset();  // its limit goes with it
  EXPECT_EQ(Usage(physical[1]).limit, ACCEL_MEMORY_UNLIMITED);
  EXPECT_EQ(Usage(physical[0]).limit, 20 * kMiB);
}

TEST(MemoryLimit, OneDeviceNamedByIndexAndByIdFailsClosed) {
  ASSERT_TRUE(kProfileSet);
  std::string id0;
  {
    ScopedInstance probe(nullptr);
    accel_physical_device_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
    p.struct_size = sizeof(p);
    ASSERT_EQ(accel_physical_device_get_properties(Physical(probe.get())[0], &p), ACCEL_SUCCESS);
    id0 = p.stable_id;
  }
  // Which of the two was meant cannot be known (the later one won, so the order of the items decided).
  const std::string setting = "0=40GiB," + id0 + "=1GiB";
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", setting.c_str());
  ScopedInstance instance(nullptr);
  auto physical = Physical(instance.get());
  for (auto p : physical) EXPECT_EQ(Usage(p).limit, 0U);
  auto warnings = instance.Warnings();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(std::string(warnings[0].message).find("'0' and '" + id0 + "' both name physical device 0"),
            std::string::npos)
      << warnings[0].message;
  EXPECT_NE(std::string(warnings[0].message).find("limited to 0 bytes"), std::string::npos) << warnings[0].message;
}

TEST(MemoryLimit, AProcessRefusalLeavesTheTenantAsItWas) {
  // The tenant accepts 128 MiB, the process's 64 MiB refuses them: the tenant's peak and buffer count never saw
  // the allocation (its peak said 128 MiB).
  ASSERT_TRUE(kProfileSet);
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "64MiB");
  ScopedInstance instance(nullptr);
  auto physical = Physical(instance.get());
  accel_tenant_t tenant = MakeTenant(instance.get(), "t", {{physical[0], 1024 * kMiB}});
  ASSERT_EQ(accel_thread_set_tenant(tenant, nullptr), ACCEL_SUCCESS);
  accel_buffer_t b = nullptr;
  EXPECT_EQ(Alloc(FirstPath(physical[0]), 128 * kMiB, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("(ACCEL_MEMORY_LIMIT)"), std::string::npos) << accel_last_error();
  ASSERT_EQ(accel_thread_set_tenant(nullptr, nullptr), ACCEL_SUCCESS);
  const accel_memory_usage_t u = Usage(tenant, physical[0]);
  EXPECT_EQ(u.used, 0U);
  EXPECT_EQ(u.peak, 0U);
  EXPECT_EQ(u.buffers, 0U);
  EXPECT_EQ(Usage(physical[0]).refused, 1U);
  EXPECT_EQ(accel_tenant_destroy(tenant), ACCEL_SUCCESS);
}

TEST(MemoryLimit, PerDeviceEntriesByIndexAndStableIdAndPercent) {
  ASSERT_TRUE(kProfileSet);
  ScopedInstance probe(nullptr);
  auto physical = Physical(probe.get());
  ASSERT_GE(physical.size(), 3U);
  accel_physical_device_properties_t p2{};
  p2.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  p2.struct_size = sizeof(p2);
  ASSERT_EQ(accel_physical_device_get_properties(physical[2], &p2), ACCEL_SUCCESS);
  accel_physical_device_properties_t p0 = p2;
  ASSERT_EQ(accel_physical_device_get_properties(physical[0], &p0), ACCEL_SUCCESS);

  const std::string setting = std::string("0=25%, 1 = 1GiB, ") + p2.stable_id + "=3GB, 9=1GiB";
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", setting.c_str());
  ScopedInstance instance(nullptr);
  physical = Physical(instance.get());
  EXPECT_EQ(Usage(physical[0]).limit, p0.memory_total / 4);
  EXPECT_EQ(Usage(physical[1]).limit, 1024 * kMiB);
  EXPECT_EQ(Usage(physical[2]).limit, uint64_t{3'000'000'000});
  EXPECT_EQ(Usage(physical[3]).limit, ACCEL_MEMORY_UNLIMITED) << "a device no entry names has no limit";
  auto warnings = instance.Warnings();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_STREQ(warnings[0].setting, "ACCEL_MEMORY_LIMIT");
  EXPECT_STREQ(warnings[0].item, "9");
  EXPECT_NE(std::string(warnings[0].message).find("names no physical device"), std::string::npos)
      << warnings[0].message;
}

TEST(MemoryLimit, UnreadableSettingFailsClosed) {
  for (const char* bad : {"12XB", "-5GiB", "0=", "=4GiB", "150%", "1GiB,,2GiB", "1GiB,2GiB", "nan GiB"}) {
    SCOPED_TRACE(bad);
    ScopedEnv limit("ACCEL_MEMORY_LIMIT", bad);
    ScopedInstance instance(nullptr);
    auto physical = Physical(instance.get());
    ASSERT_FALSE(physical.empty());
    EXPECT_EQ(Usage(physical[0]).limit, 0U);
    auto warnings = instance.Warnings();
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_STREQ(warnings[0].setting, "ACCEL_MEMORY_LIMIT");
    EXPECT_NE(std::string(warnings[0].message).find("limited to 0 bytes"), std::string::npos) << warnings[0].message;
    accel_buffer_t b = nullptr;
    EXPECT_EQ(Alloc(FirstPath(physical[0]), 4096, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  }
  // An empty item says which one (a trailing comma is one too).
  ScopedEnv limit("ACCEL_MEMORY_LIMIT", "1GiB,");
  ScopedInstance instance(nullptr);
  auto warnings = instance.Warnings();
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(std::string(warnings[0].message).find("item 2 of '1GiB,' is empty"), std::string::npos)
      << warnings[0].message;
}

TEST(MemoryLimit, TenantsAreLimitedAloneAndNeighboursAreUntouched) {
  ASSERT_TRUE(kProfileSet);
  ScopedInstance instance(nullptr);
  auto physical = Physical(instance.get());
  ASSERT_GE(physical.size(), 2U);
  accel_device_t device = FirstPath(physical[0]);
  accel_tenant_t a = MakeTenant(instance.get(), "a", {{physical[0], 32 * kMiB}});
  accel_tenant_t b = MakeTenant(instance.get(), "b", {{physical[0], 32 * kMiB}});

  accel_buffer_t a1 = nullptr;
  accel_buffer_t a2 = nullptr;
  accel_buffer_t b1 = nullptr;
  accel_buffer_t other = nullptr;
  accel_tenant_t previous = a;
  ASSERT_EQ(accel_thread_set_tenant(a, &previous), ACCEL_SUCCESS);
  EXPECT_EQ(previous, nullptr);
  ASSERT_EQ(Alloc(device, 32 * kMiB, &a1), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(Alloc(device, 1, &a2), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const std::string message = accel_last_error();
  EXPECT_NE(message.find("tenant 'a' holds 32 MiB of its 32 MiB limit"), std::string::npos) << message;
  // other_limit 0: the tenant may not allocate on a device it was not given.
  EXPECT_EQ(Alloc(FirstPath(physical[1]), 4096, &other), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(accel_last_error()).find("tenant 'a' may not allocate on this device"), std::string::npos)
      << accel_last_error();

  // Another thread is not the tenant.
  std::thread([&] {
    accel_buffer_t t = nullptr;
    EXPECT_EQ(Alloc(device, 40 * kMiB, &t), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(accel_buffer_destroy(t), ACCEL_SUCCESS);
  }).join();

  ASSERT_EQ(accel_thread_set_tenant(b, &previous), ACCEL_SUCCESS);
  EXPECT_EQ(previous, a);
  ASSERT_EQ(Alloc(device, 32 * kMiB, &b1), ACCEL_SUCCESS)
      << "the neighbour's share is untouched: " << accel_last_error();
  ASSERT_EQ(accel_thread_set_tenant(nullptr, &previous), ACCEL_SUCCESS);
  EXPECT_EQ(previous, b);

  EXPECT_EQ(Usage(a, physical[0]).used, 32 * kMiB);
  EXPECT_EQ(Usage(a, physical[0]).refused, 1U);
  EXPECT_EQ(Usage(b, physical[0]).used, 32 * kMiB);
  EXPECT_EQ(Usage(b, physical[1]).limit, 0U);
  EXPECT_EQ(Usage(physical[0]).used, 64 * kMiB) << "the process counts both tenants";

  // A destroyed tenant's buffers stay valid and counted until freed.
  ASSERT_EQ(accel_tenant_destroy(a), ACCEL_SUCCESS);
  EXPECT_EQ(Usage(physical[0]).used, 64 * kMiB);
  ASSERT_EQ(accel_buffer_destroy(a1), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_destroy(b1), ACCEL_SUCCESS);
  EXPECT_EQ(Usage(physical[0]).used, 0U);
  EXPECT_EQ(Usage(b, physical[0]).used, 0U);

  // A thread still bound to a destroyed tenant cannot allocate.
  ASSERT_EQ(accel_thread_set_tenant(b, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(accel_tenant_destroy(b), ACCEL_SUCCESS);
  EXPECT_EQ(Alloc(device, 4096, &other), ACCEL_ERROR_FAILED_PRECONDITION);
  EXPECT_NE(std::string(accel_last_error()).find("tenant 'b' was destroyed"), std::string::npos) << accel_last_error();
  EXPECT_EQ(accel_tenant_destroy(b), ACCEL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(accel_thread_set_tenant(nullptr, &previous), ACCEL_SUCCESS);
  EXPECT_EQ(previous, nullptr) << "a destroyed tenant reads back as none";
}

TEST(MemoryLimit, TenantBadInput) {
  ASSERT_TRUE(kProfileSet);
  ScopedInstance instance(nullptr);
  ScopedInstance other(nullptr);
  auto physical = Physical(instance.get());
  auto foreign = Physical(other.get());
  accel_tenant_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_TENANT_DESC;
  d.struct_size = sizeof(d);
  accel_tenant_t tenant = nullptr;

  d.limit_count = 1;
  EXPECT_EQ(accel_tenant_create(instance.get(), &d, &tenant), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'desc->limits' is NULL"), std::string::npos);

  accel_tenant_limit_t twice[2] = {{physical[0], kMiB}, {physical[0], kMiB}};
  d.limits = twice;
  d.limit_count = 2;
  EXPECT_EQ(accel_tenant_create(instance.get(), &d, &tenant), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("desc->limits[1].physical_device"), std::string::npos)
      << accel_last_error();

  accel_tenant_limit_t theirs[1] = {{foreign[0], kMiB}};
  d.limits = theirs;
  d.limit_count = 1;
  EXPECT_EQ(accel_tenant_create(instance.get(), &d, &tenant), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("another instance"), std::string::npos) << accel_last_error();
  EXPECT_EQ(tenant, nullptr);

  // A tenant of one instance does not limit another instance's allocations.
  accel_tenant_t mine = MakeTenant(instance.get(), "mine", {}, 0);
  ASSERT_EQ(accel_thread_set_tenant(mine, nullptr), ACCEL_SUCCESS);
  accel_buffer_t b = nullptr;
  EXPECT_EQ(Alloc(FirstPath(physical[0]), 4096, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(Alloc(FirstPath(foreign[0]), 4096, &b), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  accel_memory_usage_t u{};
  u.stype = ACCEL_STRUCTURE_TYPE_MEMORY_USAGE;
  u.struct_size = sizeof(u);
  EXPECT_EQ(accel_tenant_get_memory_usage(mine, foreign[0], &u), ACCEL_ERROR_INVALID_HANDLE);
  ASSERT_EQ(accel_thread_set_tenant(nullptr, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(accel_tenant_destroy(mine), ACCEL_SUCCESS);
  EXPECT_EQ(accel_thread_set_tenant(mine, nullptr), ACCEL_ERROR_INVALID_HANDLE);
}

// Binding the tenant a thread bound last takes a shortcut (no handle lookup): it must still bind it, and still
// refuse it once it or its instance is gone.
TEST(MemoryLimit, BindingTheSameTenantAgainIsCheckedLikeTheFirstTime) {
  ASSERT_TRUE(kProfileSet);
  accel_tenant_t a = nullptr;
  {
    ScopedInstance instance(nullptr);
    auto physical = Physical(instance.get());
    ASSERT_FALSE(physical.empty());
    accel_device_t device = FirstPath(physical[0]);
    a = MakeTenant(instance.get(), "a", {{physical[0], 8 * kMiB}});
    for (int round = 0; round < 3; ++round) {
      accel_tenant_t previous = a;
      ASSERT_EQ(accel_thread_set_tenant(a, &previous), ACCEL_SUCCESS) << accel_last_error();
      EXPECT_EQ(previous, nullptr) << "round " << round;
      accel_buffer_t b = nullptr;
      EXPECT_EQ(Alloc(device, 16 * kMiB, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED) << "round " << round << ": bound";
      ASSERT_EQ(accel_thread_set_tenant(nullptr, &previous), ACCEL_SUCCESS);
      EXPECT_EQ(previous, a) << "round " << round;
      EXPECT_EQ(Alloc(device, 16 * kMiB, &b), ACCEL_SUCCESS) << "round " << round << ": unbound";
      EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
    }
    EXPECT_EQ(Usage(a, physical[0]).refused, 3U);
    ASSERT_EQ(accel_thread_set_tenant(a, nullptr), ACCEL_SUCCESS);
    ASSERT_EQ(accel_thread_set_tenant(nullptr, nullptr), ACCEL_SUCCESS);
  }
  // Its instance was destroyed with the tenant still this thread's last.
  EXPECT_EQ(accel_thread_set_tenant(a, nullptr), ACCEL_ERROR_INVALID_HANDLE);
  EXPECT_NE(std::string(accel_last_error()).find("tenant"), std::string::npos) << accel_last_error();
}

TEST(MemoryLimit, SeveralProcessesOnOneSimulatedDeviceEachStopAtTheirLimit) {
  TempDir dir;
  const std::string child = ACCEL_TEST_MEMORY_LIMIT_CHILD;
  std::string script = "export ACCEL_SIM_PROFILE=h100-sxm-8 ACCEL_VISIBLE_DEVICES=0; ";
  const char* limits[] = {"8MiB", "16MiB", "24MiB", "0=12MiB"};
  for (size_t i = 0; i < 4; ++i) {
    script += "ACCEL_MEMORY_LIMIT=" + std::string(limits[i]) + " '" + child + "' > '" + dir.path().string() + "/out" +
              std::to_string(i) + "' 2>&1 & ";
  }
  script += "wait";
  std::string output;
  ASSERT_EQ(RunCommand("sh -c \"" + script + "\"", &output), 0) << output;
  const uint64_t expected[] = {8 * kMiB, 16 * kMiB, 24 * kMiB, 12 * kMiB};
  for (size_t i = 0; i < 4; ++i) {
    std::ifstream in(dir.path().string() + "/out" + std::to_string(i));
    std::stringstream text;
    text << in.rdbuf();
    uint64_t got = 0;
    std::string status;
    std::stringstream(text.str()) >> got >> status;
    EXPECT_EQ(got, expected[i]) << limits[i] << ": " << text.str();
    EXPECT_EQ(status, "ACCEL_ERROR_RESOURCE_EXHAUSTED") << text.str();
  }
}

}  // namespace
