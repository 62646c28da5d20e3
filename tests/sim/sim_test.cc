// The sim backend through the C API: the shipped profiles against figures from
// their cited sources (docs/sim-profiles.md), enforced and lazily backed
// capacity, peer versus staged copies, injected faults, asynchronous streams and
// native-host kernels on simulated devices.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "gate.h"
#include "native_kernels.h"
#include "test_util.h"

namespace {

using accel_test::BufferDesc;
using accel_test::ScopedInstance;
using accel_test::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kGB = 1000000000;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// An instance of the sim backend alone with ACCEL_SIM_PROFILE (and ACCEL_SIM_FAULTS) set as given.
class SimInstance {
 public:
  explicit SimInstance(const std::string& profile, const std::string& faults = "") {
    setenv("ACCEL_SIM_PROFILE", profile.c_str(), 1);
    if (faults.empty()) {
      unsetenv("ACCEL_SIM_FAULTS");
    } else {
      setenv("ACCEL_SIM_FAULTS", faults.c_str(), 1);
    }
    accel_instance_desc_t d = ScopedInstance::Backends("sim");
    instance_ = std::make_unique<ScopedInstance>(&d);
    devices_ = instance_->Devices();
  }
  const std::vector<accel_device_t>& devices() const { return devices_; }
  accel_device_t operator[](size_t i) const { return devices_.at(i); }
  const ScopedInstance& instance() const { return *instance_; }

 private:
  std::unique_ptr<ScopedInstance> instance_;
  std::vector<accel_device_t> devices_;
};

uint32_t BackendIndex(accel_device_t device) {
  uint32_t index = UINT32_MAX;
  EXPECT_EQ(accel_device_get_info(device, ACCEL_DEVICE_INFO_BACKEND_INDEX, sizeof(index), &index, nullptr),
            ACCEL_SUCCESS)
      << accel_last_error();
  return index;
}

// ACCEL_DEVICE_INFO_BACKEND_INDEX is the device's place in the sim backend's own list (its node's device number),
// not its place among the visible devices (docs/capability-keys.md, "The backend index").
TEST(SimBackendIndex, IsThePlaceInTheBackendsListWhateverIsHidden) {
  setenv("ACCEL_SIM_PROFILE", "h100-sxm-8", 1);
  unsetenv("ACCEL_SIM_FAULTS");
  accel_instance_desc_t all_desc = ScopedInstance::Backends("sim");
  ScopedInstance all(&all_desc);
  const std::vector<accel_device_t> every = all.Devices();
  ASSERT_EQ(every.size(), 8u);
  for (uint32_t i = 0; i < every.size(); ++i) EXPECT_EQ(BackendIndex(every[i]), i);

  accel_instance_desc_t masked_desc = ScopedInstance::Backends("sim");
  masked_desc.visible_devices = "3,1";
  ScopedInstance masked(&masked_desc);
  const std::vector<accel_device_t> visible = masked.Devices();
  ASSERT_EQ(visible.size(), 2u);
  EXPECT_EQ(BackendIndex(visible[0]), 1u);
  EXPECT_EQ(BackendIndex(visible[1]), 3u);
  accel_physical_device_t physical = nullptr;
  ASSERT_EQ(accel_device_get_physical_device(visible[1], &physical), ACCEL_SUCCESS) << accel_last_error();
  accel_physical_device_properties_t p{};
  p.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
  p.struct_size = sizeof(p);
  ASSERT_EQ(accel_physical_device_get_properties(physical, &p), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(p.index, 1u) << "the index in the stable order counts only the visible devices";
}

accel_device_link_t Link(accel_device_t a, accel_device_t b) {
  accel_device_link_t l{};
  l.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  l.struct_size = sizeof(l);
  EXPECT_EQ(accel_device_get_link(a, b, &l), ACCEL_SUCCESS) << accel_last_error();
  return l;
}

accel_device_link_t NicLink(accel_device_t a, uint32_t nic) {
  accel_device_link_t l{};
  l.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
  l.struct_size = sizeof(l);
  EXPECT_EQ(accel_device_get_nic_link(a, nic, &l), ACCEL_SUCCESS) << accel_last_error();
  return l;
}

// The index of the NIC called `name` among the instance's (the machine's first, then the simulated node's).
uint32_t NicIndex(accel_instance_t instance, const std::string& name) {
  uint32_t count = 0;
  EXPECT_EQ(accel_instance_get_nic_count(instance, &count), ACCEL_SUCCESS);
  uint32_t found = UINT32_MAX;
  for (uint32_t i = 0; i < count; ++i) {
    accel_nic_properties_t p{};
    p.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
    p.struct_size = sizeof(p);
    EXPECT_EQ(accel_instance_get_nic(instance, i, &p), ACCEL_SUCCESS);
    if (name == p.name) found = i;  // the last of that name: the machine's NICs come first
  }
  EXPECT_NE(found, UINT32_MAX) << "no NIC " << name;
  return found;
}

accel_device_topology_t Topology(accel_device_t d) {
  accel_device_topology_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  t.struct_size = sizeof(t);
  EXPECT_EQ(accel_device_get_topology(d, &t), ACCEL_SUCCESS) << accel_last_error();
  return t;
}

std::vector<accel_domain_t> Domains(accel_device_t d) {
  std::vector<accel_domain_t> out(Topology(d).domain_count);
  for (uint32_t i = 0; i < out.size(); ++i) {
    out[i].stype = ACCEL_STRUCTURE_TYPE_DOMAIN;
    out[i].struct_size = sizeof(out[i]);
    EXPECT_EQ(accel_device_get_domain(d, i, &out[i]), ACCEL_SUCCESS) << accel_last_error();
  }
  return out;
}

// --- The shipped profiles, checked against their sources ----------------------------------------------------------

struct Expected {
  const char* profile;
  size_t devices;
  uint64_t memory;  // of device 0
  uint32_t compute_units;
  accel_device_kind_t kind;
  const char* sku;
};

class ShippedProfile : public ::testing::TestWithParam<Expected> {};

TEST_P(ShippedProfile, ListsTheDevicesOfItsSource) {
  const Expected& e = GetParam();
  SimInstance sim(e.profile);
  ASSERT_EQ(sim.devices().size(), e.devices);
  for (accel_device_t d : sim.devices()) {
    accel_device_capabilities_t c = ScopedInstance::Capabilities(d);
    EXPECT_STREQ(c.backend_name, "sim");
    EXPECT_NE(c.flags & ACCEL_DEVICE_FLAG_SIMULATED, 0u);
    EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_NATIVE_HOST) << "a simulated device executes native-host only";
  }
  accel_device_capabilities_t c = ScopedInstance::Capabilities(sim[0]);
  EXPECT_EQ(c.memory_total, e.memory);
  EXPECT_EQ(c.compute_units, e.compute_units);
  EXPECT_EQ(c.kind, e.kind);
  EXPECT_STREQ(c.sku, e.sku);
  uint64_t free = 0;
  uint64_t total = 0;
  ASSERT_EQ(accel_device_get_memory_info(sim[0], &free, &total), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(total, e.memory);
  EXPECT_EQ(free, e.memory);
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, ShippedProfile,
    ::testing::Values(
        // NVIDIA H100 datasheet: 80 GB HBM3 (nvidia-smi reports 81559 MiB), 132 SMs.
        Expected{"h100-sxm-8", 8, 81559 * kMiB, 132, ACCEL_DEVICE_KIND_GPU, "nvidia-h100-sxm5-80gb"},
        // AMD Instinct MI300X datasheet: 192 GB HBM3, 304 compute units.
        Expected{"mi300x-8", 8, 192 * kGiB, 304, ACCEL_DEVICE_KIND_GPU, "amd-instinct-mi300x"},
        // NVIDIA A100 PCIe datasheet: 40 GB HBM2 (40960 MiB), 108 SMs.
        Expected{"a100-pcie-4", 4, 40960 * kMiB, 108, ACCEL_DEVICE_KIND_GPU, "nvidia-a100-pcie-40gb"},
        // Google Cloud TPU v4: 32 GiB HBM per chip, 2 TensorCores.
        Expected{"tpu-2x2", 4, 32 * kGiB, 2, ACCEL_DEVICE_KIND_TPU, "google-tpu-v4"},
        // NVIDIA L4 datasheet: 24 GB GDDR6 (23034 MiB usable), 58 SMs.
        Expected{"mixed-vendor", 4, 23034 * kMiB, 58, ACCEL_DEVICE_KIND_GPU, "nvidia-l4"}),
    [](const auto& param_info) {
      std::string name = param_info.param.profile;
      for (char& ch : name) ch = ch == '-' ? '_' : ch;
      return name;
    });

TEST(SimProfiles, H100NodeHasNvlinkAllToAllTwoNumaNodesAndAPixNicPerGpu) {
  SimInstance sim("h100-sxm-8");
  ASSERT_EQ(sim.devices().size(), 8u);
  // NVLink 4: 18 links per H100, 900 GB/s both ways, so 450 GB/s one way, to every other GPU through NVSwitch.
  for (auto [a, b] : {std::pair{0, 1}, std::pair{0, 7}, std::pair{3, 4}, std::pair{6, 2}}) {
    accel_device_link_t l = Link(sim[a], sim[b]);
    EXPECT_EQ(l.link_class, ACCEL_LINK_CLASS_FABRIC) << a << "-" << b;
    EXPECT_EQ(l.link_count, 18u);
    EXPECT_EQ(l.bandwidth, 450 * kGB);
    EXPECT_EQ(l.peer_access, 1u);
    EXPECT_STREQ(l.fabric, "nvlink4");
  }
  EXPECT_EQ(Topology(sim[0]).numa_node, 0);
  EXPECT_EQ(Topology(sim[3]).numa_node, 0);
  EXPECT_EQ(Topology(sim[4]).numa_node, 1);
  EXPECT_EQ(Topology(sim[7]).numa_node, 1);
  // The node's 8 ConnectX-7 compute NICs, named as the DGX H100 User Guide names them, come after this machine's own
  // NICs.
  const char* names[] = {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  const uint32_t first = NicIndex(sim.instance().get(), "mlx5_0");
  for (uint32_t g = 0; g < 8; ++g) {
    ASSERT_EQ(NicIndex(sim.instance().get(), names[g]), first + g);
    EXPECT_EQ(NicLink(sim[g], first + g).link_class, ACCEL_LINK_CLASS_PIX)
        << "GPU " << g << " and its NIC share a switch";
    EXPECT_EQ(Topology(sim[g]).nearest_nic, static_cast<int32_t>(first + g));
  }
  EXPECT_EQ(NicLink(sim[0], first + 1).link_class, ACCEL_LINK_CLASS_NODE);
  EXPECT_EQ(NicLink(sim[0], first + 5).link_class, ACCEL_LINK_CLASS_SYS);
  for (uint32_t i = 0; i < first; ++i) {
    EXPECT_EQ(NicLink(sim[0], i).link_class, ACCEL_LINK_CLASS_NONE)
        << "this machine's NIC " << i << " is not the simulated node's";
  }
  std::vector<accel_domain_t> d = Domains(sim[0]);
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].level, ACCEL_DOMAIN_LEVEL_CLIQUE);
  EXPECT_EQ(d[1].level, ACCEL_DOMAIN_LEVEL_NODE);
  EXPECT_STREQ(d[1].id, "sim-h100-sxm-8");
}

TEST(SimProfiles, Mi300xNodeHasOneXgmiLinkPerPair) {
  SimInstance sim("mi300x-8");
  // AMD: seven Infinity Fabric links per MI300X, one to each peer, 128 GB/s both ways (64 GB/s one way).
  for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 5}, std::pair{7, 0}}) {
    accel_device_link_t l = Link(sim[a], sim[b]);
    EXPECT_EQ(l.link_class, ACCEL_LINK_CLASS_FABRIC);
    EXPECT_EQ(l.link_count, 1u);
    EXPECT_EQ(l.bandwidth, 64 * kGB);
    EXPECT_EQ(l.peer_access, 1u);
  }
}

TEST(SimProfiles, A100PcieNodeMixesPixPhbAndSys) {
  SimInstance sim("a100-pcie-4");
  // PCIe 4.0 x16: 16 GT/s x 16 lanes x 128/130 = 31.5 GB/s one way.
  accel_device_link_t pix = Link(sim[0], sim[1]);
  EXPECT_EQ(pix.link_class, ACCEL_LINK_CLASS_PIX);
  EXPECT_EQ(pix.bandwidth, 31500000000u);
  EXPECT_EQ(pix.peer_access, 1u);
  EXPECT_EQ(Link(sim[0], sim[2]).link_class, ACCEL_LINK_CLASS_PHB);
  EXPECT_EQ(Link(sim[1], sim[2]).link_class, ACCEL_LINK_CLASS_PHB);
  accel_device_link_t sys = Link(sim[0], sim[3]);
  EXPECT_EQ(sys.link_class, ACCEL_LINK_CLASS_SYS);
  EXPECT_EQ(sys.peer_access, 0u);
  EXPECT_EQ(Link(sim[2], sim[3]).link_class, ACCEL_LINK_CLASS_SYS);
}

TEST(SimProfiles, TpuSliceIsATwoByTwoTorus) {
  SimInstance sim("tpu-2x2");
  // ICI: 400 Gb/s = 50 GB/s one way per link; in a 2x2 torus each neighbour pair has two links (one wraps around).
  for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 3}, std::pair{0, 2}, std::pair{1, 3}}) {
    accel_device_link_t l = Link(sim[a], sim[b]);
    EXPECT_EQ(l.link_class, ACCEL_LINK_CLASS_FABRIC);
    EXPECT_EQ(l.link_count, 2u);
    EXPECT_EQ(l.bandwidth, 2 * 50 * kGB);
    EXPECT_STREQ(l.fabric, "ici");
  }
  EXPECT_EQ(Link(sim[0], sim[3]).link_count, 0u) << "diagonal: no direct link, routed through a neighbour";
  std::vector<accel_domain_t> d = Domains(sim[0]);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].level, ACCEL_DOMAIN_LEVEL_CLIQUE);
  EXPECT_EQ(d[1].level, ACCEL_DOMAIN_LEVEL_NODE);
  EXPECT_EQ(d[2].level, ACCEL_DOMAIN_LEVEL_SLICE);
  EXPECT_STREQ(d[2].id, "slice-a");
}

TEST(SimProfiles, MixedVendorNodeHasNoPeerAccessAcrossVendors) {
  SimInstance sim("mixed-vendor");
  accel_device_capabilities_t mi210 = ScopedInstance::Capabilities(sim[2]);
  EXPECT_EQ(mi210.memory_total, 64 * kGiB);  // AMD MI210: 64 GB HBM2e
  EXPECT_EQ(mi210.compute_units, 104u);
  EXPECT_STREQ(mi210.vendor, "AMD");
  accel_device_link_t bridge = Link(sim[2], sim[3]);
  EXPECT_EQ(bridge.link_class, ACCEL_LINK_CLASS_FABRIC);
  EXPECT_EQ(bridge.link_count, 3u);  // Infinity Fabric Link bridge: 3 links, 300 GB/s both ways
  EXPECT_EQ(bridge.bandwidth, 150 * kGB);
  accel_device_link_t cross = Link(sim[0], sim[2]);
  EXPECT_EQ(cross.link_class, ACCEL_LINK_CLASS_SYS);
  EXPECT_EQ(cross.peer_access, 0u);
  EXPECT_EQ(Link(sim[0], sim[1]).link_class, ACCEL_LINK_CLASS_PIX);
}

// --- Listing -------------------------------------------------------------------------------------------------------

TEST(SimBackend, ListsNothingWithoutAProfile) {
  unsetenv("ACCEL_SIM_PROFILE");
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  ScopedInstance instance(&d);
  EXPECT_TRUE(instance.Devices().empty());
  bool seen = false;
  for (const auto& e : instance.Report()) {
    if (std::string(e.backend_name) != "sim") continue;
    seen = true;
    EXPECT_EQ(e.state, ACCEL_LOADER_STATE_LOADED);
    EXPECT_EQ(e.device_count, 0u);
  }
  EXPECT_TRUE(seen);
}

TEST(SimBackend, ABadProfileFailsTheBackendAloneWithTheParserMessage) {
  TempDir dir;
  const std::string path = dir.Write("broken.json", R"({"format_version": "1.0", "devices": [{"id": "x"}]})");
  setenv("ACCEL_SIM_PROFILE", path.c_str(), 1);
  accel_instance_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  d.struct_size = sizeof(d);
  d.backends = "sim,host";
  ScopedInstance instance(&d);
  EXPECT_NE(instance.DeviceOf("host"), nullptr) << "the host backend still works";
  bool seen = false;
  for (const auto& e : instance.Report()) {
    if (std::string(e.backend_name) != "sim") continue;
    seen = true;
    EXPECT_EQ(e.state, ACCEL_LOADER_STATE_FAILED);
    EXPECT_TRUE(Contains(e.reason, path + ": devices[0].kind: missing (required)"));
  }
  EXPECT_TRUE(seen);
}

TEST(SimBackend, AnUnknownProfileNameListsTheShippedOnes) {
  setenv("ACCEL_SIM_PROFILE", "h200-nvl-16", 1);
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  ScopedInstance instance(&d);
  for (const auto& e : instance.Report()) {
    if (std::string(e.backend_name) != "sim") continue;
    EXPECT_EQ(e.status, ACCEL_ERROR_NOT_FOUND);
    EXPECT_TRUE(Contains(e.reason, "no shipped profile 'h200-nvl-16'"));
    EXPECT_TRUE(Contains(e.reason, "h100-sxm-8"));
  }
}

// --- Capacity ------------------------------------------------------------------------------------------------------

// A two-device node with 64 MiB and 1 GiB, for capacity and fault tests.
std::string SmallProfile(const TempDir& dir, const std::string& faults = "") {
  return dir.Write("small.json", R"({"format_version": "1.0", "name": "small",
    "devices": [
      {"id": "s0", "kind": "npu", "name": "Small NPU", "vendor": "Test", "sku": "test-small", "memory": 67108864,
       "compute_units": 2},
      {"id": "s1", "kind": "npu", "name": "Small NPU", "vendor": "Test", "sku": "test-small", "memory": 1073741824,
       "compute_units": 2}]
    )" + faults + "}");
}

TEST(SimMemory, CapacityIsEnforcedAndFreeingRestoresIt) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir));
  accel_device_t dev = sim[0];
  std::vector<accel_buffer_t> buffers;
  for (int i = 0; i < 4; ++i) {  // 4 x 16 MiB = the whole 64 MiB
    accel_buffer_desc_t d = BufferDesc(16 * kMiB);
    accel_buffer_t b = nullptr;
    ASSERT_EQ(accel_buffer_create(dev, &d, &b), ACCEL_SUCCESS) << accel_last_error();
    buffers.push_back(b);
  }
  uint64_t free = 1;
  ASSERT_EQ(accel_device_get_memory_info(dev, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 0u);
  accel_buffer_desc_t one = BufferDesc(1);
  accel_buffer_t extra = nullptr;
  EXPECT_EQ(accel_buffer_create(dev, &one, &extra), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  const std::string message = accel_last_error();
  EXPECT_TRUE(Contains(message, "'s0'")) << "names the device";
  EXPECT_TRUE(Contains(message, "1 bytes (0.00 GiB) requested")) << "names the request";
  EXPECT_TRUE(Contains(message, "0 bytes (0.00 GiB) free of 67108864 bytes")) << "names free and total memory";
  // The other device is not affected.
  accel_buffer_desc_t big = BufferDesc(512 * kMiB);
  accel_buffer_t other = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[1], &big, &other), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_buffer_destroy(other), ACCEL_SUCCESS);
  // Freeing one restores exactly its size.
  EXPECT_EQ(accel_buffer_destroy(buffers.back()), ACCEL_SUCCESS);
  buffers.pop_back();
  ASSERT_EQ(accel_device_get_memory_info(dev, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 16 * kMiB);
  accel_buffer_desc_t again = BufferDesc(16 * kMiB);
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(dev, &again, &b), ACCEL_SUCCESS) << accel_last_error();
  buffers.push_back(b);
  for (accel_buffer_t x : buffers) EXPECT_EQ(accel_buffer_destroy(x), ACCEL_SUCCESS);
  ASSERT_EQ(accel_device_get_memory_info(dev, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 64 * kMiB);
}

// Pinned host buffers are host memory (docs/memory-limits.md): a full device still makes them, and they take
// nothing of its capacity.
TEST(SimMemory, PinnedHostBuffersDoNotUseDeviceMemory) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir));
  accel_device_t dev = sim[0];
  accel_buffer_desc_t pinned_desc = BufferDesc(64 * kMiB);  // the device's whole memory, twice over below
  pinned_desc.memory_kind = ACCEL_MEMORY_KIND_HOST_PINNED;
  accel_buffer_t pinned[2] = {nullptr, nullptr};
  for (auto& p : pinned) ASSERT_EQ(accel_buffer_create(dev, &pinned_desc, &p), ACCEL_SUCCESS) << accel_last_error();
  uint64_t free = 0;
  ASSERT_EQ(accel_device_get_memory_info(dev, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 64 * kMiB) << "pinned host buffers took device memory";
  accel_buffer_desc_t whole = BufferDesc(64 * kMiB);
  accel_buffer_t device_buffer = nullptr;
  EXPECT_EQ(accel_buffer_create(dev, &whole, &device_buffer), ACCEL_SUCCESS) << accel_last_error();
  if (device_buffer != nullptr) {
    EXPECT_EQ(accel_buffer_destroy(device_buffer), ACCEL_SUCCESS);
  }
  for (auto p : pinned) EXPECT_EQ(accel_buffer_destroy(p), ACCEL_SUCCESS);
  ASSERT_EQ(accel_device_get_memory_info(dev, &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 64 * kMiB);
}

TEST(SimMemory, StreamOrderedFreeReturnsCapacityWhenTheWorkIsDone) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir));
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[0], nullptr, &stream), ACCEL_SUCCESS);
  accel_test::Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  accel_buffer_desc_t d = BufferDesc(64 * kMiB);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[0], &d, &b), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_stream_free_buffer(stream, b), ACCEL_SUCCESS) << accel_last_error();
  uint64_t free = 1;
  ASSERT_EQ(accel_device_get_memory_info(sim[0], &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 0u) << "the stream has not reached the free yet";
  gate.Open();
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  ASSERT_EQ(accel_device_get_memory_info(sim[0], &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(free, 64 * kMiB);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0;
  uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(SimMemory, A64GiBAllocationCostsNothingUntilTouched) {
  SimInstance sim("h100-sxm-8");
  const uint64_t before = ResidentBytes();
  accel_buffer_desc_t d = BufferDesc(64 * kGiB);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[0], &d, &b), ACCEL_SUCCESS) << accel_last_error();
  const uint64_t after = ResidentBytes();
  EXPECT_LT(after - std::min(after, before), 64 * kMiB) << "resident memory grew by " << (after - before) << " bytes";
  // Touching one page works and costs one page.
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[0], nullptr, &stream), ACCEL_SUCCESS);
  const uint32_t value = 0xC0FFEEu;
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &value, b, 63 * kGiB, sizeof(value)), ACCEL_SUCCESS);
  uint32_t back = 0;
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, b, 63 * kGiB, &back, sizeof(back)), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back, value);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
}

// --- Copies between devices ----------------------------------------------------------------------------------------

accel_copy_statistics_t Statistics(accel_stream_t s) {
  accel_copy_statistics_t c{};
  c.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  c.struct_size = sizeof(c);
  EXPECT_EQ(accel_stream_get_copy_statistics(s, &c), ACCEL_SUCCESS) << accel_last_error();
  return c;
}

// Copies `n` words from a buffer of `from` to a buffer of `to` on a stream of `from`; checks the data and returns the
// stream's counters.
accel_copy_statistics_t CopyBetween(accel_device_t from, accel_device_t to, uint32_t n) {
  std::vector<uint32_t> data(n);
  std::iota(data.begin(), data.end(), 7u);
  accel_buffer_desc_t d = BufferDesc(n * sizeof(uint32_t));
  accel_buffer_t src = nullptr;
  accel_buffer_t dst = nullptr;
  EXPECT_EQ(accel_buffer_create(from, &d, &src), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_buffer_create(to, &d, &dst), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  EXPECT_EQ(accel_stream_create(from, nullptr, &stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, data.data(), src, 0, d.size), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_buffer(stream, src, 0, dst, 0, d.size), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  // Read back on a stream of the target device.
  accel_stream_t reader = nullptr;
  EXPECT_EQ(accel_stream_create(to, nullptr, &reader), ACCEL_SUCCESS);
  std::vector<uint32_t> back(n);
  EXPECT_EQ(accel_stream_copy_buffer_to_host(reader, dst, 0, back.data(), d.size), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_synchronize(reader, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(back, data);
  EXPECT_EQ(Statistics(reader).device_to_host_copies, 1u);
  EXPECT_EQ(accel_stream_destroy(reader), ACCEL_SUCCESS);
  accel_copy_statistics_t stats = Statistics(stream);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(src), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(dst), ACCEL_SUCCESS);
  return stats;
}

TEST(SimCopies, GoPeerToPeerWhereTheLinkAllowsAndThroughHostElsewhere) {
  SimInstance sim("a100-pcie-4");
  const uint32_t n = 3 * 1024 * 1024 + 5;  // 12 MiB and a bit: several bounce-buffer chunks
  const uint64_t bytes = uint64_t{n} * sizeof(uint32_t);
  accel_copy_statistics_t peer = CopyBetween(sim[0], sim[1], n);  // PIX, peer access
  EXPECT_EQ(peer.peer_copies, 1u);
  EXPECT_EQ(peer.peer_bytes, bytes);
  EXPECT_EQ(peer.staged_copies, 0u);
  EXPECT_EQ(peer.host_to_device_copies, 1u);
  EXPECT_EQ(peer.host_to_device_bytes, bytes);
  accel_copy_statistics_t staged = CopyBetween(sim[0], sim[3], n);  // SYS, no peer access
  EXPECT_EQ(staged.staged_copies, 1u);
  EXPECT_EQ(staged.staged_bytes, bytes);
  EXPECT_EQ(staged.peer_copies, 0u);
  accel_copy_statistics_t local = CopyBetween(sim[2], sim[2], 1000);
  EXPECT_EQ(local.local_copies, 1u);
  EXPECT_EQ(local.peer_copies + local.staged_copies, 0u);
}

// --- Streams and kernels -------------------------------------------------------------------------------------------

TEST(SimStreams, AreAsynchronous) {
  SimInstance sim("tpu-2x2");
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[1], nullptr, &stream), ACCEL_SUCCESS);
  accel_test::Gate gate;
  ASSERT_EQ(accel_stream_enqueue_host_callback(stream, accel_test::Gate::Wait, &gate), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_query(stream), ACCEL_NOT_READY) << "the enqueue returned before the work ran";
  gate.Open();
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_query(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
}

TEST(SimKernels, ANativeHostVectorAddRunsOnASimulatedDevice) {
  SimInstance sim("mi300x-8");
  accel_device_t dev = sim[5];
  accel_module_source_t source = accel_test::NativeSource(accel_test::TestModule());
  accel_module_desc_t desc = accel_test::ModuleDesc(&source, 1, "test kernels");
  accel_module_t module = nullptr;
  ASSERT_EQ(accel_module_create(dev, &desc, &module), ACCEL_SUCCESS) << accel_last_error();
  accel_kernel_t vadd = nullptr;
  ASSERT_EQ(accel_module_get_kernel(module, "vadd", &vadd), ACCEL_SUCCESS) << accel_last_error();
  const uint32_t n = 1000;
  std::vector<float> a(n);
  std::vector<float> b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 2.0f * static_cast<float>(i);
  }
  accel_buffer_desc_t d = BufferDesc(n * sizeof(float));
  accel_buffer_t ba = nullptr;
  accel_buffer_t bb = nullptr;
  accel_buffer_t bc = nullptr;
  ASSERT_EQ(accel_buffer_create(dev, &d, &ba), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_create(dev, &d, &bb), ACCEL_SUCCESS);
  ASSERT_EQ(accel_buffer_create(dev, &d, &bc), ACCEL_SUCCESS);
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(dev, nullptr, &stream), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, a.data(), ba, 0, d.size), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, b.data(), bb, 0, d.size), ACCEL_SUCCESS);
  accel_kernel_arg_t args[] = {accel_test::BufferArg(ba), accel_test::BufferArg(bb), accel_test::BufferArg(bc),
                               accel_test::ScalarArg(&n)};
  accel_launch_desc_t launch = accel_test::Launch({8, 1, 1}, {128, 1, 1}, args, 4);
  ASSERT_EQ(accel_stream_launch_kernel(stream, vadd, &launch), ACCEL_SUCCESS) << accel_last_error();
  std::vector<float> c(n);
  ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, bc, 0, c.data(), d.size), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], 3.0f * static_cast<float>(i)) << i;
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  for (accel_buffer_t x : {ba, bb, bc}) EXPECT_EQ(accel_buffer_destroy(x), ACCEL_SUCCESS);
  EXPECT_EQ(accel_module_destroy(module), ACCEL_SUCCESS);
}

// --- Faults --------------------------------------------------------------------------------------------------------

// Which of `count` 1 MiB allocations on device 1 of the small profile fail, under ACCEL_SIM_FAULTS `faults`.
std::vector<bool> AllocationFailures(const std::string& faults, int count, std::string* message) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir), faults);
  std::vector<bool> failed;
  for (int i = 0; i < count; ++i) {
    accel_buffer_desc_t d = BufferDesc(kMiB);
    accel_buffer_t b = nullptr;
    const accel_status_t s = accel_buffer_create(sim[1], &d, &b);
    failed.push_back(s != ACCEL_SUCCESS);
    if (s == ACCEL_SUCCESS) {
      EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
    } else {
      EXPECT_EQ(s, ACCEL_ERROR_RESOURCE_EXHAUSTED);
      *message = accel_last_error();
    }
  }
  return failed;
}

TEST(SimFaults, AllocationFailuresFollowTheSeed) {
  std::string message;
  const auto first = AllocationFailures("seed=42,alloc_fail=0.3", 200, &message);
  const auto again = AllocationFailures("seed=42,alloc_fail=0.3", 200, &message);
  const auto other = AllocationFailures("seed=43,alloc_fail=0.3", 200, &message);
  EXPECT_EQ(first, again) << "the same seed gives the same failures";
  EXPECT_NE(first, other) << "another seed gives other failures";
  const auto failures = std::count(first.begin(), first.end(), true);
  EXPECT_GT(failures, 20) << "about 60 of 200 expected";
  EXPECT_LT(failures, 120);
  EXPECT_TRUE(Contains(message, "failed by injection (alloc_fail=0.3"));
  EXPECT_TRUE(Contains(message, "seed 43"));
  const auto none = AllocationFailures("seed=42", 50, &message);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

TEST(SimFaults, TheDeviceIsLostAfterNOperations) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir), "device_lost_after=3,devices=s0");
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[0], nullptr, &stream), ACCEL_SUCCESS);
  accel_buffer_desc_t d = BufferDesc(64);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[0], &d, &b), ACCEL_SUCCESS);  // operation 1
  const uint32_t v = 1;
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 0, 4), ACCEL_SUCCESS);            // 2
  ASSERT_EQ(accel_stream_fill_buffer(stream, b, 4, 4, &v, 4), ACCEL_SUCCESS);                 // 3
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 8, 4), ACCEL_ERROR_DEVICE_LOST);  // 4: lost
  EXPECT_TRUE(Contains(accel_last_error(), "'s0'"));
  EXPECT_TRUE(Contains(accel_last_error(), "device_lost_after=3"));
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_DEVICE_LOST);
  accel_buffer_t c = nullptr;
  EXPECT_EQ(accel_buffer_create(sim[0], &d, &c), ACCEL_ERROR_DEVICE_LOST);
  EXPECT_EQ(accel_device_get_memory_info(sim[0], nullptr, nullptr), ACCEL_ERROR_INVALID_ARGUMENT);
  uint64_t free = 0;
  EXPECT_EQ(accel_device_get_memory_info(sim[0], &free, nullptr), ACCEL_ERROR_DEVICE_LOST);
  // The other device is not lost, and the lost one's objects still release cleanly.
  accel_buffer_t other = nullptr;
  EXPECT_EQ(accel_buffer_create(sim[1], &d, &other), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_buffer_destroy(other), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
}

TEST(SimFaults, AStreamReportsAnErrorAfterNOperationsThroughItsEvents) {
  TempDir dir;
  SimInstance sim(
      SmallProfile(dir, R"(, "faults": {"seed": 5, "stream_error_after": 2, "stream_error_status": "internal"})"));
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[0], nullptr, &stream), ACCEL_SUCCESS);
  accel_event_t event = nullptr;
  ASSERT_EQ(accel_event_create(sim[0], nullptr, &event), ACCEL_SUCCESS);
  accel_buffer_desc_t d = BufferDesc(64);
  accel_buffer_t b = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[0], &d, &b), ACCEL_SUCCESS);
  const uint32_t v = 9;
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 0, 4), ACCEL_SUCCESS);  // stream operation 1
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 4, 4), ACCEL_SUCCESS);  // 2
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 8, 4), ACCEL_SUCCESS);  // 3: fails on the stream
  ASSERT_EQ(accel_stream_record_event(stream, event), ACCEL_SUCCESS);
  EXPECT_EQ(accel_event_synchronize(event, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_ERROR_INTERNAL);
  EXPECT_TRUE(Contains(accel_last_error(), "operation #3 (stream_copy_host_to_buffer)"));
  EXPECT_TRUE(Contains(accel_last_error(), "failed by injection (stream_error_after=2, seed 5)"));
  EXPECT_EQ(accel_stream_clear_error(stream), ACCEL_SUCCESS);
  ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, &v, b, 12, 4), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << "one failure per stream";
  EXPECT_EQ(accel_event_destroy(event), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
}

// Log messages of an instance, collected by its log callback.
struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  static void Collect(void* user_data, accel_log_level_t, const char* message) {
    auto* self = static_cast<LogLines*>(user_data);
    std::lock_guard lock(self->mutex);
    self->lines.emplace_back(message);
  }
  size_t CountContaining(const std::string& part) {
    std::lock_guard lock(mutex);
    return static_cast<size_t>(std::count_if(lines.begin(), lines.end(),
                                             [&](const std::string& l) { return l.find(part) != std::string::npos; }));
  }
};

TEST(SimFaults, SlowCopiesWaitOnTheirStreamKeepTheirBytesAndAreLogged) {
  TempDir dir;
  setenv("ACCEL_SIM_PROFILE", SmallProfile(dir).c_str(), 1);
  setenv("ACCEL_SIM_FAULTS", "seed=3,slow_copy=1,slow_copy_us=20000,devices=s1", 1);
  LogLines log;
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  d.log_level = ACCEL_LOG_LEVEL_INFO;
  d.log_callback = &LogLines::Collect;
  d.log_user_data = &log;
  ScopedInstance instance(&d);
  unsetenv("ACCEL_SIM_FAULTS");
  const auto devices = instance.Devices();
  ASSERT_EQ(devices.size(), 2U);
  std::vector<uint32_t> in(1024);
  std::iota(in.begin(), in.end(), 7U);
  std::vector<uint32_t> out(in.size());
  for (size_t i = 0; i < 2; ++i) {
    const accel_buffer_desc_t bd = BufferDesc(in.size() * 4);
    accel_buffer_t b = nullptr;
    ASSERT_EQ(accel_buffer_create(devices[i], &bd, &b), ACCEL_SUCCESS) << accel_last_error();
    accel_stream_t stream = nullptr;
    ASSERT_EQ(accel_stream_create(devices[i], nullptr, &stream), ACCEL_SUCCESS);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(accel_stream_copy_host_to_buffer(stream, in.data(), b, 0, bd.size), ACCEL_SUCCESS);
    ASSERT_EQ(accel_stream_copy_buffer_to_host(stream, b, 0, out.data(), bd.size), ACCEL_SUCCESS);
    const auto enqueued = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
    const auto done = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(out, in) << "a slowed copy copies the same bytes";
    if (i == 1) {
      EXPECT_GE(done, std::chrono::milliseconds(40)) << "two copies, each 20 ms late";
      EXPECT_LT(enqueued, std::chrono::milliseconds(20)) << "the wait is the stream's, not the caller's";
    }
    std::fill(out.begin(), out.end(), 0U);
    EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
    EXPECT_EQ(accel_buffer_destroy(b), ACCEL_SUCCESS);
  }
  EXPECT_EQ(log.CountContaining("slowed by 20000 us by injection (slow_copy=1"), 2U) << "only s1's copies";
  EXPECT_EQ(log.CountContaining("'s1' (Small NPU): copy #2 (stream_copy_buffer_to_host) slowed by"), 1U);
}

TEST(SimFaults, LostDevicesNarrowDeviceLossWhileOtherFaultsHitEveryDevice) {
  TempDir dir;
  LogLines log;
  setenv("ACCEL_SIM_PROFILE", SmallProfile(dir).c_str(), 1);
  setenv("ACCEL_SIM_FAULTS", "alloc_fail=1,device_lost_after=1,lost_devices=s1", 1);
  accel_instance_desc_t d = ScopedInstance::Backends("sim");
  d.log_level = ACCEL_LOG_LEVEL_INFO;
  d.log_callback = &LogLines::Collect;
  d.log_user_data = &log;
  ScopedInstance instance(&d);
  unsetenv("ACCEL_SIM_FAULTS");
  const auto devices = instance.Devices();
  ASSERT_EQ(devices.size(), 2U);
  const accel_buffer_desc_t bd = BufferDesc(64);
  for (int i = 0; i < 3; ++i) {
    accel_buffer_t b = nullptr;
    EXPECT_EQ(accel_buffer_create(devices[0], &bd, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED) << "s0 is never lost";
    EXPECT_TRUE(Contains(accel_last_error(), "failed by injection (alloc_fail=1"));
  }
  accel_buffer_t b = nullptr;
  EXPECT_EQ(accel_buffer_create(devices[1], &bd, &b), ACCEL_ERROR_RESOURCE_EXHAUSTED);  // operation 1
  EXPECT_EQ(accel_buffer_create(devices[1], &bd, &b), ACCEL_ERROR_DEVICE_LOST);         // 2: lost
  uint64_t free = 0;
  EXPECT_EQ(accel_device_get_memory_info(devices[0], &free, nullptr), ACCEL_SUCCESS);
  EXPECT_EQ(log.CountContaining("failed by injection (alloc_fail="), 4U) << "each injected failure is logged";
  // As docs/sim.md words it (it said "of 64 bytes (0.00 GiB)" and "alloc_fail=1.000000").
  EXPECT_EQ(
      log.CountContaining("'s0' (Small NPU): allocation #1 of 64 bytes failed by injection (alloc_fail=1, seed 0)"),
      1U);
  EXPECT_EQ(log.CountContaining("'s1' (Small NPU) lost at operation 2"), 1U);

  // An unknown id in lost_devices fails the backend, naming the key.
  setenv("ACCEL_SIM_FAULTS", "device_lost_after=1,lost_devices=s7", 1);
  accel_instance_desc_t plain = ScopedInstance::Backends("sim");
  ScopedInstance refused(&plain);
  unsetenv("ACCEL_SIM_FAULTS");
  EXPECT_TRUE(refused.Devices().empty());
  for (const auto& e : refused.Report()) {
    if (std::string(e.backend_name) == "sim") {
      EXPECT_TRUE(Contains(e.reason, "lost_devices: 's7' is not a device of"));
    }
  }
}

TEST(SimFaults, ALostDevicesMemoryIsGoneForEveryStream) {
  // s1 is lost; a copy between its buffer and s0's, on s0's stream, returned the lost device's bytes.
  TempDir dir;
  SimInstance sim(SmallProfile(dir), "device_lost_after=1,lost_devices=s1");
  ASSERT_EQ(sim.devices().size(), 2U);
  const accel_buffer_desc_t bd = BufferDesc(64);
  accel_buffer_t on1 = nullptr;
  accel_buffer_t on0 = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[1], &bd, &on1), ACCEL_SUCCESS) << accel_last_error();  // s1's operation 1
  accel_buffer_t lost = nullptr;
  ASSERT_EQ(accel_buffer_create(sim[1], &bd, &lost), ACCEL_ERROR_DEVICE_LOST);  // 2: lost
  ASSERT_EQ(accel_buffer_create(sim[0], &bd, &on0), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(sim[0], nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_buffer(stream, on1, 0, on0, 0, 64), ACCEL_ERROR_DEVICE_LOST);
  EXPECT_TRUE(Contains(accel_last_error(), "is lost")) << accel_last_error();
  EXPECT_EQ(accel_stream_copy_buffer(stream, on0, 0, on1, 0, 64), ACCEL_ERROR_DEVICE_LOST);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << "s0's stream is untouched";
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(on0), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(on1), ACCEL_SUCCESS) << "a lost device's objects still release";
}

TEST(SimFaults, LostDevicesOutsideTheFaultyDevicesAreRejected) {
  // "lost_devices: those of `devices`" (docs/sim.md): one outside them was never lost, silently.
  TempDir dir;
  SimInstance sim(SmallProfile(dir), "devices=s0,device_lost_after=1,lost_devices=s1");
  EXPECT_TRUE(sim.devices().empty());
  bool reported = false;
  for (const auto& e : sim.instance().Report()) {
    if (std::string(e.backend_name) == "sim") {
      reported = true;
      EXPECT_TRUE(Contains(e.reason, "lost_devices: 's1' is not one of 'devices'")) << e.reason;
    }
  }
  EXPECT_TRUE(reported);
}

TEST(SimFaults, UnknownFaultDevicesAreRejected) {
  TempDir dir;
  SimInstance sim(SmallProfile(dir), "devices=s9");
  EXPECT_TRUE(sim.devices().empty());
  for (const auto& e : sim.instance().Report()) {
    if (std::string(e.backend_name) == "sim") {
      EXPECT_TRUE(Contains(e.reason, "'s9' is not a device of"));
    }
  }
}

}  // namespace
