// Topology queries on the host device, checked against hwloc's own view of
// this machine: NUMA node, CPU set, NICs; links, NIC links and domains.
#include <hwloc.h>
#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using accel_test::ScopedInstance;

// hwloc's view, loaded independently of Accel.
class Hwloc {
 public:
  Hwloc() {
    hwloc_topology_init(&topology_);
    hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    // The same discovery components libaccel uses (core/lib/machine_topology.cc).
    for (const char* component : {"pci", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero"}) {
      hwloc_topology_set_components(topology_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
    }
    hwloc_topology_load(topology_);
  }
  ~Hwloc() { hwloc_topology_destroy(topology_); }
  hwloc_topology_t get() const { return topology_; }

  std::string RootCpuList() const {
    char text[4096];
    hwloc_bitmap_list_snprintf(text, sizeof(text), hwloc_get_root_obj(topology_)->cpuset);
    return text;
  }
  int CpuCount() const { return hwloc_bitmap_weight(hwloc_get_root_obj(topology_)->cpuset); }
  int NumaNode() const {
    if (hwloc_get_nbobjs_by_type(topology_, HWLOC_OBJ_NUMANODE) != 1) return -1;
    return static_cast<int>(hwloc_get_obj_by_type(topology_, HWLOC_OBJ_NUMANODE, 0)->os_index);
  }
  // PCI bus id -> names of the network and RDMA OS devices under it.
  std::map<std::string, std::vector<std::string>> Nics() const {
    std::map<std::string, std::vector<std::string>> out;
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology_, nullptr); os != nullptr;
         os = hwloc_get_next_osdev(topology_, os)) {
      if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK && os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) {
        continue;
      }
      hwloc_obj_t pci = os->parent;
      while (pci != nullptr && pci->type != HWLOC_OBJ_PCI_DEVICE) pci = pci->parent;
      if (pci == nullptr) continue;
      char bus[32];
      snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
               pci->attr->pcidev.dev, pci->attr->pcidev.func);
      out[bus].push_back(os->name);
    }
    return out;
  }

 private:
  hwloc_topology_t topology_ = nullptr;
};

accel_device_topology_t TopologyOf(accel_device_t device) {
  accel_device_topology_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_device_get_topology(device, &t), ACCEL_SUCCESS) << accel_last_error();
  return t;
}

accel_domain_t DomainOf(accel_device_t device, uint32_t index) {
  accel_domain_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
  d.struct_size = sizeof(d);
  EXPECT_EQ(accel_device_get_domain(device, index, &d), ACCEL_SUCCESS) << accel_last_error();
  return d;
}

TEST(Topology, HostDeviceMatchesHwlocNumaNodeAndCpuSet) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  Hwloc hwloc;
  accel_device_topology_t t = TopologyOf(host);
  EXPECT_STREQ(t.pci_bus_id, "") << "the CPU has no PCI address";
  EXPECT_EQ(t.numa_node, hwloc.NumaNode());
  EXPECT_EQ(std::string(t.local_cpus), hwloc.RootCpuList());
  EXPECT_EQ(t.local_cpu_count, static_cast<uint32_t>(hwloc.CpuCount()));
  EXPECT_EQ(t.local_cpu_count, ScopedInstance::Capabilities(host).compute_units);
  EXPECT_EQ(t.numa_node, ScopedInstance::Capabilities(host).numa_node);
}

TEST(Topology, NicsMatchHwlocAndTheNearestIsOnTheDevicesNode) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  Hwloc hwloc;
  const auto expected = hwloc.Nics();
  uint32_t count = 0;
  ASSERT_EQ(accel_instance_get_nic_count(instance.get(), &count), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(count, expected.size()) << "one NIC per PCI function with a network or RDMA device";
  auto it = expected.begin();
  for (uint32_t i = 0; i < count; ++i, ++it) {
    accel_nic_properties_t nic{};
    nic.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
    nic.struct_size = sizeof(nic);
    ASSERT_EQ(accel_instance_get_nic(instance.get(), i, &nic), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_EQ(std::string(nic.pci_bus_id), it->first) << "NICs come in PCI order";
    EXPECT_NE(std::find(it->second.begin(), it->second.end(), std::string(nic.name)), it->second.end()) << nic.name;
    EXPECT_EQ(std::string(nic.pcie_root).rfind("pci", 0), 0u) << nic.pcie_root;
    accel_device_link_t link{};
    link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
    link.struct_size = sizeof(link);
    ASSERT_EQ(accel_device_get_nic_link(host, i, &link), ACCEL_SUCCESS) << accel_last_error();
    if (hwloc.NumaNode() >= 0) {
      EXPECT_EQ(link.link_class, ACCEL_LINK_CLASS_NODE) << "one NUMA node: every NIC is on the CPU's node";
    }
  }
  accel_device_topology_t t = TopologyOf(host);
  if (count == 0) {
    EXPECT_EQ(t.nearest_nic, -1);
  } else {
    EXPECT_GE(t.nearest_nic, 0);
    EXPECT_LT(t.nearest_nic, static_cast<int32_t>(count));
  }
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  EXPECT_EQ(accel_device_get_nic_link(host, count, &link), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'nic_index'"), std::string::npos) << accel_last_error();
}

TEST(Topology, ADeviceIsItsOwnSelfLink) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  ASSERT_EQ(accel_device_get_link(host, host, &link), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(link.link_class, ACCEL_LINK_CLASS_SELF);
  EXPECT_EQ(link.peer_access, 1u);
  EXPECT_STREQ(accel_link_class_name(link.link_class), "SELF");
}

TEST(Topology, DevicesOfTwoInstancesHaveNoLink) {
  ScopedInstance a(nullptr), b(nullptr);
  accel_device_link_t link{};
  link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  link.struct_size = sizeof(link);
  EXPECT_EQ(accel_device_get_link(a.DeviceOf("host"), b.DeviceOf("host"), &link), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("different instances"), std::string::npos);
}

TEST(Topology, DomainsAreTheNodeThenTheEnvironmentsLevelsInnermostFirst) {
  {
    ScopedInstance instance(nullptr);
    accel_device_t host = instance.DeviceOf("host");
    ASSERT_NE(host, nullptr);
    accel_device_topology_t t = TopologyOf(host);
    ASSERT_EQ(t.domain_count, 1u) << "without ACCEL_TOPOLOGY_DOMAINS only the node";
    accel_domain_t node = DomainOf(host, 0);
    EXPECT_EQ(node.level, ACCEL_DOMAIN_LEVEL_NODE);
    EXPECT_GT(strlen(node.id), 0u);
  }
  ASSERT_EQ(setenv("ACCEL_TOPOLOGY_DOMAINS", "block=b3,rack=r12,bogus=x,zone=", 1), 0);
  std::vector<std::string> logged;
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.log_level = ACCEL_LOG_LEVEL_WARN;
  desc.log_user_data = &logged;
  desc.log_callback = [](void* user, accel_log_level_t, const char* message) {
    static_cast<std::vector<std::string>*>(user)->emplace_back(message);
  };
  ScopedInstance instance(&desc);
  unsetenv("ACCEL_TOPOLOGY_DOMAINS");
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  accel_device_topology_t t = TopologyOf(host);
  ASSERT_EQ(t.domain_count, 3u);
  EXPECT_EQ(DomainOf(host, 0).level, ACCEL_DOMAIN_LEVEL_NODE);
  accel_domain_t rack = DomainOf(host, 1), block = DomainOf(host, 2);
  EXPECT_EQ(rack.level, ACCEL_DOMAIN_LEVEL_RACK);
  EXPECT_STREQ(rack.id, "r12");
  EXPECT_EQ(block.level, ACCEL_DOMAIN_LEVEL_BLOCK);
  EXPECT_STREQ(block.id, "b3");
  EXPECT_STREQ(accel_domain_level_name(block.level), "block");
  int warnings = 0;
  for (const std::string& m : logged) {
    warnings += m.find("ACCEL_TOPOLOGY_DOMAINS=block=b3,rack=r12,bogus=x,zone=: '") != std::string::npos &&
                m.find("' is ignored: expected <level>=<id>") != std::string::npos;
  }
  EXPECT_EQ(warnings, 2) << "'bogus=x' and 'zone=' are each logged";
  // ... and kept as setting warnings (docs/loader.md).
  const std::vector<accel_loader_warning_t> kept = instance.Warnings();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_STREQ(kept[1].setting, "ACCEL_TOPOLOGY_DOMAINS");
  EXPECT_STREQ(kept[1].item, "zone=");
  accel_domain_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
  d.struct_size = sizeof(d);
  EXPECT_EQ(accel_device_get_domain(host, 3, &d), ACCEL_ERROR_INVALID_ARGUMENT);
}

TEST(Topology, AnOlderSmallerStructGetsItsPrefix) {
  ScopedInstance instance(nullptr);
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  accel_device_topology_t t{};
  std::memset(&t, 0x5A, sizeof(t));
  t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  t.struct_size = offsetof(accel_device_topology_t, numa_node);
  ASSERT_EQ(accel_device_get_topology(host, &t), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(t.numa_node, static_cast<int32_t>(0x5A5A5A5A)) << "nothing past the caller's struct_size is written";
  EXPECT_STREQ(t.pci_bus_id, "");
}

TEST(Topology, DomainsComeFromTopologyFilesInNameOrderWithTheEnvironmentOnTop) {
  accel_test::TempDir dir;
  dir.Write("10-site.json", R"({"domains": {"zone": "z-east", "block": "b1"}})");
  dir.Write("20-rack.json", R"({"domains": {"rack": "r7", "block": "b3", "aisle": "a1"}})");
  dir.Write("30-broken.json", "{not json");
  dir.Write("40-nul.json", R"({"domains": {"slice": "s\u0000x"}})");
  dir.Write("README.txt", R"({"domains": {"rack": "ignored"}})");
  ASSERT_EQ(setenv("ACCEL_TOPOLOGY_CONFIG_DIR", dir.path().c_str(), 1), 0);
  ASSERT_EQ(setenv("ACCEL_TOPOLOGY_DOMAINS", "rack=r12", 1), 0);
  std::vector<std::string> logged;
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.log_level = ACCEL_LOG_LEVEL_WARN;
  desc.log_user_data = &logged;
  desc.log_callback = [](void* user, accel_log_level_t, const char* message) {
    static_cast<std::vector<std::string>*>(user)->emplace_back(message);
  };
  ScopedInstance instance(&desc);
  unsetenv("ACCEL_TOPOLOGY_CONFIG_DIR");
  unsetenv("ACCEL_TOPOLOGY_DOMAINS");
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  ASSERT_EQ(TopologyOf(host).domain_count, 4u) << "node, rack, block, zone";
  EXPECT_EQ(DomainOf(host, 0).level, ACCEL_DOMAIN_LEVEL_NODE);
  EXPECT_STREQ(DomainOf(host, 1).id, "r12") << "the environment's rack replaces the file's";
  EXPECT_STREQ(DomainOf(host, 2).id, "b3") << "a later file's block replaces an earlier one's";
  EXPECT_EQ(DomainOf(host, 3).level, ACCEL_DOMAIN_LEVEL_ZONE);
  EXPECT_STREQ(DomainOf(host, 3).id, "z-east");
  bool broken = false;
  bool aisle = false;
  bool nul = false;
  for (const std::string& m : logged) {
    broken = broken || (m.find("30-broken.json ignored") != std::string::npos);
    aisle = aisle || (m.find("20-rack.json: domains.aisle ignored") != std::string::npos);
    nul = nul || (m.find("40-nul.json: domains.slice ignored") != std::string::npos &&
                  m.find("none of them NUL") != std::string::npos);
  }
  EXPECT_TRUE(broken) << "a file that does not parse is reported with its name";
  EXPECT_TRUE(aisle) << "an unknown level is reported with the file and the field";
  EXPECT_TRUE(nul) << "an id with a NUL (it would be cut short) is reported with the file and the field";
}

TEST(Topology, TopologyFilesFolderIsAnEnvironmentSettingIgnoredWhenTheInstanceIgnoresIt) {
  accel_test::TempDir dir;
  dir.Write("rack.json", R"({"domains": {"rack": "r7"}})");
  ASSERT_EQ(setenv("ACCEL_TOPOLOGY_CONFIG_DIR", dir.path().c_str(), 1), 0);
  accel_instance_desc_t desc = ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST));  // ignores the environment
  ScopedInstance instance(&desc);
  unsetenv("ACCEL_TOPOLOGY_CONFIG_DIR");
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr);
  for (uint32_t i = 0; i < TopologyOf(host).domain_count; ++i) {
    EXPECT_STRNE(DomainOf(host, i).id, "r7") << "the folder came from the environment, which this instance ignores";
  }
}

}  // namespace
