// libFuzzer target for conformance expectations files
// (tools/accel-conformance/expectations.h), checked against a fixed list of
// the suite's test ids and two devices with fixed capabilities: any text is
// either rejected with a message naming the file, or accepted with entries
// whose every field is non-empty, whose test pattern names a test of the
// suite, and whose `unsupported` capability is known and absent on both
// devices; what was accepted, written back, reads the same. Nothing throws,
// crashes, leaks or reads out of bounds (ASan and UBSan).
#include <fnmatch.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "expectations.h"
#include "names.h"

namespace {

namespace conformance = accel::conformance;

// Test ids of the suite, of every profile (conformance/suite/*_tests.cc).
const std::vector<std::string> kIds = {
    "abi.entry_point.only_symbol_exported",   "abi.negotiation.current_version",
    "abi.slots.null_is_unimplemented",        "query.keys.every_key_readable",
    "query.topology.links_symmetric",         "memory.copy.all_directions",
    "memory.map.read_write_and_state",        "memory.fill.patterns",
    "memory.interop.host_pointer_import",     "streams.timing.monotonic",
    "streams.events.cross_stream_wait",       "execution.kernels.fill",
    "execution.kernels.atomic_add",           "execution.launch.bad_launches_refused",
    "multi-device.copies.between_every_pair", "multi-device.topology.peer_access_matches_features"};

uint64_t Bits(std::span<const accel::info::FlagName> table, std::initializer_list<const char*> names) {
  uint64_t bits = 0;
  for (const auto& f : table) {
    for (const char* n : names) bits |= std::string(n) == f.name ? f.bit : 0;
  }
  return bits;
}

conformance::Target MakeTarget() {
  conformance::Target target;
  for (uint32_t d = 0; d < 2; ++d) {
    conformance::DeviceUnderTest dut;
    dut.index = d;
    dut.label = "device " + std::to_string(d) + " (fuzz)";
    dut.caps.kernel_formats = Bits(accel::info::KernelFormatNames(), {"native-host"}) |
                              (d == 0 ? Bits(accel::info::KernelFormatNames(), {"spirv-vulkan"}) : 0);
    dut.caps.numeric_formats = Bits(accel::info::NumericFormatNames(), {"fp32", "int8"}) |
                               (d == 1 ? Bits(accel::info::NumericFormatNames(), {"fp64"}) : 0);
    dut.caps.features = Bits(accel::info::DeviceFeatureNames(), {"unified-memory", "event-timing"}) |
                        (d == 0 ? Bits(accel::info::DeviceFeatureNames(), {"peer-access"}) : 0);
    target.all_devices.push_back(dut);
    target.selected.push_back(d);
  }
  return target;
}

bool NamesATest(const std::string& pattern) {
  for (const auto& id : kIds) {
    if (fnmatch(pattern.c_str(), id.c_str(), 0) == 0) return true;
  }
  return false;
}

// Whether `capability` is "<kind>:<name>" of a known name that no device has.
bool AbsentEverywhere(const conformance::Target& target, const std::string& capability) {
  const size_t colon = capability.find(':');
  if (colon == std::string::npos) return false;
  const std::string kind = capability.substr(0, colon);
  const std::string name = capability.substr(colon + 1);
  std::span<const accel::info::FlagName> table = kind == "feature"          ? accel::info::DeviceFeatureNames()
                                                 : kind == "kernel-format"  ? accel::info::KernelFormatNames()
                                                 : kind == "numeric-format" ? accel::info::NumericFormatNames()
                                                                            : std::span<const accel::info::FlagName>();
  for (const auto& f : table) {
    if (name != f.name) continue;
    for (const auto& dut : target.all_devices) {
      const uint64_t bits = kind == "feature"         ? dut.caps.features
                            : kind == "kernel-format" ? dut.caps.kernel_formats
                                                      : dut.caps.numeric_formats;
      if ((bits & f.bit) != 0) return false;
    }
    return true;
  }
  return false;
}

nlohmann::json Write(const conformance::Expectations& e) {
  nlohmann::json doc = {{"unsupported", nlohmann::json::array()}, {"expected-failure", nlohmann::json::array()}};
  for (const auto& u : e.unsupported) {
    doc["unsupported"].push_back({{"test", u.test}, {"capability", u.capability}, {"reason", u.reason}});
  }
  for (const auto& x : e.expected_failures) doc["expected-failure"].push_back({{"test", x.test}, {"reason", x.reason}});
  return doc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const conformance::Target target = MakeTarget();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/fuzz/backends/fuzz/expectations.json";
  conformance::Expectations e;
  if (auto error = conformance::ParseExpectations(text, path, kIds, target, &e)) {
    if (error->rfind(path + ": ", 0) != 0 || error->size() == path.size() + 2) __builtin_trap();  // names the file
    return 0;
  }
  if (e.path != path) __builtin_trap();
  for (const auto& u : e.unsupported) {
    if (u.test.empty() || u.capability.empty() || u.reason.empty()) __builtin_trap();
    if (!NamesATest(u.test) || !AbsentEverywhere(target, u.capability)) __builtin_trap();
  }
  for (const auto& x : e.expected_failures) {
    if (x.test.empty() || x.reason.empty() || !NamesATest(x.test)) __builtin_trap();
  }
  // Each test id is skipped by the first entry that matches it.
  for (const auto& id : kIds) {
    const auto* u = e.FindUnsupported(id);
    if (u != nullptr && fnmatch(u->test.c_str(), id.c_str(), 0) != 0) __builtin_trap();
    const auto* x = e.FindExpectedFailure(id);
    if (x != nullptr && fnmatch(x->test.c_str(), id.c_str(), 0) != 0) __builtin_trap();
  }
  // Written back, it reads the same.
  const nlohmann::json written = Write(e);
  conformance::Expectations again;
  if (conformance::ParseExpectations(written.dump(), "again.json", kIds, target, &again)) __builtin_trap();
  if (Write(again) != written) __builtin_trap();
  return 0;
}
