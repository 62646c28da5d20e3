// The conformance suite's harness: the backend under test, its devices, the
// registry of test cases with their stable ids, and the helpers every
// profile's tests share (docs/conformance.md).
//
// A case is registered once, with a profile and a stable id
// ("memory.copy.all_directions"), and runs as one GoogleTest test per device
// ("memory.copy.all_directions/dev0") or once per backend. Cases read the
// backend through Target(); they never open it themselves, except the abi
// profile, which loads the library raw (RawBackend) to call its table.
//
//   ACCEL_CONFORMANCE_DEVICE_CASE(kMemory, fill, patterns) {  // memory.fill.patterns
//     Buffer b = Buffer::Create(dut, 64);
//     ...
//   }
//
// Thread-safety: Target() is filled before any test runs and read-only after;
// the helpers are safe from any thread, as the C API they wrap.
#ifndef ACCEL_CONFORMANCE_SUITE_HARNESS_H_
#define ACCEL_CONFORMANCE_SUITE_HARNESS_H_

#include <accel/accel.h>
#include <accel_backend.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::conformance {

// Profiles, each including the ones before it.
enum class Profile { kAbi = 0, kQuery, kMemory, kStreams, kExecution, kMultiDevice };
inline constexpr Profile kAllProfiles[] = {Profile::kAbi,     Profile::kQuery,     Profile::kMemory,
                                           Profile::kStreams, Profile::kExecution, Profile::kMultiDevice};
const char* ProfileName(Profile profile);
std::optional<Profile> ParseProfile(std::string_view name);

// One device of the backend under test.
struct DeviceUnderTest {
  uint32_t index = 0;  // among the backend's devices
  accel_device_t device = nullptr;
  accel_device_capabilities_t caps{};
  std::string label;  // "device 0 (host: AMD EPYC 7B13)"
};

// The backend under test, as the runner opened it through libaccel.
struct Target {
  std::string backend_arg;    // --backend as given
  std::string library_path;   // resolved
  std::string manifest_path;  // "" when a library was named
  std::string name;
  std::string version;
  uint32_t abi_version = 0;
  accel_instance_t instance = nullptr;
  accel_backend_t backend = nullptr;
  std::vector<DeviceUnderTest> all_devices;  // every device of the backend
  std::vector<uint32_t> selected;            // indices into all_devices the per-device cases run on
  std::filesystem::path corpus_dir;
};
Target& TheTarget();

// --- Registry ----------------------------------------------------------------------------------------------------

using DeviceCaseFn = void (*)(const DeviceUnderTest&);
using BackendCaseFn = void (*)();
struct Case {
  Profile profile;
  std::string id;  // stable: "<profile>.<group>.<name>"
  DeviceCaseFn per_device = nullptr;
  BackendCaseFn per_backend = nullptr;
  const char* file = "";
  int line = 0;
};
std::vector<Case>& Registry();
// `id` is "<group>.<name>"; the profile's name is prefixed.
int RegisterDeviceCase(Profile profile, const char* id, DeviceCaseFn fn, const char* file, int line);
int RegisterBackendCase(Profile profile, const char* id, BackendCaseFn fn, const char* file, int line);

#define ACCEL_CONFORMANCE_DEVICE_CASE(profile, group, name)                                                  \
  static void Case_##group##_##name(const ::accel::conformance::DeviceUnderTest& dut);                       \
  [[maybe_unused]] static const int kRegistered_##group##_##name = ::accel::conformance::RegisterDeviceCase( \
      ::accel::conformance::Profile::profile, #group "." #name, Case_##group##_##name, __FILE__, __LINE__);  \
  static void Case_##group##_##name(const ::accel::conformance::DeviceUnderTest& dut)
#define ACCEL_CONFORMANCE_BACKEND_CASE(profile, group, name)                                                  \
  static void Case_##group##_##name();                                                                        \
  [[maybe_unused]] static const int kRegistered_##group##_##name = ::accel::conformance::RegisterBackendCase( \
      ::accel::conformance::Profile::profile, #group "." #name, Case_##group##_##name, __FILE__, __LINE__);   \
  static void Case_##group##_##name()

// --- Skips -------------------------------------------------------------------------------------------------------

// Every skip message starts with this prefix and names the capability query
// that said the feature is absent; the runner counts anything else as a bug.
inline constexpr std::string_view kAbsentPrefix = "capability absent: ";
std::string AbsentFeature(const DeviceUnderTest& dut, uint64_t feature_bit);
#define ACCEL_REQUIRE_FEATURE(dut, bit)                                                                    \
  do {                                                                                                     \
    if (((dut).caps.features & (bit)) == 0) GTEST_SKIP() << ::accel::conformance::AbsentFeature(dut, bit); \
  } while (0)

// --- Objects -----------------------------------------------------------------------------------------------------

// "<status name>: <last error>" for failure messages.
std::string Why(accel_status_t status);
#define ACCEL_ASSERT_OK(expr)                                                                             \
  do {                                                                                                    \
    const accel_status_t accel_status_ = (expr);                                                          \
    ASSERT_EQ(accel_status_, ACCEL_SUCCESS) << #expr << ": " << ::accel::conformance::Why(accel_status_); \
  } while (0)
#define ACCEL_EXPECT_OK(expr)                                                                             \
  do {                                                                                                    \
    const accel_status_t accel_status_ = (expr);                                                          \
    EXPECT_EQ(accel_status_, ACCEL_SUCCESS) << #expr << ": " << ::accel::conformance::Why(accel_status_); \
  } while (0)

// Owning wrappers; a failed create leaves the handle NULL and records a
// GoogleTest failure naming the call.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const DeviceUnderTest& dut, uint64_t size) : Buffer(dut.device, size) {}
  Buffer(accel_device_t device, uint64_t size);
  ~Buffer();
  Buffer(Buffer&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Buffer& operator=(Buffer&&) = delete;
  accel_buffer_t get() const { return handle_; }
  accel_buffer_t release() {
    accel_buffer_t h = handle_;
    handle_ = nullptr;
    return h;
  }

 private:
  accel_buffer_t handle_ = nullptr;
};

class Stream {
 public:
  explicit Stream(const DeviceUnderTest& dut) : Stream(dut.device) {}
  explicit Stream(accel_device_t device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  accel_stream_t get() const { return handle_; }
  // Synchronizes with an infinite timeout; returns the stream's status.
  accel_status_t Sync() const;

 private:
  accel_stream_t handle_ = nullptr;
};

class Event {
 public:
  explicit Event(const DeviceUnderTest& dut, uint64_t flags = 0) : Event(dut.device, flags) {}
  Event(accel_device_t device, uint64_t flags);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  accel_event_t get() const { return handle_; }

 private:
  accel_event_t handle_ = nullptr;
};

// A host callback that blocks its stream until Open() (or destruction): lets
// a test hold work pending while it checks queries and waits.
class Gate {
 public:
  Gate() = default;
  ~Gate() { Open(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  // Enqueues the blocking callback on `stream`.
  accel_status_t EnqueueOn(accel_stream_t stream);
  void Open();
  // True once the callback started running on the stream's worker.
  bool WaitUntilEntered(std::chrono::milliseconds timeout);

 private:
  static accel_status_t Callback(void* user_data, accel_status_t status);
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  bool entered_ = false;
};

// Writes `data` into the buffer at `offset` and synchronizes.
void Upload(const Stream& stream, accel_buffer_t buffer, uint64_t offset, const void* data, uint64_t size);
// Reads `size` bytes at `offset` and synchronizes.
std::vector<uint8_t> Download(const Stream& stream, accel_buffer_t buffer, uint64_t offset, uint64_t size);
// A deterministic byte pattern.
std::vector<uint8_t> Pattern(uint64_t size, uint32_t seed);
// The link from `a` to `b` (accel_device_get_link); a failed query is a GoogleTest failure.
accel_device_link_t Link(accel_device_t a, accel_device_t b);

// --- Raw backend (abi profile) -----------------------------------------------------------------------------------

// The backend library opened with dlopen, with host services of the suite's
// own that record the last set_error message.
class RawBackend {
 public:
  RawBackend();
  ~RawBackend();
  RawBackend(const RawBackend&) = delete;
  RawBackend& operator=(const RawBackend&) = delete;
  bool ok() const { return entry_ != nullptr; }
  const std::string& load_error() const { return load_error_; }
  accel_backend_get_api_fn entry() const { return entry_; }
  const accel_host_services_t* host() const { return &host_; }
  // Negotiates [1.0, 1.0]; NULL (with a GoogleTest failure) when it fails.
  const accel_backend_api_t* Api();
  std::string last_error() const;
  int set_error_calls() const { return set_error_calls_.load(); }

 private:
  static void Log(void* context, accel_log_level_t level, const char* message);
  static void SetError(void* context, accel_status_t status, const char* message);
  static void* Allocate(void* context, size_t size, size_t alignment);
  static void Deallocate(void* context, void* pointer);
  static const char* GetSetting(void* context, const char* name);
  void* library_ = nullptr;
  accel_backend_get_api_fn entry_ = nullptr;
  std::string load_error_;
  accel_host_services_t host_{};
  mutable std::mutex mutex_;
  std::string last_error_;
  std::atomic<int> set_error_calls_{0};
};

// True when the slot at `offset` of `api` lies within its struct_size and is non-NULL.
bool HasSlot(const accel_backend_api_t* api, size_t offset);
#define ACCEL_HAS_SLOT(api, slot) ::accel::conformance::HasSlot(api, offsetof(accel_backend_api_t, slot))

}  // namespace accel::conformance

#endif  // ACCEL_CONFORMANCE_SUITE_HARNESS_H_
