// Real topology discovery on an hwloc XML fixture of a 6-GPU PCIe server
// (fixtures/pcie_server.xml): devices that carry only PCI bus ids get their
// NUMA node, CPUs, PCIe root, the PIX/PXB/PHB/NODE/SYS matrix and their NIC
// affinity from the machine's PCI tree.
#include <stdlib.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace {

using accel_test::ScopedInstance;

class PcieServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("HWLOC_XMLFILE", ACCEL_TEST_FIXTURE_DIR "/pcie_server.xml", 1);
    setenv("ACCEL_SIM_PROFILE", ACCEL_TEST_FIXTURE_DIR "/pcie_server.json", 1);
    unsetenv("ACCEL_SIM_FAULTS");
    unsetenv("ACCEL_TOPOLOGY_DOMAINS");
    accel_instance_desc_t d = ScopedInstance::Backends("sim");
    instance_ = std::make_unique<ScopedInstance>(&d);
    devices_ = instance_->Devices();
    ASSERT_EQ(devices_.size(), 6u);
  }

  accel_link_class_t Class(int a, int b) {
    accel_device_link_t l{};
    l.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
    l.struct_size = sizeof(l);
    EXPECT_EQ(accel_device_get_link(devices_[a], devices_[b], &l), ACCEL_SUCCESS) << accel_last_error();
    return l.link_class;
  }
  accel_link_class_t NicClass(int a, uint32_t nic) {
    accel_device_link_t l{};
    l.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
    l.struct_size = sizeof(l);
    EXPECT_EQ(accel_device_get_nic_link(devices_[a], nic, &l), ACCEL_SUCCESS) << accel_last_error();
    return l.link_class;
  }
  accel_device_topology_t Topology(int a) {
    accel_device_topology_t t{};
    t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
    t.struct_size = sizeof(t);
    EXPECT_EQ(accel_device_get_topology(devices_[a], &t), ACCEL_SUCCESS) << accel_last_error();
    return t;
  }

  std::unique_ptr<ScopedInstance> instance_;
  std::vector<accel_device_t> devices_;
};

constexpr accel_link_class_t X = ACCEL_LINK_CLASS_SELF;
constexpr accel_link_class_t PIX = ACCEL_LINK_CLASS_PIX;
constexpr accel_link_class_t PXB = ACCEL_LINK_CLASS_PXB;
constexpr accel_link_class_t PHB = ACCEL_LINK_CLASS_PHB;
constexpr accel_link_class_t NODE = ACCEL_LINK_CLASS_NODE;
constexpr accel_link_class_t SYS = ACCEL_LINK_CLASS_SYS;

TEST_F(PcieServerFixture, DerivesTheDeviceMatrixFromThePciTree) {
  // GPU0 and GPU1 on two ports of one switch; GPU2 a switch further down; GPU3 on another root port of the same host
  // bridge; GPU4 under the socket's second host bridge; GPU5 on the other socket.
  const accel_link_class_t expected[6][6] = {
      {X, PIX, PXB, PHB, NODE, SYS}, {PIX, X, PXB, PHB, NODE, SYS},    {PXB, PXB, X, PHB, NODE, SYS},
      {PHB, PHB, PHB, X, NODE, SYS}, {NODE, NODE, NODE, NODE, X, SYS}, {SYS, SYS, SYS, SYS, SYS, X},
  };
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 6; ++b) {
      EXPECT_EQ(Class(a, b), expected[a][b])
          << "GPU" << a << " - GPU" << b << ": " << accel_link_class_name(Class(a, b));
    }
  }
}

TEST_F(PcieServerFixture, DerivesNicAffinity) {
  uint32_t count = 0;
  ASSERT_EQ(accel_instance_get_nic_count(instance_->get(), &count), ACCEL_SUCCESS);
  ASSERT_EQ(count, 2u);
  std::vector<std::string> names;
  for (uint32_t i = 0; i < count; ++i) {
    accel_nic_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
    p.struct_size = sizeof(p);
    ASSERT_EQ(accel_instance_get_nic(instance_->get(), i, &p), ACCEL_SUCCESS);
    names.emplace_back(p.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"mlx5_0", "ens82"})) << "PCI order; the RDMA name wins";
  const accel_link_class_t expected[6][2] = {{PIX, SYS}, {PIX, SYS}, {PXB, SYS}, {PHB, SYS}, {NODE, SYS}, {SYS, PHB}};
  const int nearest[6] = {0, 0, 0, 0, 0, 1};
  for (int a = 0; a < 6; ++a) {
    for (uint32_t n = 0; n < 2; ++n) EXPECT_EQ(NicClass(a, n), expected[a][n]) << "GPU" << a << " - NIC" << n;
    EXPECT_EQ(Topology(a).nearest_nic, nearest[a]) << "GPU" << a;
  }
}

TEST_F(PcieServerFixture, CompletesNumaNodeCpusAndRootFromThePciTree) {
  accel_device_topology_t t0 = Topology(0);
  EXPECT_EQ(t0.numa_node, 0);
  EXPECT_STREQ(t0.local_cpus, "0-7");
  EXPECT_EQ(t0.local_cpu_count, 8u);
  EXPECT_STREQ(t0.pcie_root, "pci0000:00");
  accel_device_topology_t t4 = Topology(4);
  EXPECT_STREQ(t4.pcie_root, "pci0000:10");
  accel_device_topology_t t5 = Topology(5);
  EXPECT_EQ(t5.numa_node, 1);
  EXPECT_STREQ(t5.local_cpus, "8-15");
  EXPECT_STREQ(t5.pcie_root, "pci0000:80");
}

}  // namespace
