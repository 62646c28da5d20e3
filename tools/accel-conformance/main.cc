// accel-conformance: runs the conformance suite against one backend and
// writes a summary table, JUnit XML and a JSON certificate
// (docs/conformance.md).
//
//   accel-conformance --backend <manifest or .so> [--device <index|id>]... [--profile <name>]
//                     [--expectations <file>] [--verify-xfails] [--junit <file>] [--json <file>]
//                     [--corpus <dir>] [--filter <gtest filter>] [--list]
//
// Exit codes: 0 every test ran passed (skips only where a capability is
// absent), 1 a test failed, 2 usage error, the backend did not load, or the
// expectations file was rejected.
#include <accel/accel.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "expectations.h"
#include "harness.h"
#include "json_file.h"
#include "names.h"

namespace accel::conformance {
namespace {

constexpr int kExitPass = 0;
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string backend;
  std::vector<std::string> devices;
  std::string profile = "multi-device";
  std::string expectations;
  bool verify_xfails = false;
  std::string junit;
  std::string json;
  std::string corpus;
  std::string filter;
  bool list = false;
};

Expectations g_expectations;
bool g_verify_xfails = false;
std::string g_filter;  // --filter: a partial run certifies nothing

// What happened to one registered test, for the summary and the certificate.
enum class Outcome { kPassed, kFailed, kSkippedAbsent, kUnsupported, kExpectedFailure, kIllegalSkip };
struct Result {
  std::string full_name;  // the stable id and device: "memory.copy.all_directions/dev0"
  std::string id;
  Profile profile;
  Outcome outcome;
  std::string message;
};
std::vector<Result> g_results;

// One registered case on one device (or the backend).
class CaseTest : public testing::Test {
 public:
  CaseTest(const Case* c, int device) : case_(c), device_(device) {}

  void TestBody() override {
    RecordProperty("stable_id", case_->id);
    if (device_ >= 0) RecordProperty("device", TheTarget().all_devices[device_].caps.stable_id);
    if (const auto* u = g_expectations.FindUnsupported(case_->id)) {
      GTEST_SKIP() << "unsupported (" << g_expectations.path << "): " << u->reason << " [capability '" << u->capability
                   << "' absent]";
    }
    const auto* x = g_expectations.FindExpectedFailure(case_->id);
    if (x != nullptr && !g_verify_xfails) {
      GTEST_SKIP() << "expected failure, not run (" << g_expectations.path << "): " << x->reason;
    }
    if (x == nullptr) {
      Run();
      return;
    }
    testing::TestPartResultArray parts;
    {
      testing::ScopedFakeTestPartResultReporter reporter(
          testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, &parts);
      Run();
    }
    bool failed = false;
    for (int i = 0; i < parts.size(); ++i) failed = failed || parts.GetTestPartResult(i).failed();
    if (failed) {
      RecordProperty("expected_failure", "confirmed");
    } else {
      ADD_FAILURE() << "unexpected pass: " << case_->id << " is listed in " << g_expectations.path
                    << " as an expected failure (" << x->reason << ") but passed; remove the entry";
    }
  }

 private:
  void Run() {
    if (case_->per_device != nullptr) {
      case_->per_device(TheTarget().all_devices[device_]);
    } else {
      case_->per_backend();
    }
  }
  const Case* case_;
  int device_;
};

// Classifies each finished test.
class Collector : public testing::EmptyTestEventListener {
 public:
  explicit Collector(std::map<std::string, std::pair<const Case*, int>> index) : index_(std::move(index)) {}
  void OnTestEnd(const testing::TestInfo& info) override {
    const std::string full = std::string(info.test_suite_name()) + "." + info.name();
    const auto it = index_.find(full);
    if (it == index_.end()) return;
    const testing::TestResult* r = info.result();
    const int device = it->second.second;
    const std::string shown = it->second.first->id + (device >= 0 ? "/dev" + std::to_string(device) : "");
    Result out{shown, it->second.first->id, it->second.first->profile, Outcome::kPassed, ""};
    std::string message;
    for (int i = 0; i < r->total_part_count(); ++i) {
      if (!message.empty()) message += "\n";
      message += r->GetTestPartResult(i).message();
    }
    bool confirmed_xfail = false;
    for (int i = 0; i < r->test_property_count(); ++i) {
      if (std::string(r->GetTestProperty(i).key()) == "expected_failure") confirmed_xfail = true;
    }
    if (r->Failed()) {
      out.outcome = Outcome::kFailed;
    } else if (r->Skipped()) {
      if (message.find(kAbsentPrefix) != std::string::npos) {
        out.outcome = Outcome::kSkippedAbsent;
      } else if (message.rfind("unsupported (", 0) == 0) {
        out.outcome = Outcome::kUnsupported;
      } else if (message.rfind("expected failure", 0) == 0) {
        out.outcome = Outcome::kExpectedFailure;
      } else {
        out.outcome = Outcome::kIllegalSkip;
      }
    } else if (confirmed_xfail) {
      out.outcome = Outcome::kExpectedFailure;
    }
    out.message = message;
    g_results.push_back(std::move(out));
  }

 private:
  std::map<std::string, std::pair<const Case*, int>> index_;
};

bool IsFailure(Outcome o) { return o == Outcome::kFailed || o == Outcome::kIllegalSkip; }

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string DefaultCorpusDir(const char* argv0) {
  // Installed and in the build tree: <prefix>/bin/accel-conformance and
  // <prefix>/share/accel/conformance/corpus.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = argv0;
  return (exe.parent_path().parent_path() / "share/accel/conformance/corpus").string();
}

// Opens the backend through libaccel; returns an error message on failure.
std::optional<std::string> OpenTarget(const Options& options, Target* target) {
  target->backend_arg = options.backend;
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.backend_files = options.backend.c_str();
  desc.add_backend_files = "";
  desc.backends = "";
  const accel_status_t s = accel_instance_create(&desc, &target->instance);
  if (s != ACCEL_SUCCESS) return std::string("accel_instance_create: ") + Why(s);
  uint32_t entries = 0;
  accel_instance_get_loader_entry_count(target->instance, &entries);
  std::string reasons;
  for (uint32_t i = 0; i < entries; ++i) {
    accel_loader_entry_t e{};
    e.stype = ACCEL_STRUCTURE_TYPE_LOADER_ENTRY;
    e.struct_size = sizeof(e);
    if (accel_instance_get_loader_entry(target->instance, i, &e) != ACCEL_SUCCESS) continue;
    if (e.state == ACCEL_LOADER_STATE_LOADED) {
      target->library_path = e.library_path;
      target->manifest_path = e.manifest_path;
    } else {
      reasons +=
          std::string("\n  ") + (e.manifest_path[0] != '\0' ? e.manifest_path : e.library_path) + ": " + e.reason;
    }
  }
  uint32_t count = 0;
  accel_instance_enumerate_backends(target->instance, &count, nullptr);
  if (count != 1) {
    return "the backend named by --backend '" + options.backend + "' did not load" +
           (reasons.empty() ? std::string(" (no loader entry)") : reasons);
  }
  accel_instance_enumerate_backends(target->instance, &count, &target->backend);
  accel_backend_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES;
  props.struct_size = sizeof(props);
  if (accel_backend_get_properties(target->backend, &props) != ACCEL_SUCCESS)
    return "accel_backend_get_properties failed";
  target->name = props.name;
  target->version = props.version;
  target->abi_version = props.abi_version;
  if (target->library_path.empty()) target->library_path = props.library_path;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(target->library_path, ec);
  if (!ec) target->library_path = absolute.lexically_normal().string();
  uint32_t device_count = 0;
  accel_backend_enumerate_devices(target->backend, &device_count, nullptr);
  std::vector<accel_device_t> devices(device_count);
  if (device_count > 0) accel_backend_enumerate_devices(target->backend, &device_count, devices.data());
  for (uint32_t i = 0; i < device_count; ++i) {
    DeviceUnderTest dut;
    dut.index = i;
    dut.device = devices[i];
    dut.caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    dut.caps.struct_size = sizeof(dut.caps);
    if (accel_device_get_capabilities(devices[i], &dut.caps) != ACCEL_SUCCESS) {
      return "accel_device_get_capabilities(device " + std::to_string(i) + "): " + accel_last_error();
    }
    dut.label = "device " + std::to_string(i) + " (" + target->name + ": " + dut.caps.name + ")";
    target->all_devices.push_back(dut);
  }
  if (options.devices.empty()) {
    for (uint32_t i = 0; i < device_count; ++i) target->selected.push_back(i);
  }
  for (const std::string& want : options.devices) {
    bool found = false;
    for (const auto& dut : target->all_devices) {
      if (want == std::to_string(dut.index) || want == dut.caps.stable_id) {
        // Named twice (by index and by id, or the same twice) is one device under test, tested once.
        if (std::find(target->selected.begin(), target->selected.end(), dut.index) == target->selected.end()) {
          target->selected.push_back(dut.index);
        }
        found = true;
      }
    }
    if (!found)
      return "--device '" + want + "' names no device of the backend (it has " + std::to_string(device_count) + ")";
  }
  return std::nullopt;
}

// One profile's results by outcome; a skip that names no absent capability counts as failed.
struct Counts {
  int passed = 0, failed = 0, skipped = 0, unsupported = 0, expected_failure = 0;
  Counts& operator+=(const Counts& o) {
    passed += o.passed;
    failed += o.failed;
    skipped += o.skipped;
    unsupported += o.unsupported;
    expected_failure += o.expected_failure;
    return *this;
  }
};

Counts CountsOf(Profile profile) {
  Counts c;
  for (const auto& r : g_results) {
    if (r.profile != profile) continue;
    switch (r.outcome) {
      case Outcome::kPassed: ++c.passed; break;
      case Outcome::kFailed:
      case Outcome::kIllegalSkip: ++c.failed; break;
      case Outcome::kSkippedAbsent: ++c.skipped; break;
      case Outcome::kUnsupported: ++c.unsupported; break;
      case Outcome::kExpectedFailure: ++c.expected_failure; break;
    }
  }
  return c;
}

void PrintSummary(const Target& target, Profile requested) {
  std::printf("\naccel-conformance: backend %s %s (%s), %zu of %zu devices, profile %s\n", target.name.c_str(),
              target.version.c_str(), target.library_path.c_str(), target.selected.size(), target.all_devices.size(),
              ProfileName(requested));
  std::printf("%-14s %7s %7s %8s %12s %6s\n", "profile", "passed", "failed", "skipped", "unsupported", "xfail");
  Counts totals;
  auto row = [](const char* name, const Counts& c) {
    std::printf("%-14s %7d %7d %8d %12d %6d\n", name, c.passed, c.failed, c.skipped, c.unsupported, c.expected_failure);
  };
  for (Profile p : kAllProfiles) {
    if (p > requested) break;
    const Counts c = CountsOf(p);
    totals += c;
    row(ProfileName(p), c);
  }
  row("total", totals);
  for (const auto& r : g_results) {
    if (r.outcome == Outcome::kSkippedAbsent || r.outcome == Outcome::kUnsupported) {
      std::printf("  skipped  %s: %s\n", r.full_name.c_str(), r.message.c_str());
    } else if (r.outcome == Outcome::kExpectedFailure) {
      std::printf("  xfail    %s\n", r.full_name.c_str());
    } else if (r.outcome == Outcome::kIllegalSkip) {
      std::printf("  FAILED   %s: skipped without naming an absent capability: %s\n", r.full_name.c_str(),
                  r.message.c_str());
    }
  }
  for (const auto& r : g_results) {
    if (r.outcome == Outcome::kFailed) std::printf("  FAILED   %s\n", r.full_name.c_str());
  }
}

nlohmann::json Certificate(const Target& target, Profile requested) {
  nlohmann::json cert;
  cert["format"] = "accel-conformance-certificate";
  cert["format_version"] = 1;
  cert["suite_version"] = ACCEL_CONFORMANCE_VERSION;
  accel_version_info_t v{};
  v.stype = ACCEL_STRUCTURE_TYPE_VERSION_INFO;
  v.struct_size = sizeof(v);
  accel_version_get(&v);
  cert["libaccel_version"] = accel::info::VersionString(v.library_version);
  cert["abi_version"] = accel::info::AbiString(target.abi_version);
  cert["backend"] = {{"name", target.name},
                     {"version", target.version},
                     {"library", target.library_path},
                     {"manifest", target.manifest_path},
                     {"sha256", Sha256File(target.library_path)}};
  cert["expectations"] = g_expectations.path.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json{{"path", g_expectations.path}, {"sha256", g_expectations.sha256}};
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json runtimes = nlohmann::json::array();
  for (uint32_t d : target.selected) {
    const auto& dut = target.all_devices[d];
    devices.push_back({{"index", dut.index},
                       {"stable_id", dut.caps.stable_id},
                       {"name", dut.caps.name},
                       {"sku", dut.caps.sku},
                       {"driver_version", dut.caps.driver_version}});
    const std::string rt = dut.caps.driver_version;
    if (std::find(runtimes.begin(), runtimes.end(), rt) == runtimes.end()) runtimes.push_back(rt);
  }
  cert["devices"] = devices;
  cert["runtime_versions"] = runtimes;
  cert["profile_requested"] = ProfileName(requested);
  // The highest profile whose tests, and every earlier profile's, all passed.
  std::string passed = "none";
  nlohmann::json per_profile = nlohmann::json::object();
  bool clean = true;
  for (Profile p : kAllProfiles) {
    if (p > requested) break;
    const Counts c = CountsOf(p);
    per_profile[ProfileName(p)] = {{"passed", c.passed},
                                   {"failed", c.failed},
                                   {"skipped", c.skipped},
                                   {"unsupported", c.unsupported},
                                   {"expected_failure", c.expected_failure}};
    clean = clean && c.failed == 0;
    if (clean && (p == Profile::kAbi || !target.selected.empty())) passed = ProfileName(p);
  }
  cert["profile_passed"] = passed;
  cert["counts"] = per_profile;
  int failed = 0;
  nlohmann::json failures = nlohmann::json::array();
  nlohmann::json skips = nlohmann::json::array();
  for (const auto& r : g_results) {
    if (IsFailure(r.outcome)) {
      failed++;
      failures.push_back(r.full_name);
    }
    if (r.outcome == Outcome::kSkippedAbsent || r.outcome == Outcome::kUnsupported) {
      skips.push_back({{"test", r.full_name}, {"reason", r.message}});
    }
  }
  cert["failed_tests"] = failures;
  cert["skipped_tests"] = skips;
  cert["result"] = failed != 0                        ? "fail"
                   : !g_filter.empty()                ? "partial"
                   : passed == ProfileName(requested) ? "pass"
                                                      : "fail";
  cert["filter"] = g_filter;
  cert["date"] = UtcNow();
  return cert;
}

int Main(int argc, char** argv) {
  Options options;
  CLI::App app{"Runs the Accel conformance suite against one backend (docs/conformance.md)", "accel-conformance"};
  app.add_option("--backend", options.backend,
                 "The backend: a manifest (.json) or a library (.so); required but with --list");
  app.add_option("--device", options.devices,
                 "Test only this device: an index among the backend's devices or a stable id (repeatable)");
  app.add_option("--profile", options.profile,
                 "The highest profile to run: abi, query, memory, streams, execution, multi-device (each includes the "
                 "earlier ones)")
      ->capture_default_str();
  app.add_option("--expectations", options.expectations, "The backend's expectations file (JSON)");
  app.add_flag("--verify-xfails", options.verify_xfails, "Run expected failures too; an unexpected pass fails");
  app.add_option("--junit", options.junit, "Write JUnit XML results here");
  app.add_option("--json", options.json, "Write the JSON certificate here");
  app.add_option("--corpus", options.corpus, "The kernel corpus folder (holding corpus.json)");
  app.add_option("--filter", options.filter,
                 "Run only tests matching this GoogleTest filter ('memory.*:multi_device.*'); the certificate then "
                 "says 'partial'");
  app.add_flag("--list", options.list, "List the stable test ids and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitPass : kExitUsage;
  }
  const auto requested = ParseProfile(options.profile);
  if (!requested) {
    std::fprintf(
        stderr,
        "accel-conformance: --profile '%s' is not one of abi, query, memory, streams, execution, multi-device\n",
        options.profile.c_str());
    return kExitUsage;
  }
  std::vector<std::string> ids;
  for (const auto& c : Registry()) {
    if (c.profile <= *requested) ids.push_back(c.id);
  }
  if (options.list) {
    for (const auto& id : ids) std::printf("%s\n", id.c_str());
    return kExitPass;
  }
  if (options.backend.empty()) {
    std::fprintf(stderr, "accel-conformance: --backend is required (a manifest or a library; see --help)\n");
    return kExitUsage;
  }
  Target& target = TheTarget();
  target.corpus_dir = options.corpus.empty() ? DefaultCorpusDir(argv[0]) : options.corpus;
  if (auto error = OpenTarget(options, &target)) {
    std::fprintf(stderr, "accel-conformance: %s\n", error->c_str());
    return kExitUsage;
  }
  if (!options.expectations.empty()) {
    std::vector<std::string> all_ids;
    for (const auto& c : Registry()) all_ids.push_back(c.id);
    if (auto error = LoadExpectations(options.expectations, all_ids, target, &g_expectations)) {
      std::fprintf(stderr, "accel-conformance: expectations rejected: %s\n", error->c_str());
      return kExitUsage;
    }
  }
  g_verify_xfails = options.verify_xfails;
  g_filter = options.filter;

  // GoogleTest underneath: its own flags are not exposed, apart from these.
  std::vector<std::string> gtest_args = {argv[0]};
  if (!options.junit.empty()) gtest_args.push_back("--gtest_output=xml:" + options.junit);
  if (!options.filter.empty()) gtest_args.push_back("--gtest_filter=" + options.filter);
  std::vector<char*> gtest_argv;
  for (auto& a : gtest_args) gtest_argv.push_back(a.data());
  int gtest_argc = static_cast<int>(gtest_argv.size());
  gtest_argv.push_back(nullptr);  // argv[argc] is NULL
  testing::InitGoogleTest(&gtest_argc, gtest_argv.data());

  std::map<std::string, std::pair<const Case*, int>> index;
  for (const auto& c : Registry()) {
    if (c.profile > *requested) continue;
    // GoogleTest reads '-' in a filter as the start of the negative patterns,
    // so the suite of multi-device is multi_device; stable ids keep the '-'.
    std::string suite = ProfileName(c.profile);
    const std::string rest = c.id.substr(suite.size() + 1);
    std::replace(suite.begin(), suite.end(), '-', '_');
    auto add = [&](const std::string& name, int device) {
      const Case* cp = &c;
      testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, c.file, c.line,
                            [cp, device]() -> testing::Test* { return new CaseTest(cp, device); });
      index[suite + "." + name] = {cp, device};
    };
    if (c.per_device != nullptr) {
      for (uint32_t d : target.selected) add(rest + "/dev" + std::to_string(d), static_cast<int>(d));
    } else {
      add(rest, -1);
    }
  }
  testing::UnitTest::GetInstance()->listeners().Append(new Collector(index));
  const int gtest_rc = RUN_ALL_TESTS();

  PrintSummary(target, *requested);
  const nlohmann::json cert = Certificate(target, *requested);
  bool written = true;
  if (!options.json.empty()) {
    std::string why;
    written = accel::tools::WriteJsonFile(options.json, cert, &why);
    if (!written) std::fprintf(stderr, "accel-conformance: %s\n", why.c_str());
  }
  std::printf("result: %s (profile passed: %s)\n", cert["result"].get<std::string>().c_str(),
              cert["profile_passed"].get<std::string>().c_str());
  accel_instance_destroy(target.instance);
  target.instance = nullptr;
  // A certificate asked for and not written is no pass: whoever admits the backend reads that file.
  if (!written) return kExitUsage;
  const bool failed = gtest_rc != 0 || cert["result"] == "fail";
  return failed ? kExitFail : kExitPass;
}

}  // namespace
}  // namespace accel::conformance

int main(int argc, char** argv) { return accel::conformance::Main(argc, argv); }
