// Helpers for Accel's tests: paths of built artifacts, temporary folders,
// manifests, and instances with explicit backend files.
#ifndef ACCEL_TESTS_COMMON_TEST_UTIL_H_
#define ACCEL_TESTS_COMMON_TEST_UTIL_H_

#include <accel/accel.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <list>
#include <string>
#include <thread>
#include <vector>

namespace accel_test {

// A fresh folder under the system temp dir, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "accel-test-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::filesystem::path p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string ManifestJson(const std::string& name, const std::string& library, int abi_major = 1,
                                const std::string& format = "1.0.0") {
  return "{\"file_format_version\": \"" + format + "\", \"backend\": {\"name\": \"" + name +
         "\", \"library_path\": \"" + library + "\", \"abi_major\": " + std::to_string(abi_major) + "}}";
}

inline std::string TestBackend(const std::string& name) {
  return std::string(ACCEL_TEST_BACKEND_DIR) + "/libaccel_backend_" + name + ".so";
}

// Owns an instance; fails the test if creation fails.
class ScopedInstance {
 public:
  explicit ScopedInstance(const accel_instance_desc_t* desc) {
    status_ = accel_instance_create(desc, &instance_);
    EXPECT_EQ(status_, ACCEL_SUCCESS) << accel_last_error();
  }
  // Only these backend files, with the environment ignored.
  // The string is kept alive for the rest of the test program.
  static accel_instance_desc_t Files(const std::string& files_text) {
    static std::list<std::string> kept;
    const std::string& files = kept.emplace_back(files_text);
    accel_instance_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    d.struct_size = sizeof(d);
    d.flags = ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT;
    d.backend_files = files.c_str();
    return d;
  }
  // Only the backends named (ACCEL_BACKENDS form); the environment's other
  // settings (ACCEL_SIM_PROFILE, ACCEL_VISIBLE_DEVICES, ...) stay in force.
  static accel_instance_desc_t Backends(const char* names) {
    accel_instance_desc_t d{};
    d.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
    d.struct_size = sizeof(d);
    d.backends = names;
    return d;
  }
  ~ScopedInstance() {
    if (instance_ != nullptr) {
      EXPECT_EQ(accel_instance_destroy(instance_), ACCEL_SUCCESS) << accel_last_error();
    }
  }
  ScopedInstance(const ScopedInstance&) = delete;
  ScopedInstance& operator=(const ScopedInstance&) = delete;
  accel_instance_t get() const { return instance_; }
  accel_status_t status() const { return status_; }

  std::vector<accel_device_t> Devices() const {
    uint32_t n = 0;
    EXPECT_EQ(accel_instance_enumerate_devices(instance_, &n, nullptr), ACCEL_SUCCESS);
    std::vector<accel_device_t> v(n);
    if (n > 0) {
      EXPECT_EQ(accel_instance_enumerate_devices(instance_, &n, v.data()), ACCEL_SUCCESS);
    }
    return v;
  }
  // The setting warnings (accel_instance_get_loader_warning; docs/loader.md).
  std::vector<accel_loader_warning_t> Warnings() const {
    uint32_t n = 0;
    EXPECT_EQ(accel_instance_get_loader_warning_count(instance_, &n), ACCEL_SUCCESS) << accel_last_error();
    std::vector<accel_loader_warning_t> v(n);
    for (uint32_t i = 0; i < n; ++i) {
      v[i].stype = ACCEL_STRUCTURE_TYPE_LOADER_WARNING;
      v[i].struct_size = sizeof(v[i]);
      EXPECT_EQ(accel_instance_get_loader_warning(instance_, i, &v[i]), ACCEL_SUCCESS) << accel_last_error();
    }
    return v;
  }
  std::vector<accel_loader_entry_t> Report() const {
    uint32_t n = 0;
    EXPECT_EQ(accel_instance_get_loader_entry_count(instance_, &n), ACCEL_SUCCESS);
    std::vector<accel_loader_entry_t> v(n);
    for (uint32_t i = 0; i < n; ++i) {
      v[i].stype = ACCEL_STRUCTURE_TYPE_LOADER_ENTRY;
      v[i].struct_size = sizeof(v[i]);
      EXPECT_EQ(accel_instance_get_loader_entry(instance_, i, &v[i]), ACCEL_SUCCESS);
    }
    return v;
  }
  // The device of the named backend, or NULL.
  accel_device_t DeviceOf(const std::string& backend) const {
    for (accel_device_t d : Devices()) {
      accel_device_capabilities_t c = Capabilities(d);
      if (backend == c.backend_name) return d;
    }
    return nullptr;
  }
  static accel_device_capabilities_t Capabilities(accel_device_t d) {
    accel_device_capabilities_t c{};
    c.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
    c.struct_size = sizeof(c);
    EXPECT_EQ(accel_device_get_capabilities(d, &c), ACCEL_SUCCESS) << accel_last_error();
    return c;
  }

 private:
  accel_instance_t instance_ = nullptr;
  accel_status_t status_ = ACCEL_SUCCESS;
};

inline accel_buffer_desc_t BufferDesc(uint64_t size, accel_memory_kind_t kind = ACCEL_MEMORY_KIND_DEVICE) {
  accel_buffer_desc_t d{};
  d.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
  d.struct_size = sizeof(d);
  d.size = size;
  d.memory_kind = kind;
  return d;
}

// Runs a command, returns its exit status and stdout+stderr.
inline int RunCommand(const std::string& command, std::string* output) {
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `call(0)` and `call(1)` on two threads released at the same moment (each spins until both started), and
// joins them: two calls racing, as closely as threads can.
template <typename Call>
void RaceTwo(Call call) {
  std::atomic<int> ready{0};
  std::thread racers[2];
  for (int t = 0; t < 2; ++t) {
    racers[t] = std::thread([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      call(t);
    });
  }
  for (std::thread& r : racers) r.join();
}

}  // namespace accel_test

#endif  // ACCEL_TESTS_COMMON_TEST_UTIL_H_
