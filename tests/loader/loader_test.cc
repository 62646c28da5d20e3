// The loader: discovery, negotiation, and one specific reason per broken
// backend, with the host backend working in the same process.
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "test_util.h"

namespace {

using accel_test::ManifestJson;
using accel_test::ScopedInstance;
using accel_test::TempDir;
using accel_test::TestBackend;
namespace fs = std::filesystem;

// The entry for `path` (a copy: its strings live as long as the instance).
std::optional<accel_loader_entry_t> Find(const std::vector<accel_loader_entry_t>& report, const std::string& path) {
  for (const auto& e : report) {
    if (path == e.manifest_path || path == e.library_path) return e;
  }
  return std::nullopt;
}

// The host backend still works: a buffer round trip on its device.
void ExpectHostWorks(const ScopedInstance& instance) {
  accel_device_t host = instance.DeviceOf("host");
  ASSERT_NE(host, nullptr) << "host backend missing";
  accel_buffer_desc_t desc = accel_test::BufferDesc(64);
  accel_buffer_t buffer = nullptr;
  ASSERT_EQ(accel_buffer_create(host, &desc, &buffer), ACCEL_SUCCESS) << accel_last_error();
  accel_stream_t stream = nullptr;
  ASSERT_EQ(accel_stream_create(host, nullptr, &stream), ACCEL_SUCCESS) << accel_last_error();
  char in[64] = "round trip", out[64] = {};
  EXPECT_EQ(accel_stream_copy_host_to_buffer(stream, in, buffer, 0, sizeof(in)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_copy_buffer_to_host(stream, buffer, 0, out, sizeof(out)), ACCEL_SUCCESS);
  EXPECT_EQ(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_STREQ(out, "round trip");
  EXPECT_EQ(accel_stream_destroy(stream), ACCEL_SUCCESS);
  EXPECT_EQ(accel_buffer_destroy(buffer), ACCEL_SUCCESS);
}

struct BrokenCase {
  const char* name;
  accel_status_t status;
  const char* reason;  // must appear in the report's reason
};

class LoaderTest : public ::testing::Test {
 protected:
  // Loads the host manifest plus `manifest`; checks `manifest`'s entry.
  void ExpectRefused(const std::string& manifest, accel_status_t status, const std::string& reason) {
    std::string files = std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + manifest;
    accel_instance_desc_t desc = ScopedInstance::Files(files);
    ScopedInstance instance(&desc);
    auto report = instance.Report();
    std::optional<accel_loader_entry_t> e = Find(report, manifest);
    ASSERT_TRUE(e.has_value()) << "no loader entry for " << manifest;
    EXPECT_EQ(e->state, ACCEL_LOADER_STATE_FAILED);
    EXPECT_EQ(e->status, status) << accel_status_name(e->status) << ": " << e->reason;
    EXPECT_NE(std::string(e->reason).find(reason), std::string::npos) << "reason was: " << e->reason;
    EXPECT_EQ(e->device_count, 0u);
    ExpectHostWorks(instance);
  }
  TempDir dir_;
};

TEST_F(LoaderTest, FindsHostRelativeToLibaccel) {
  // ctest sets ACCEL_BACKENDS=host; the default search starts next to libaccel.
  ScopedInstance instance(nullptr);
  auto report = instance.Report();
  const accel_loader_entry_t* host = nullptr;
  for (const auto& e : report) {
    if (std::string(e.backend_name) == "host" && e.state == ACCEL_LOADER_STATE_LOADED) host = &e;
  }
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(fs::weakly_canonical(host->manifest_path), fs::weakly_canonical(ACCEL_TEST_HOST_MANIFEST));
  EXPECT_EQ(host->negotiated_abi_version, ACCEL_MAKE_VERSION(1, 1, 0));
  EXPECT_GE(host->device_count, 1u);
  ExpectHostWorks(instance);
}

TEST_F(LoaderTest, RejectsLibraryWithoutEntryPoint) {
  ExpectRefused(dir_.Write("no_entry.json", ManifestJson("no_entry", TestBackend("no_entry"))), ACCEL_ERROR_NOT_FOUND,
                "does not export accel_backend_get_api");
}

TEST_F(LoaderTest, RejectsNewerMajorWithClearMessage) {
  ExpectRefused(dir_.Write("major2.json", ManifestJson("fake_major2", TestBackend("fake_major2"))),
                ACCEL_ERROR_INCOMPATIBLE_VERSION, "backend implements ABI 2.0 and answered 2.0; this core speaks 1.0");
}

TEST_F(LoaderTest, RejectsNullRequiredSlot) {
  ExpectRefused(dir_.Write("null.json", ManifestJson("fake_null_required", TestBackend("fake_null_required"))),
                ACCEL_ERROR_UNIMPLEMENTED, "required slot 'device_get_capabilities' is NULL");
}

TEST_F(LoaderTest, ReportsInitFailureWithBackendMessage) {
  ExpectRefused(dir_.Write("init.json", ManifestJson("fake_init_fail", TestBackend("fake_init_fail"))),
                ACCEL_ERROR_BACKEND_UNAVAILABLE, "initialisation failed: fake driver: /dev/fake0 is missing");
}

TEST_F(LoaderTest, RejectsMalformedManifest) {
  ExpectRefused(dir_.Write("bad.json", "{ \"file_format_version\": \"1.0.0\", "), ACCEL_ERROR_INVALID_ARGUMENT,
                "malformed JSON at byte");
}

TEST_F(LoaderTest, RejectsManifestWithoutLibraryPath) {
  ExpectRefused(
      dir_.Write("nolib.json", R"({"file_format_version": "1.0.0", "backend": {"name": "x", "abi_major": 1}})"),
      ACCEL_ERROR_INVALID_ARGUMENT, "'backend.library_path' is missing");
}

TEST_F(LoaderTest, RejectsNewerManifestFormat) {
  ExpectRefused(dir_.Write("v2.json", ManifestJson("host2", ACCEL_TEST_HOST_LIBRARY, 1, "2.0.0")),
                ACCEL_ERROR_INCOMPATIBLE_VERSION, "file format 2.0.0 is not readable by this core");
}

TEST_F(LoaderTest, RejectsManifestDeclaringOtherAbiMajor) {
  ExpectRefused(dir_.Write("abi2.json", ManifestJson("host2", ACCEL_TEST_HOST_LIBRARY, 2)),
                ACCEL_ERROR_INCOMPATIBLE_VERSION, "backend ABI major 2 is not this core's (1)");
}

// Found by the manifest fuzzer (tests/fuzz/corpus/manifest/regression_*): a format major past int made the
// loader throw out of accel_instance_create, and an ABI major past int wrapped into 1.
TEST_F(LoaderTest, RejectsManifestFormatMajorPastAnyInteger) {
  ExpectRefused(dir_.Write("huge.json", ManifestJson("host2", ACCEL_TEST_HOST_LIBRARY, 1, "99999999999.0.0")),
                ACCEL_ERROR_INCOMPATIBLE_VERSION, "file format 99999999999.0.0 is not readable by this core");
}

TEST_F(LoaderTest, RejectsManifestAbiMajorThatWouldWrapToOne) {
  ExpectRefused(
      dir_.Write("wrap.json", std::string(R"({"file_format_version": "1.0.0", "backend": {"name": "host2", )") +
                                  R"("library_path": ")" + ACCEL_TEST_HOST_LIBRARY + R"(", "abi_major": 4294967297}})"),
      ACCEL_ERROR_INCOMPATIBLE_VERSION, "backend ABI major 4294967297 is not this core's (1)");
}

TEST_F(LoaderTest, RejectsManifestPointingAtMissingLibrary) {
  ExpectRefused(dir_.Write("missing.json", ManifestJson("gone", "./libaccel_backend_gone.so")), ACCEL_ERROR_NOT_FOUND,
                (dir_.path() / "libaccel_backend_gone.so").string() + " does not exist");
}

// A bare file name: next to the manifest, else the system library search;
// the reason names both places.
TEST_F(LoaderTest, BareLibraryNameMissingEverywhereSaysWhereItLooked) {
  ExpectRefused(dir_.Write("missing.json", ManifestJson("gone", "libaccel_backend_gone.so")), ACCEL_ERROR_NOT_FOUND,
                "library 'libaccel_backend_gone.so' is not next to the manifest (" +
                    (dir_.path() / "libaccel_backend_gone.so").string() +
                    ") and the system library search found none: libaccel_backend_gone.so: cannot open shared object "
                    "file");
}

// A bare name found only by the system search (libm is on every machine):
// the report names the file that was loaded, which then fails as any library
// without the entry point does.
TEST_F(LoaderTest, BareLibraryNameFallsBackToTheSystemSearch) {
  const std::string manifest = dir_.Write("libm.json", ManifestJson("libm", "libm.so.6"));
  ExpectRefused(manifest, ACCEL_ERROR_NOT_FOUND, "does not export accel_backend_get_api");
  accel_instance_desc_t desc = ScopedInstance::Files(manifest);
  ScopedInstance instance(&desc);
  std::optional<accel_loader_entry_t> e = Find(instance.Report(), manifest);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(fs::path(e->library_path).is_absolute()) << e->library_path;
  EXPECT_EQ(fs::path(e->library_path).filename(), "libm.so.6") << e->library_path;
  EXPECT_NE(fs::path(e->library_path).parent_path(), dir_.path()) << e->library_path;
}

// Runs in `dir` and goes back to the folder it started in.
class ScopedCurrentDir {
 public:
  explicit ScopedCurrentDir(const fs::path& dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCurrentDir() { fs::current_path(previous_); }
  ScopedCurrentDir(const ScopedCurrentDir&) = delete;
  ScopedCurrentDir& operator=(const ScopedCurrentDir&) = delete;

 private:
  fs::path previous_;
};

// What an outside vendor does first: manifest and library in the current
// folder, named by relative paths (issue 22). Each relative path resolves
// against its manifest's folder, made absolute first, so the library is
// found whatever the current folder.
TEST_F(LoaderTest, RelativeManifestPathsResolveAgainstTheManifestsFolder) {
  fs::copy_file(ACCEL_TEST_HOST_LIBRARY, dir_.path() / "libaccel_backend_outside.so");
  fs::create_directory(dir_.path() / "sub");
  dir_.Write("outside.json", ManifestJson("host", "libaccel_backend_outside.so"));
  dir_.Write("sub/o2.json", ManifestJson("host", "../libaccel_backend_outside.so"));
  const std::string library = (dir_.path() / "libaccel_backend_outside.so").string();
  ScopedCurrentDir here(dir_.path());
  for (const std::string manifest : {"outside.json", "sub/o2.json", "./sub/../outside.json"}) {
    SCOPED_TRACE(manifest);
    accel_instance_desc_t desc = ScopedInstance::Files(manifest);
    ScopedInstance instance(&desc);
    auto report = instance.Report();
    ASSERT_EQ(report.size(), 1u);
    EXPECT_EQ(report[0].state, ACCEL_LOADER_STATE_LOADED) << report[0].reason;
    EXPECT_EQ(std::string(report[0].manifest_path), (dir_.path() / manifest).lexically_normal().string());
    EXPECT_EQ(std::string(report[0].library_path), library);
    ExpectHostWorks(instance);
  }
  // From another folder, the same manifest by a relative path that goes up.
  ScopedCurrentDir sub(dir_.path() / "sub");
  accel_instance_desc_t desc = ScopedInstance::Files("../outside.json:o2.json");
  ScopedInstance instance(&desc);
  auto report = instance.Report();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0].state, ACCEL_LOADER_STATE_LOADED) << report[0].reason;
  EXPECT_EQ(std::string(report[0].library_path), library);
  EXPECT_EQ(report[1].state, ACCEL_LOADER_STATE_SKIPPED) << "the same backend twice";
}

TEST_F(LoaderTest, RelativeLibraryNamedDirectlyIsRelativeToTheCurrentFolder) {
  fs::copy_file(ACCEL_TEST_HOST_LIBRARY, dir_.path() / "libaccel_backend_outside.so");
  ScopedCurrentDir here(dir_.path());
  accel_instance_desc_t desc = ScopedInstance::Files("libaccel_backend_outside.so");
  ScopedInstance instance(&desc);
  auto report = instance.Report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].state, ACCEL_LOADER_STATE_LOADED) << report[0].reason;
  EXPECT_EQ(std::string(report[0].library_path), (dir_.path() / "libaccel_backend_outside.so").string());
  ExpectHostWorks(instance);
}

TEST_F(LoaderTest, RefusesLibraryWritableByOthers) {
  fs::path copy = dir_.path() / "libaccel_backend_host.so";
  fs::copy_file(ACCEL_TEST_HOST_LIBRARY, copy);
  ASSERT_EQ(chmod(copy.c_str(), 0646), 0);
  ExpectRefused(dir_.Write("writable.json", ManifestJson("host_copy", copy.string())), ACCEL_ERROR_FAILED_PRECONDITION,
                "is writable by others (mode 0646)");
}

TEST_F(LoaderTest, RefusesLibraryInFolderWritableByOthers) {
  fs::path open_dir = dir_.path() / "open";
  fs::create_directory(open_dir);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  fs::path copy = open_dir / "libaccel_backend_host.so";
  fs::copy_file(ACCEL_TEST_HOST_LIBRARY, copy);
  ASSERT_EQ(chmod(copy.c_str(), 0755), 0);
  ExpectRefused(dir_.Write("open.json", ManifestJson("host_copy", copy.string())), ACCEL_ERROR_FAILED_PRECONDITION,
                "a folder writable by others without the sticky bit");
}

TEST_F(LoaderTest, RefusesManifestWritableByOthers) {
  std::string manifest = dir_.Write("open_manifest.json", ManifestJson("host_copy", ACCEL_TEST_HOST_LIBRARY));
  ASSERT_EQ(chmod(manifest.c_str(), 0666), 0);
  ExpectRefused(manifest, ACCEL_ERROR_FAILED_PRECONDITION, "manifest " + manifest + " is writable by others");
}

TEST_F(LoaderTest, NullOptionalSlotsGiveUnimplementedNamingTheSlot) {
  std::string manifest = dir_.Write("good.json", ManifestJson("fake_good", TestBackend("fake_good")));
  accel_instance_desc_t desc = ScopedInstance::Files(manifest);
  ScopedInstance instance(&desc);
  accel_device_t device = instance.DeviceOf("fake_good");
  ASSERT_NE(device, nullptr);
  accel_buffer_desc_t bdesc = accel_test::BufferDesc(16);
  accel_buffer_t buffer = nullptr;
  EXPECT_EQ(accel_buffer_create(device, &bdesc, &buffer), ACCEL_ERROR_UNIMPLEMENTED);
  EXPECT_NE(std::string(accel_last_error())
                .find("accel_buffer_create: device 0 (fake_good: Fake fake_good device): "
                      "backend 'fake_good' does not implement buffer_create"),
            std::string::npos)
      << accel_last_error();
  EXPECT_EQ(buffer, nullptr);
  accel_stream_t stream = nullptr;
  EXPECT_EQ(accel_stream_create(device, nullptr, &stream), ACCEL_ERROR_UNIMPLEMENTED);
  EXPECT_NE(std::string(accel_last_error()).find("stream_create"), std::string::npos);
  uint64_t free_bytes = 0;
  EXPECT_EQ(accel_device_get_memory_info(device, &free_bytes, nullptr), ACCEL_ERROR_UNIMPLEMENTED);
  // The static descriptor still answers.
  uint64_t total = 0;
  EXPECT_EQ(accel_device_get_info(device, ACCEL_DEVICE_INFO_MEMORY_TOTAL, sizeof(total), &total, nullptr),
            ACCEL_SUCCESS);
  EXPECT_EQ(total, uint64_t{1} << 30);
}

TEST_F(LoaderTest, LoadsLibraryNamedDirectly) {
  accel_instance_desc_t desc = ScopedInstance::Files(ACCEL_TEST_HOST_LIBRARY);
  ScopedInstance instance(&desc);
  auto report = instance.Report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].state, ACCEL_LOADER_STATE_LOADED);
  EXPECT_STREQ(report[0].backend_name, "host");
  EXPECT_STREQ(report[0].manifest_path, "");
  ExpectHostWorks(instance);
}

TEST_F(LoaderTest, SelectionDropsBackendsBeforeOpeningThem) {
  std::string good = dir_.Write("good.json", ManifestJson("fake_good", TestBackend("fake_good")));
  std::string files = std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + good;
  for (const char* selection : {"-fake_good", "host"}) {
    accel_instance_desc_t desc = ScopedInstance::Files(files);
    desc.backends = selection;
    ScopedInstance instance(&desc);
    std::optional<accel_loader_entry_t> e = Find(instance.Report(), good);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->state, ACCEL_LOADER_STATE_SKIPPED) << selection;
    EXPECT_NE(std::string(e->reason).find(selection), std::string::npos) << e->reason;
    EXPECT_EQ(instance.DeviceOf("fake_good"), nullptr);
    ExpectHostWorks(instance);
  }
}

TEST_F(LoaderTest, DuplicateBackendNameIsSkipped) {
  std::string again = dir_.Write("again.json", ManifestJson("host", ACCEL_TEST_HOST_LIBRARY));
  accel_instance_desc_t desc = ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + again);
  ScopedInstance instance(&desc);
  std::optional<accel_loader_entry_t> e = Find(instance.Report(), again);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->state, ACCEL_LOADER_STATE_SKIPPED);
  EXPECT_NE(std::string(e->reason).find("a backend named 'host' was found earlier"), std::string::npos) << e->reason;
  EXPECT_EQ(instance.Devices().size(), 1u);
}

TEST_F(LoaderTest, AddBackendFilesAppendToTheSearch) {
  std::string good = dir_.Write("good.json", ManifestJson("fake_good", TestBackend("fake_good")));
  accel_instance_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  desc.struct_size = sizeof(desc);
  desc.flags = ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT;
  desc.add_backend_files = good.c_str();
  desc.backends = "host,fake_good";
  ScopedInstance instance(&desc);
  EXPECT_NE(instance.DeviceOf("fake_good"), nullptr);
  ExpectHostWorks(instance);
}

TEST_F(LoaderTest, EnvironmentOverridesApplyUnlessIgnored) {
  std::string good = dir_.Write("good.json", ManifestJson("fake_good", TestBackend("fake_good")));
  ASSERT_EQ(setenv("ACCEL_BACKEND_FILES", good.c_str(), 1), 0);
  ASSERT_EQ(setenv("ACCEL_BACKENDS", "fake_good", 1), 0);
  {
    ScopedInstance from_env(nullptr);
    EXPECT_NE(from_env.DeviceOf("fake_good"), nullptr);
    EXPECT_EQ(from_env.DeviceOf("host"), nullptr);
  }
  {
    accel_instance_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    desc.struct_size = sizeof(desc);
    desc.flags = ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT;
    ScopedInstance ignoring(&desc);
    EXPECT_EQ(ignoring.DeviceOf("fake_good"), nullptr);
    EXPECT_NE(ignoring.DeviceOf("host"), nullptr);
  }
  unsetenv("ACCEL_BACKEND_FILES");
  setenv("ACCEL_BACKENDS", "host", 1);
}

TEST_F(LoaderTest, FutureMinorBackendLoadsAtTheCoresVersion) {
  std::string manifest = dir_.Write("future.json", ManifestJson("fake_future", TestBackend("fake_future")));
  accel_instance_desc_t desc = ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + manifest);
  ScopedInstance instance(&desc);
  std::optional<accel_loader_entry_t> e = Find(instance.Report(), manifest);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->state, ACCEL_LOADER_STATE_LOADED) << e->reason;
  EXPECT_EQ(e->backend_abi_version, ACCEL_MAKE_VERSION(1, 2, 0));
  EXPECT_EQ(e->negotiated_abi_version, ACCEL_MAKE_VERSION(1, 1, 0));
  accel_device_t device = instance.DeviceOf("fake_future");
  ASSERT_NE(device, nullptr);
  // The 1.2 backend saw the core's smaller (1.1) negotiation struct and did
  // not read the 1.2 field past its end.
  EXPECT_NE(std::string(ScopedInstance::Capabilities(device).name).find("(core features: none)"), std::string::npos);
  accel_backend_t backend = nullptr;
  ASSERT_EQ(accel_device_get_backend(device, &backend), ACCEL_SUCCESS);
  accel_backend_properties_t props{};
  props.stype = ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES;
  props.struct_size = sizeof(props);
  ASSERT_EQ(accel_backend_get_properties(backend, &props), ACCEL_SUCCESS);
  EXPECT_EQ(props.abi_version, ACCEL_MAKE_VERSION(1, 1, 0));
  EXPECT_STREQ(props.name, "fake_future");
  ExpectHostWorks(instance);
}

// A backend that breaks the ABI's contract in what it answers (tests/backends/fake_backend.cc, FAKE_MODE_MISBEHAVE,
// the way ACCEL_TEST_MISBEHAVE names) is refused, or its answer is, with a message naming what was wrong; nothing is
// read past what it gave, nothing is allocated for a garbage count, and the host backend works beside it.
class MisbehavingBackendTest : public LoaderTest {
 protected:
  void SetUp() override {
    manifest_ = dir_.Write("misbehave.json", ManifestJson("misbehave", TestBackend("fake_misbehave")));
  }
  void TearDown() override { unsetenv("ACCEL_TEST_MISBEHAVE"); }
  void Misbehave(const char* how) { setenv("ACCEL_TEST_MISBEHAVE", how, 1); }
  // An instance of the host backend and the misbehaving one, broken as `how` says ("" behaves).
  std::unique_ptr<ScopedInstance> Load(const char* how) {
    Misbehave(how);
    accel_instance_desc_t desc = Desc();
    return std::make_unique<ScopedInstance>(&desc);
  }
  // The index of the NIC named `name` among the instance's, or nullopt.
  static std::optional<uint32_t> NicIndex(accel_instance_t instance, const std::string& name) {
    uint32_t count = 0;
    EXPECT_EQ(accel_instance_get_nic_count(instance, &count), ACCEL_SUCCESS);
    for (uint32_t i = 0; i < count; ++i) {
      accel_nic_properties_t nic{};
      nic.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
      nic.struct_size = sizeof(nic);
      EXPECT_EQ(accel_instance_get_nic(instance, i, &nic), ACCEL_SUCCESS);
      if (name == nic.name) return i;
    }
    return std::nullopt;
  }
  // A module from one SPIR source (the fake backend takes any bytes).
  static accel_status_t CreateModule(accel_device_t device, accel_module_t* out) {
    static const char kBytes[] = "not really SPIR";
    accel_module_source_t source{};
    source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
    source.struct_size = sizeof(source);
    source.format = ACCEL_KERNEL_FORMAT_SPIR;
    source.data = kBytes;
    source.size = sizeof(kBytes);
    accel_module_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_MODULE_DESC;
    desc.struct_size = sizeof(desc);
    desc.sources = &source;
    desc.source_count = 1;
    return accel_module_create(device, &desc, out);
  }
  // An instance of the host backend and the misbehaving one.
  accel_instance_desc_t Desc() const {
    return ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + manifest_);
  }
  std::string manifest_;
};

TEST_F(MisbehavingBackendTest, BehavingItLoadsWithEverythingItLists) {
  // The control for the cases below: the same library without a fault loads, and its NIC, domain and kernel show.
  auto loaded = Load("");
  ScopedInstance& instance = *loaded;
  accel_device_t device = instance.DeviceOf("misbehave");
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(NicIndex(instance.get(), "fake0").has_value()) << "the backend's NIC fake0 is not listed";
  accel_device_topology_t topology{};
  topology.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  topology.struct_size = sizeof(topology);
  ASSERT_EQ(accel_device_get_topology(device, &topology), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_GE(topology.domain_count, 2u);  // the backend's rack and the node
  accel_module_t module = nullptr;
  ASSERT_EQ(CreateModule(device, &module), ACCEL_SUCCESS) << accel_last_error();
  EXPECT_EQ(accel_module_destroy(module), ACCEL_SUCCESS);
  ExpectHostWorks(instance);
}

TEST_F(MisbehavingBackendTest, TableSmallerThanItsHeaderIsRefusedUnread) {
  Misbehave("tiny_table");
  ExpectRefused(manifest_, ACCEL_ERROR_INCOMPATIBLE_VERSION,
                "function table is 8 bytes, smaller than its 20-byte header");
}

TEST_F(MisbehavingBackendTest, LibraryNamedDirectlyMustReportAValidName) {
  // Through a manifest, the manifest's (valid) name wins; named directly, the table's name is the backend's.
  EXPECT_NE(Load("bad_name")->DeviceOf("misbehave"), nullptr);
  ExpectRefused(TestBackend("fake_misbehave"), ACCEL_ERROR_INVALID_ARGUMENT,
                "function table names the backend \"Not A Name!\", which is not 1-31 lowercase letters, digits or '_'");
}

TEST_F(MisbehavingBackendTest, GarbageDeviceCountIsRefusedBeforeAllocating) {
  Misbehave("devices_huge");
  ExpectRefused(manifest_, ACCEL_ERROR_INTERNAL,
                "device enumeration failed: backend 'misbehave' context_get_devices reported 4294967295 entries; the "
                "core accepts at most 4096");
}

TEST_F(MisbehavingBackendTest, MoreDevicesThanTheRoomIsRefused) {
  Misbehave("devices_grow");
  ExpectRefused(manifest_, ACCEL_ERROR_INTERNAL,
                "device enumeration failed: backend 'misbehave' context_get_devices reported 3 entries in room for 1");
}

TEST_F(MisbehavingBackendTest, NullDeviceIsRefused) {
  Misbehave("devices_null");
  ExpectRefused(manifest_, ACCEL_ERROR_INTERNAL,
                "device enumeration failed: backend 'misbehave' context_get_devices listed device 0 as NULL");
}

TEST_F(MisbehavingBackendTest, CapabilityStringsEndInsideTheirFields) {
  auto loaded = Load("strings");
  ScopedInstance& instance = *loaded;
  accel_device_t device = instance.DeviceOf("misbehave");
  ASSERT_NE(device, nullptr);
  accel_device_capabilities_t caps = ScopedInstance::Capabilities(device);
  EXPECT_EQ(strnlen(caps.name, sizeof(caps.name)), sizeof(caps.name) - 1);
  EXPECT_EQ(strnlen(caps.vendor, sizeof(caps.vendor)), sizeof(caps.vendor) - 1);
  EXPECT_EQ(strnlen(caps.architecture, sizeof(caps.architecture)), sizeof(caps.architecture) - 1);
  EXPECT_EQ(strnlen(caps.sku, sizeof(caps.sku)), sizeof(caps.sku) - 1);
  EXPECT_EQ(strnlen(caps.driver_version, sizeof(caps.driver_version)), sizeof(caps.driver_version) - 1);
  EXPECT_EQ(strnlen(caps.pci_bus_id, sizeof(caps.pci_bus_id)), sizeof(caps.pci_bus_id) - 1);
  ExpectHostWorks(instance);
}

TEST_F(MisbehavingBackendTest, GarbageOrGrowingNicCountDropsOnlyThatBackendsNics) {
  for (const char* how : {"nics_huge", "nics_grow"}) {
    SCOPED_TRACE(how);
    auto loaded = Load(how);
    ScopedInstance& instance = *loaded;
    ASSERT_NE(instance.DeviceOf("misbehave"), nullptr);
    EXPECT_FALSE(NicIndex(instance.get(), "fake0").has_value());
    ExpectHostWorks(instance);
  }
}

TEST_F(MisbehavingBackendTest, ALinkClassNoVersionNamesIsNoClass) {
  // A link class the ABI does not name reached the caller (accel-info's JSON took the NULL name and threw); the
  // core treats it as UNKNOWN and derives the class as for UNKNOWN. The control: the backend's PIX stands.
  for (const char* how : {"", "bad_link_class"}) {
    SCOPED_TRACE(how);
    auto loaded = Load(how);
    ScopedInstance& instance = *loaded;
    accel_device_t device = instance.DeviceOf("misbehave");
    ASSERT_NE(device, nullptr);
    const std::optional<uint32_t> nic = NicIndex(instance.get(), "fake0");
    ASSERT_TRUE(nic.has_value());
    accel_device_link_t link{};
    link.stype = ACCEL_STRUCTURE_TYPE_DEVICE_LINK;
    link.struct_size = sizeof(link);
    ASSERT_EQ(accel_device_get_nic_link(device, *nic, &link), ACCEL_SUCCESS) << accel_last_error();
    EXPECT_NE(accel_link_class_name(link.link_class), nullptr) << "class " << link.link_class;
    if (*how == '\0') {
      EXPECT_EQ(link.link_class, ACCEL_LINK_CLASS_PIX);
    }
  }
}

TEST_F(MisbehavingBackendTest, GarbageDomainCountFailsTheTopologyQueryWithAReason) {
  auto loaded = Load("domains_huge");
  ScopedInstance& instance = *loaded;
  accel_device_t device = instance.DeviceOf("misbehave");
  ASSERT_NE(device, nullptr);
  accel_device_topology_t topology{};
  topology.stype = ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY;
  topology.struct_size = sizeof(topology);
  EXPECT_EQ(accel_device_get_topology(device, &topology), ACCEL_ERROR_INTERNAL);
  EXPECT_NE(
      std::string(accel_last_error())
          .find("backend 'misbehave' device_get_domains reported 4294967295 entries; the core accepts at most 64"),
      std::string::npos)
      << accel_last_error();
  ExpectHostWorks(instance);
}

TEST_F(MisbehavingBackendTest, GarbageKernelCountFailsTheModuleWithAReason) {
  auto loaded = Load("kernels_huge");
  ScopedInstance& instance = *loaded;
  accel_device_t device = instance.DeviceOf("misbehave");
  ASSERT_NE(device, nullptr);
  accel_module_t module = nullptr;
  EXPECT_EQ(CreateModule(device, &module), ACCEL_ERROR_INTERNAL);
  EXPECT_EQ(module, nullptr);
  EXPECT_NE(std::string(accel_last_error())
                .find("backend 'misbehave' module_enumerate_kernels reported 4294967295 entries; the core accepts at "
                      "most 65536"),
            std::string::npos)
      << accel_last_error();
  ExpectHostWorks(instance);
}

// Setting warnings (issue 22, item 9): overrides that name nothing are kept
// in the loader report, with the setting, the wrong part and the reason;
// the instance is created all the same.
std::string Describe(const std::vector<accel_loader_warning_t>& warnings) {
  std::string text;
  for (const auto& w : warnings)
    text += std::string(w.setting) + "=" + w.value + " [" + w.item + "]: " + w.message + "\n";
  return text;
}

TEST_F(LoaderTest, JunkOverridesBecomeSettingWarningsAndTheInstanceWorks) {
  const std::string missing = (dir_.path() / "nope.json").string();
  accel_instance_desc_t desc = ScopedInstance::Files(std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + missing);
  desc.backends = "host,h0st,-Bad!";
  desc.visible_devices = "0,7,no-such-id,99999999999999999999999";
  ScopedInstance instance(&desc);
  ASSERT_EQ(instance.status(), ACCEL_SUCCESS);
  ExpectHostWorks(instance);
  const auto warnings = instance.Warnings();
  ASSERT_EQ(warnings.size(), 6u) << Describe(warnings);
  auto expect = [&](size_t i, const char* setting, const char* value, const char* item, const std::string& message) {
    SCOPED_TRACE(i);
    EXPECT_STREQ(warnings[i].setting, setting);
    EXPECT_STREQ(warnings[i].value, value);
    EXPECT_STREQ(warnings[i].item, item);
    EXPECT_EQ(std::string(warnings[i].message), message);
  };
  const std::string files = std::string(ACCEL_TEST_HOST_MANIFEST) + ":" + missing;
  expect(0, "desc->backend_files", files.c_str(), missing.c_str(),
         "'" + missing + "' does not exist (" + missing + ")");
  expect(1, "desc->backends", "host,h0st,-Bad!", "h0st", "'h0st' names no backend that was found (found: host)");
  expect(2, "desc->backends", "host,h0st,-Bad!", "-Bad!",
         "'Bad!' is not a backend name (1-31 lowercase letters, digits or '_', starting with a letter)");
  const std::string devices = "0,7,no-such-id,99999999999999999999999";
  const std::string tail =
      " matches no device: there is 1 physical device, index 0 (or a physical or access-path stable id, as "
      "accel-info lists them)";
  expect(3, "desc->visible_devices", devices.c_str(), "7", "'7'" + tail);
  expect(4, "desc->visible_devices", devices.c_str(), "no-such-id", "'no-such-id'" + tail);
  expect(5, "desc->visible_devices", devices.c_str(), "99999999999999999999999", "'99999999999999999999999'" + tail);
  // The missing manifest is also a FAILED loader entry, as before.
  std::optional<accel_loader_entry_t> e = Find(instance.Report(), missing);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->state, ACCEL_LOADER_STATE_FAILED);
  // A warning is read like every output struct: wrong stype and index refused.
  accel_loader_warning_t w{};
  w.stype = ACCEL_STRUCTURE_TYPE_LOADER_ENTRY;
  w.struct_size = sizeof(w);
  EXPECT_EQ(accel_instance_get_loader_warning(instance.get(), 0, &w), ACCEL_ERROR_INVALID_ARGUMENT);
  w.stype = ACCEL_STRUCTURE_TYPE_LOADER_WARNING;
  EXPECT_EQ(accel_instance_get_loader_warning(instance.get(), 6, &w), ACCEL_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(accel_last_error()).find("'index' 6 is out of range: there are 6 setting warnings"),
            std::string::npos)
      << accel_last_error();
}

TEST_F(LoaderTest, SettingsThatAreUsedGiveNoWarnings) {
  accel_instance_desc_t desc = ScopedInstance::Files(ACCEL_TEST_HOST_MANIFEST);
  desc.backends = "host,-sim";  // 'sim' is not found: a name to drop that is absent is still worth saying
  desc.visible_devices = "0";
  ScopedInstance instance(&desc);
  const auto warnings = instance.Warnings();
  ASSERT_EQ(warnings.size(), 1u) << Describe(warnings);
  EXPECT_STREQ(warnings[0].item, "-sim");
  desc.backends = "host";
  ScopedInstance clean(&desc);
  EXPECT_TRUE(clean.Warnings().empty()) << Describe(clean.Warnings());
}

TEST_F(LoaderTest, EnvironmentSettingWarningsNameTheVariable) {
  ASSERT_EQ(setenv("ACCEL_BACKENDS", "host,h0st", 1), 0);
  ASSERT_EQ(setenv("ACCEL_LOG", "verbose", 1), 0);
  ASSERT_EQ(setenv("ACCEL_TOPOLOGY_DOMAINS", "rack=r1,shelf=s2", 1), 0);
  ASSERT_EQ(setenv("ACCEL_BACKEND_FILES", "", 1), 0);
  std::vector<accel_loader_warning_t> warnings;
  std::string text;
  {
    accel_instance_desc_t desc{};
    desc.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    desc.struct_size = sizeof(desc);
    desc.log_callback = [](void*, accel_log_level_t, const char*) {};  // the warnings are logged too: keep them quiet
    ScopedInstance instance(&desc);
    warnings = instance.Warnings();
    text = Describe(warnings);
  }
  unsetenv("ACCEL_LOG");
  unsetenv("ACCEL_TOPOLOGY_DOMAINS");
  unsetenv("ACCEL_BACKEND_FILES");
  setenv("ACCEL_BACKENDS", "host", 1);
  EXPECT_NE(text.find("ACCEL_LOG=verbose []: 'verbose' is not a log level (off, error, warn, info, debug)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ACCEL_TOPOLOGY_DOMAINS=rack=r1,shelf=s2 [shelf=s2]: 'shelf=s2' is ignored: expected "
                      "<level>=<id> with level rack, block, slice or zone"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ACCEL_BACKEND_FILES= []: names no file: nothing is searched for and no backend is loaded"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ACCEL_BACKENDS=host,h0st [h0st]: 'h0st' names no backend that was found (none was found)"),
            std::string::npos)
      << text;
}

#ifdef ACCEL_TEST_ACCEL_INFO
TEST_F(LoaderTest, AccelInfoPrintsEachSettingWarningOnOneLine) {
  std::string output;
  const int rc = accel_test::RunCommand(
      "env ACCEL_BACKENDS=host,h0st ACCEL_VISIBLE_DEVICES=0,5 " + std::string(ACCEL_TEST_ACCEL_INFO), &output);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("accel-info: warning: ACCEL_BACKENDS=host,h0st: 'h0st' names no backend that was found "
                        "(found: "),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("accel-info: warning: ACCEL_VISIBLE_DEVICES=0,5: '5' matches no device: there is 1 "
                        "physical device, index 0"),
            std::string::npos)
      << output;
  // With good settings, no warning line.
  output.clear();
  ASSERT_EQ(accel_test::RunCommand("env ACCEL_BACKENDS=host " + std::string(ACCEL_TEST_ACCEL_INFO), &output), 0);
  EXPECT_EQ(output.find("warning"), std::string::npos) << output;
  // --loader-debug lists them after the entries.
  output.clear();
  ASSERT_EQ(accel_test::RunCommand(
                "env ACCEL_BACKENDS=host,h0st " + std::string(ACCEL_TEST_ACCEL_INFO) + " --loader-debug", &output),
            0);
  EXPECT_NE(output.find("Setting warnings: 1\n  ACCEL_BACKENDS=host,h0st: 'h0st' names no backend"), std::string::npos)
      << output;
}

TEST_F(LoaderTest, AccelInfoLoaderDebugPrintsEachReason) {
  std::vector<std::pair<std::string, std::string>> cases = {
      {dir_.Write("a.json", ManifestJson("no_entry", TestBackend("no_entry"))),
       "does not export accel_backend_get_api"},
      {dir_.Write("b.json", ManifestJson("fake_major2", TestBackend("fake_major2"))), "backend implements ABI 2.0"},
      {dir_.Write("c.json", ManifestJson("fake_null_required", TestBackend("fake_null_required"))),
       "required slot 'device_get_capabilities' is NULL"},
      {dir_.Write("d.json", ManifestJson("fake_init_fail", TestBackend("fake_init_fail"))), "/dev/fake0 is missing"},
      {dir_.Write("e.json", "{ broken"), "malformed JSON"},
      {dir_.Write("f.json", ManifestJson("gone", "gone/libaccel_backend_gone.so")), "does not exist"},
      {dir_.Write("g.json", ManifestJson("gone2", "libaccel_backend_gone2.so")),
       "is not next to the manifest (" + (dir_.path() / "libaccel_backend_gone2.so").string() +
           ") and the system library search found none"},
  };
  std::string files = ACCEL_TEST_HOST_MANIFEST;
  for (const auto& [path, reason] : cases) files += ":" + path;
  std::string output;
  int rc = accel_test::RunCommand("env ACCEL_BACKENDS= ACCEL_BACKEND_FILES='" + files + "' " +
                                      std::string(ACCEL_TEST_ACCEL_INFO) + " --loader-debug",
                                  &output);
  EXPECT_EQ(rc, 0) << output;
  for (const auto& [path, reason] : cases) {
    EXPECT_NE(output.find(path), std::string::npos) << "missing " << path << " in:\n" << output;
    EXPECT_NE(output.find(reason), std::string::npos) << "missing '" << reason << "' in:\n" << output;
  }
  EXPECT_NE(output.find("host"), std::string::npos) << output;
}
#endif

}  // namespace
