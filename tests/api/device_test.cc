// Devices: capability keys and the size-query-then-fill pattern, the typed
// snapshot, physical grouping, stable ids, ACCEL_VISIBLE_DEVICES.
#include <hwloc.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "test_util.h"

namespace {

using accel_test::ManifestJson;
using accel_test::ScopedInstance;
using accel_test::TempDir;
using accel_test::TestBackend;

uint64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

TEST(Device, HostCapabilitiesComeFromTheMachine) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  accel_device_capabilities_t c = ScopedInstance::Capabilities(host);
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_CPU);
  EXPECT_EQ(c.flags & ACCEL_DEVICE_FLAG_SIMULATED, 0u);
  EXPECT_EQ(c.memory_total, MemTotalBytes());
  EXPECT_EQ(c.compute_units, static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_NE(c.kernel_formats & ACCEL_KERNEL_FORMAT_NATIVE_HOST, 0u);
  EXPECT_NE(c.numeric_formats & ACCEL_NUMERIC_FORMAT_FP32, 0u);
  EXPECT_GT(std::strlen(c.name), 0u);
  EXPECT_STREQ(c.backend_name, "host");
  EXPECT_EQ(std::string(c.stable_id).rfind("cpu-", 0), 0u) << c.stable_id;

  // NUMA node as hwloc sees it.
  hwloc_topology_t topo;
  ASSERT_EQ(hwloc_topology_init(&topo), 0);
  ASSERT_EQ(hwloc_topology_load(topo), 0);
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  int expected = numa == 1 ? static_cast<int>(hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 0)->os_index) : -1;
  hwloc_topology_destroy(topo);
  EXPECT_EQ(c.numa_node, expected);
}

TEST(Device, EveryRegisteredKeyIsReadableWithSizeQueryThenFill) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  int keys = 0;
  for (int k = 1;; ++k) {
    const char* name = nullptr;
    accel_value_type_t type{};
    accel_status_t s = accel_device_info_key_describe(static_cast<accel_device_info_key_t>(k), &name, &type);
    if (s == ACCEL_ERROR_INVALID_ENUM) break;
    ASSERT_EQ(s, ACCEL_SUCCESS);
    ++keys;
    size_t size = 0;
    ASSERT_EQ(accel_device_get_info(host, static_cast<accel_device_info_key_t>(k), 0, nullptr, &size), ACCEL_SUCCESS)
        << name << ": " << accel_last_error();
    ASSERT_GT(size, 0u) << name;
    size_t expected = 0;
    switch (type) {
      case ACCEL_VALUE_TYPE_UINT32:
      case ACCEL_VALUE_TYPE_INT32: expected = 4; break;
      case ACCEL_VALUE_TYPE_UINT64:
      case ACCEL_VALUE_TYPE_FLAGS64: expected = 8; break;
      case ACCEL_VALUE_TYPE_UINT32_3: expected = 12; break;
      case ACCEL_VALUE_TYPE_BYTES_16: expected = 16; break;
      default: expected = size; break;
    }
    EXPECT_EQ(size, expected) << name;
    std::vector<char> value(size);
    if (size > 1) {
      size_t got = 0;
      EXPECT_EQ(accel_device_get_info(host, static_cast<accel_device_info_key_t>(k), size - 1, value.data(), &got),
                ACCEL_ERROR_INVALID_ARGUMENT)
          << name;
      EXPECT_EQ(got, size);
      EXPECT_NE(std::string(accel_last_error()).find("is too small for key '" + std::string(name) + "'"),
                std::string::npos);
    }
    ASSERT_EQ(accel_device_get_info(host, static_cast<accel_device_info_key_t>(k), size, value.data(), nullptr),
              ACCEL_SUCCESS);
    if (type == ACCEL_VALUE_TYPE_STRING) {
      EXPECT_EQ(value.back(), 0) << name;
    }
  }
  EXPECT_EQ(keys, 33);
  uint64_t v = 0;
  EXPECT_EQ(accel_device_get_info(host, static_cast<accel_device_info_key_t>(9999), sizeof(v), &v, nullptr),
            ACCEL_ERROR_INVALID_ENUM);
}

TEST(Device, KeysAgreeWithTheSnapshot) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  accel_device_capabilities_t c = ScopedInstance::Capabilities(host);
  uint64_t total = 0;
  uint32_t units = 0;
  char id[ACCEL_SHORT_STRING_SIZE];
  ASSERT_EQ(accel_device_get_info(host, ACCEL_DEVICE_INFO_MEMORY_TOTAL, 8, &total, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(accel_device_get_info(host, ACCEL_DEVICE_INFO_COMPUTE_UNITS, 4, &units, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(accel_device_get_info(host, ACCEL_DEVICE_INFO_STABLE_ID, sizeof(id), id, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(total, c.memory_total);
  EXPECT_EQ(units, c.compute_units);
  EXPECT_STREQ(id, c.stable_id);
  // A smaller, older snapshot gets its prefix and nothing past it.
  std::vector<unsigned char> storage(sizeof(accel_device_capabilities_t), 0xEE);
  auto* small = reinterpret_cast<accel_device_capabilities_t*>(storage.data());
  small->stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  small->struct_size = offsetof(accel_device_capabilities_t, max_allocation);
  small->next = nullptr;
  ASSERT_EQ(accel_device_get_capabilities(host, small), ACCEL_SUCCESS);
  EXPECT_EQ(small->memory_total, c.memory_total);
  for (size_t i = offsetof(accel_device_capabilities_t, max_allocation); i < storage.size(); ++i) {
    ASSERT_EQ(storage[i], 0xEE) << i;
  }
}

TEST(Device, PhysicalDevicesGroupAccessPathsAndCountTheHostOnce) {
  ScopedInstance instance(nullptr);
  uint32_t n = 0;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, nullptr), ACCEL_SUCCESS);
  ASSERT_GE(n, 1u);
  std::vector<accel_physical_device_t> physical(n);
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, physical.data()), ACCEL_SUCCESS);
  uint32_t paths_total = 0;
  for (uint32_t i = 0; i < n; ++i) {
    accel_physical_device_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
    p.struct_size = sizeof(p);
    ASSERT_EQ(accel_physical_device_get_properties(physical[i], &p), ACCEL_SUCCESS);
    EXPECT_EQ(p.index, i);
    uint32_t m = 0;
    ASSERT_EQ(accel_physical_device_enumerate_devices(physical[i], &m, nullptr), ACCEL_SUCCESS);
    EXPECT_EQ(m, p.device_count);
    std::vector<accel_device_t> paths(m);
    ASSERT_EQ(accel_physical_device_enumerate_devices(physical[i], &m, paths.data()), ACCEL_SUCCESS);
    for (accel_device_t d : paths) {
      accel_physical_device_t back = nullptr;
      ASSERT_EQ(accel_device_get_physical_device(d, &back), ACCEL_SUCCESS);
      EXPECT_EQ(back, physical[i]);
      std::string path_id = ScopedInstance::Capabilities(d).stable_id;
      EXPECT_EQ(path_id.rfind(std::string(p.stable_id) + ".", 0), 0u) << path_id << " under " << p.stable_id;
    }
    if (p.kind == ACCEL_DEVICE_KIND_CPU) {
      EXPECT_EQ(p.memory_total, MemTotalBytes());
      EXPECT_EQ(p.compute_units, static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
    }
    paths_total += m;
  }
  EXPECT_EQ(paths_total, instance.Devices().size());
}

TEST(Device, EnumerationRejectsATooSmallArrayAndReportsTheTotal) {
  ScopedInstance instance(nullptr);
  uint32_t n = 0;
  ASSERT_EQ(accel_instance_enumerate_devices(instance.get(), &n, nullptr), ACCEL_SUCCESS);
  ASSERT_GE(n, 1u);
  uint32_t small = 0;
  accel_device_t one = nullptr;
  EXPECT_EQ(accel_instance_enumerate_devices(instance.get(), &small, &one), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(small, n);
}

TEST(Device, AccessPathsWithOneUniqueUuidAreOnePhysicalDevice) {
  TempDir dir;
  std::string files = dir.Write("a.json", ManifestJson("fake_chip_a", TestBackend("fake_chip_a"))) + ":" +
                      dir.Write("b.json", ManifestJson("fake_chip_b", TestBackend("fake_chip_b")));
  accel_instance_desc_t desc = ScopedInstance::Files(files);
  ScopedInstance instance(&desc);
  ASSERT_EQ(instance.Devices().size(), 2u);
  uint32_t n = 0;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, nullptr), ACCEL_SUCCESS);
  ASSERT_EQ(n, 1u);
  accel_physical_device_t physical = nullptr;
  ASSERT_EQ(accel_instance_enumerate_physical_devices(instance.get(), &n, &physical), ACCEL_SUCCESS);
  accel_physical_device_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_physical_device_get_properties(physical, &p), ACCEL_SUCCESS);
  EXPECT_EQ(p.device_count, 2u);
  EXPECT_STREQ(p.stable_id, "npu-5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a");
  EXPECT_EQ(p.memory_total, uint64_t{1} << 30) << "counted once";
  std::string a = ScopedInstance::Capabilities(instance.DeviceOf("fake_chip_a")).stable_id;
  std::string b = ScopedInstance::Capabilities(instance.DeviceOf("fake_chip_b")).stable_id;
  EXPECT_EQ(a, std::string(p.stable_id) + ".fake_chip_a");
  EXPECT_EQ(b, std::string(p.stable_id) + ".fake_chip_b");
}

class Visible : public ::testing::Test {
 protected:
  // host plus two fake (simulated NPU) backends: three physical devices.
  void SetUp() override {
    files_ = std::string(ACCEL_TEST_HOST_MANIFEST) + ":" +
             dir_.Write("g.json", ManifestJson("fake_good", TestBackend("fake_good"))) + ":" +
             dir_.Write("f.json", ManifestJson("fake_future", TestBackend("fake_future")));
  }
  std::vector<std::string> VisibleIds(const char* mask) {
    accel_instance_desc_t desc = ScopedInstance::Files(files_);
    desc.visible_devices = mask;
    ScopedInstance instance(&desc);
    std::vector<std::string> ids;
    for (accel_device_t d : instance.Devices()) ids.push_back(ScopedInstance::Capabilities(d).stable_id);
    return ids;
  }
  TempDir dir_;
  std::string files_;
};

TEST_F(Visible, StableOrderPutsCpusBeforeSimulatedDevices) {
  std::vector<std::string> all = VisibleIds(nullptr);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].rfind("cpu-", 0), 0u) << all[0];
  EXPECT_EQ(all[1].rfind("npu-", 0), 0u);
  EXPECT_NE(all[1].find(".fake_future"), std::string::npos) << "simulated devices order by backend name";
  EXPECT_NE(all[2].find(".fake_good"), std::string::npos);
}

TEST_F(Visible, MasksByIndexAndById) {
  std::vector<std::string> all = VisibleIds(nullptr);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(VisibleIds("2"), std::vector<std::string>{all[2]});
  EXPECT_EQ(VisibleIds("2,0"), (std::vector<std::string>{all[0], all[2]}));
  EXPECT_EQ(VisibleIds(all[1].c_str()), std::vector<std::string>{all[1]});
  std::string physical = all[2].substr(0, all[2].find('.'));
  EXPECT_EQ(VisibleIds(physical.c_str()), std::vector<std::string>{all[2]});
  EXPECT_TRUE(VisibleIds("").empty());
  EXPECT_TRUE(VisibleIds("7,nothing-here").empty());
}

}  // namespace
