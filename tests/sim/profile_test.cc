// The topology description parser (backends/sim/profile.h): every shipped
// profile parses; malformed descriptions are rejected with a message naming
// the file, the field and the reason.
#include "profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using accel::sim::FaultSpec;
using accel::sim::ParseFaults;
using accel::sim::ParseProfile;
using accel::sim::Profile;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A description's text, edited by exact replacement (each malformed case changes one piece).
struct Doc {
  std::string text;
  Doc replace(const std::string& from, const std::string& to) const {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the minimal description";
    if (at == std::string::npos) return *this;
    return Doc{std::string(text).replace(at, from.size(), to)};
  }
  operator std::string() const { return text; }  // NOLINT(google-explicit-constructor)
};

// A minimal valid description with two devices, two domains and a NIC.
Doc Minimal(const std::string& device0_extra = "", const std::string& tail = "") {
  return Doc{R"({"format_version": "1.0", "name": "t", "node": {"id": "n1", "domain": "r1"},
  "numa_nodes": [{"id": 0, "cpus": "0-3"}],
  "devices": [
    {"id": "a", "kind": "gpu", "name": "A", "vendor": "V", "sku": "v-a", "memory": 1024, "compute_units": 4)" +
             device0_extra + R"(},
    {"id": "b", "kind": "gpu", "name": "B", "vendor": "V", "sku": "v-b", "memory": 2048, "compute_units": 8}],
  "nics": [{"name": "eth0"}],
  "domains": [{"level": "rack", "id": "r1", "parent": "b1"}, {"level": "block", "id": "b1"}])" +
             tail + "}"};
}

struct Bad {
  const char* what;
  std::string text;
  const char* field;   // the field the message must name
  const char* reason;  // a key part of the reason
};

class MalformedProfile : public ::testing::TestWithParam<Bad> {};

TEST_P(MalformedProfile, IsRejectedNamingFileFieldAndReason) {
  const Bad& bad = GetParam();
  std::string error;
  auto profile = ParseProfile(bad.text, "/tmp/profiles/bad.json", &error);
  EXPECT_FALSE(profile.has_value()) << bad.what;
  EXPECT_EQ(error.rfind("/tmp/profiles/bad.json: ", 0), 0u) << error;
  EXPECT_NE(error.find(std::string(": ") + bad.field + ": "), std::string::npos) << error;
  EXPECT_NE(error.find(bad.reason), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedProfile,
    ::testing::Values(
        Bad{"not JSON", "{\"format_version\": ", "not JSON", "byte"},
        // Found by fuzz_profile_parser: nlohmann throws out_of_range (not parse_error) here.
        Bad{"number too large", "{\"format_version\": 855E20809984}", "not JSON", "number overflow"},
        Bad{"misspelt field", Minimal(R"(, "memory_x": 1)"), "devices[0].memory_x", "unknown field"},
        Bad{"wrong type", Minimal(R"(, "clock_mhz": "fast")"), "devices[0].clock_mhz",
            "expected an unsigned integer, got a string"},
        Bad{"negative", Minimal(R"(, "clock_mhz": -5)"), "devices[0].clock_mhz", "got a negative integer"},
        Bad{"missing field",
            R"({"format_version": "1.0", "devices": [{"id": "a", "kind": "gpu", "name": "A", "vendor": "V", "sku": "s", "compute_units": 1}]})",
            "devices[0].memory", "missing (required)"},
        Bad{"no devices", R"({"format_version": "1.0", "devices": []})", "devices", "at least one device"},
        Bad{"bad format version", R"({"format_version": "2.0", "devices": []})", "format_version", "not a 1.x"},
        Bad{"unknown kind", Minimal().replace(R"("kind": "gpu", "name": "A")", R"("kind": "qpu", "name": "A")"),
            "devices[0].kind", "unknown kind 'qpu'"},
        Bad{"unknown numeric format", Minimal(R"(, "numeric_formats": ["fp32", "fp7"])"),
            "devices[0].numeric_formats[1]", "unknown name 'fp7'"},
        Bad{"bad PCI bus id", Minimal(R"(, "pci_bus_id": "3b:00.0")"), "devices[0].pci_bus_id", "is not a PCI bus id"},
        Bad{"bad UUID", Minimal(R"(, "uuid": "1234")"), "devices[0].uuid", "is not a UUID"},
        Bad{"NUMA node not declared", Minimal(R"(, "numa_node": 3)"), "devices[0].numa_node", "not in 'numa_nodes'"},
        Bad{"max_allocation past memory", Minimal(R"(, "max_allocation": 4096)"), "devices[0].max_allocation",
            "must lie in"},
        Bad{"duplicate device id", Minimal().replace(R"("id": "b")", R"("id": "a")"), "devices[1].id",
            "duplicate device id 'a'"},
        Bad{"duplicate PCI bus id",
            Minimal(R"(, "pci_bus_id": "0000:01:00.0")")
                .replace(R"("sku": "v-b",)", R"("sku": "v-b", "pci_bus_id": "0000:01:00.0",)"),
            "devices[1].pci_bus_id", "also the PCI bus id of device 'a'"},
        Bad{"duplicate UUID",
            Minimal(R"(, "uuid": "01234567-89ab-cdef-0123-456789abcdef")")
                .replace(R"("sku": "v-b",)", R"("sku": "v-b", "uuid": "01234567-89AB-CDEF-0123-456789ABCDEF",)"),
            "devices[1].uuid", "also the UUID of device 'a'"},
        Bad{"link to an unknown device", Minimal("", R"(, "links": [{"devices": ["a", "zz"], "class": "PIX"}])"),
            "links[0].devices[1]", "unknown device 'zz'"},
        Bad{"link with one device", Minimal("", R"(, "links": [{"devices": ["a"], "class": "PIX"}])"),
            "links[0].devices", "a link joins at least 2"},
        Bad{"duplicate link",
            Minimal("",
                    R"(, "links": [{"devices": ["a", "b"], "class": "PIX"}, {"devices": ["b", "a"], "class": "SYS"}])"),
            "links[1].devices", "already has a link in links[0]"},
        Bad{"unknown link class", Minimal("", R"(, "links": [{"devices": ["a", "b"], "class": "NVLINK"}])"),
            "links[0].class", "unknown link class 'NVLINK'"},
        Bad{"fabric on a PCIe link",
            Minimal("", R"(, "links": [{"devices": ["a", "b"], "class": "PIX", "fabric": "x"}])"), "links[0].fabric",
            "FABRIC links only"},
        Bad{"NIC link to an unknown NIC",
            Minimal("", R"(, "nic_links": [{"device": "a", "nic": "mlx5_9", "class": "PIX"}])"), "nic_links[0].nic",
            "unknown NIC 'mlx5_9'"},
        Bad{"duplicate domain id",
            Minimal().replace(R"({"level": "block", "id": "b1"})",
                              R"({"level": "block", "id": "b1"}, {"level": "zone", "id": "r1"})"),
            "domains[2].id", "duplicate domain id 'r1'"},
        Bad{"domain cycle",
            Minimal().replace(R"({"level": "block", "id": "b1"})", R"({"level": "block", "id": "b1", "parent": "r1"})"),
            "domains[1].parent", "cycle through 'r1'"},
        Bad{"level repeated in the chain",
            Minimal().replace(R"({"level": "block", "id": "b1"})", R"({"level": "rack", "id": "b1"})"),
            "domains[1].level", "'rack' cannot lie above 'rack'"},
        Bad{"parent unknown", Minimal().replace(R"("parent": "b1")", R"("parent": "b9")"), "domains[0].parent",
            "unknown domain 'b9'"},
        Bad{"node domain unknown", Minimal().replace(R"("domain": "r1")", R"("domain": "r7")"), "node.domain",
            "unknown domain 'r7'"},
        Bad{"unknown top-level field", Minimal("", R"(, "devcies": [])"), "devcies", "unknown field"},
        Bad{"fault probability past 1", Minimal("", R"(, "faults": {"allocation_failure_probability": 1.5})"),
            "faults.allocation_failure_probability", "must lie in 0..1"},
        Bad{"slow copy probability past 1", Minimal("", R"(, "faults": {"slow_copy_probability": 2})"),
            "faults.slow_copy_probability", "must lie in 0..1"},
        Bad{"lost device unknown", Minimal("", R"(, "faults": {"device_lost_devices": ["z"]})"),
            "faults.device_lost_devices[0]", "expected the id of a device of the profile"},
        // The schema's minLength 1 (docs/topology.schema.json): "" names nothing and was taken as a name.
        Bad{"empty clique", Minimal(R"(, "clique": "")"), "devices[0].clique", "must not be empty"},
        Bad{"empty NIC kind", Minimal().replace(R"({"name": "eth0"})", R"({"name": "eth0", "kind": ""})"),
            "nics[0].kind", "must not be empty"},
        Bad{"empty node domain", Minimal().replace(R"("domain": "r1")", R"("domain": "")"), "node.domain",
            "must not be empty"},
        // 2^64 - 1 read as a signed integer is -1, "unknown": it was accepted as that.
        Bad{"NUMA node past any integer", Minimal(R"(, "numa_node": 18446744073709551615)"), "devices[0].numa_node",
            "18446744073709551615 is outside -1..4095"}));

TEST(Profile, ACpuListedTwiceCountsOnce) {
  std::string error;
  auto p = ParseProfile(Minimal().replace(R"("cpus": "0-3")", R"("cpus": "0-3,2-5,5")").text, "cpus.json", &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_EQ(p->numa_nodes.at(0).cpu_count, 6u);
}

TEST(Profile, FaultsReadEveryField) {
  std::string error;
  auto p = ParseProfile(Minimal("", R"(, "faults": {"seed": 4, "slow_copy_probability": 0.25,
      "slow_copy_delay_us": 300, "device_lost_after": 9, "device_lost_devices": ["b"]})")
                            .text,
                        "f.json", &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_DOUBLE_EQ(p->faults.slow_copy_probability, 0.25);
  EXPECT_EQ(p->faults.slow_copy_delay_us, 300u);
  EXPECT_EQ(p->faults.device_lost_after, 9u);
  EXPECT_EQ(p->faults.lost_devices, (std::vector<std::string>{"b"}));
  EXPECT_TRUE(p->faults.devices.empty());
}

TEST(Profile, MinimalParsesWithEveryPiece) {
  std::string error;
  auto p = ParseProfile(Minimal().text, "min.json", &error);
  ASSERT_TRUE(p.has_value()) << error;
  ASSERT_EQ(p->devices.size(), 2u);
  EXPECT_EQ(p->devices[1].caps.memory_total, 2048u);
  EXPECT_EQ(p->devices[0].caps.kernel_formats, ACCEL_KERNEL_FORMAT_NATIVE_HOST);
  EXPECT_NE(p->devices[0].caps.flags & ACCEL_DEVICE_FLAG_SIMULATED, 0u);
  EXPECT_EQ(p->numa_nodes.at(0).cpu_count, 4u);
  ASSERT_EQ(p->domains_above_node.size(), 2u);
  EXPECT_EQ(p->domains_above_node[0].level, ACCEL_DOMAIN_LEVEL_RACK);
  EXPECT_STREQ(p->domains_above_node[1].id, "b1");
}

TEST(Profile, EveryShippedProfileParses) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ACCEL_TEST_SIM_PROFILE_DIR)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    std::string error;
    auto p = ParseProfile(ReadFile(entry.path()), entry.path().string(), &error);
    EXPECT_TRUE(p.has_value()) << error;
    if (p) {
      EXPECT_EQ(p->name, entry.path().stem().string()) << "a shipped profile is named after its file";
    }
  }
  EXPECT_EQ(count, 5) << "h100-sxm-8, mi300x-8, a100-pcie-4, tpu-2x2, mixed-vendor";
}

TEST(Profile, AcceptsAWholeAccelInfoDocument) {
  const std::string doc = R"({"schema_version": "1.0", "physical_devices": [], "topology": )" + Minimal().text + "}";
  std::string error;
  auto p = ParseProfile(doc, "info.json", &error);
  ASSERT_TRUE(p.has_value()) << error;
  EXPECT_EQ(p->devices.size(), 2u);
}

TEST(Faults, ParsesEveryKeyAndRejectsUnknownOnes) {
  FaultSpec f;
  std::string error;
  ASSERT_TRUE(
      ParseFaults("seed=7,alloc_fail=0.25,device_lost_after=10,stream_error_after=3,stream_error=timeout,"
                  "devices=a+b",
                  &f, &error))
      << error;
  EXPECT_EQ(f.seed, 7u);
  EXPECT_DOUBLE_EQ(f.allocation_failure_probability, 0.25);
  EXPECT_EQ(f.device_lost_after, 10u);
  EXPECT_EQ(f.stream_error_after, 3u);
  EXPECT_EQ(f.stream_error_status, ACCEL_ERROR_TIMEOUT);
  EXPECT_EQ(f.devices, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(f.slow_copy_probability, 0.0);
  EXPECT_EQ(f.slow_copy_delay_us, 1000u) << "the default wait";
  ASSERT_TRUE(ParseFaults("slow_copy=0.5,slow_copy_us=250,lost_devices=b", &f, &error)) << error;
  EXPECT_DOUBLE_EQ(f.slow_copy_probability, 0.5);
  EXPECT_EQ(f.slow_copy_delay_us, 250u);
  EXPECT_EQ(f.lost_devices, (std::vector<std::string>{"b"}));
  EXPECT_EQ(f.devices, (std::vector<std::string>{"a", "b"})) << "keys not given keep their values";
  EXPECT_TRUE(f.Any());
  EXPECT_FALSE(ParseFaults("slow_copy=1.5", &f, &error));
  EXPECT_NE(error.find("'slow_copy=1.5' has a bad value"), std::string::npos) << error;
  EXPECT_FALSE(ParseFaults("lost_devices=", &f, &error));
  EXPECT_FALSE(ParseFaults("sead=7", &f, &error));
  EXPECT_NE(error.find("unknown key 'sead'"), std::string::npos) << error;
  // Read with from_chars, whatever the locale's decimal separator: a point, never a comma.
  EXPECT_FALSE(ParseFaults("alloc_fail=0,5", &f, &error));
  EXPECT_FALSE(ParseFaults("alloc_fail= 0.5", &f, &error));
  ASSERT_TRUE(ParseFaults("alloc_fail=5e-1", &f, &error)) << error;
  EXPECT_DOUBLE_EQ(f.allocation_failure_probability, 0.5);
  EXPECT_FALSE(ParseFaults("alloc_fail=2", &f, &error));
  EXPECT_NE(error.find("'alloc_fail=2' has a bad value"), std::string::npos) << error;
}

}  // namespace
