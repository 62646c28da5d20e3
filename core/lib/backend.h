// One loaded backend: its library, the negotiated function table and its
// context for one instance (docs/abi.md, docs/loader.md).
#ifndef ACCEL_CORE_BACKEND_H_
#define ACCEL_CORE_BACKEND_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "accel_backend.h"
#include "discovery.h"
#include "handle_table.h"
#include "log.h"

namespace accel::core {

class Instance;

// What the loader learned about one candidate, for the loader report.
struct LoadReport {
  std::string backend_name;
  std::string manifest_path;
  std::string library_path;
  std::string reason;
  accel_loader_state_t state = ACCEL_LOADER_STATE_FAILED;
  accel_status_t status = ACCEL_SUCCESS;
  uint32_t negotiated_abi_version = 0;
  uint32_t backend_abi_version = 0;
  uint32_t device_count = 0;
};

// The ABI versions this core speaks to backends.
inline constexpr uint32_t kCoreBackendAbiMin = ACCEL_MAKE_VERSION(1, 0, 0);
inline constexpr uint32_t kCoreBackendAbiMax = ACCEL_BACKEND_ABI_VERSION;

// The most entries the core accepts from one call of a backend's enumeration (docs/backend-abi.md, "Enumerations").
inline constexpr uint32_t kMaxBackendDevices = 4096;  // context_get_devices
inline constexpr uint32_t kMaxBackendNics = 1024;     // context_get_nics
inline constexpr uint32_t kMaxDeviceDomains = 64;     // device_get_domains
inline constexpr uint32_t kMaxModuleKernels = 65536;  // module_enumerate_kernels

// A backend library opened, negotiated and initialised for one instance.
// Thread-safe after Load: the table and device list never change; Shutdown
// is called once, by the owning instance, after every object is released.
class Backend : public Object {
 public:
  static constexpr HandleType kHandleType = HandleType::kBackend;

  // Loads `candidate`; fills `report` either way.
  static std::shared_ptr<Backend> Load(const Candidate& candidate, const Logger* log, const LoaderSettings& settings,
                                       LoadReport* report);
  ~Backend() override;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // The table, zero-extended to this core's size: slots the backend's table
  // did not cover are NULL.
  const accel_backend_api_t& api() const { return api_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& library_path() const { return library_path_; }
  uint32_t abi_version() const { return abi_version_; }
  const std::vector<accel_bk_device_t>& devices() const { return devices_; }

  // Calls a slot: UNIMPLEMENTED when it is NULL; on failure the status
  // carries the backend's message (or a generic one naming the slot).
  template <typename Fn, typename... Args>
  Status Call(const char* slot_name, Fn slot, Args... args) const {
    if (slot == nullptr) {
      return Error(ACCEL_ERROR_UNIMPLEMENTED, "backend '{}' does not implement {}", name_, slot_name);
    }
    ClearBackendMessage();
    accel_status_t s = slot(args...);
    if (s >= 0) {
      ClearBackendMessage();
      return Status(s);
    }
    return FailedSlot(slot_name, s);
  }

  // The plugin ABI's two-call enumeration (count, then list: context_get_devices, context_get_nics,
  // device_get_domains, module_enumerate_kernels) with the core's checks on what the backend says
  // (docs/backend-abi.md, "Enumerations"): a count above `limit` is refused before anything is allocated (a garbage
  // count must not become gigabytes of zeroes), and so is a second call that reports more entries than the room it
  // was given. The room is filled with `blank`; `out` holds the entries written, or nothing on failure.
  template <typename T, typename Fn, typename Target>
  Status Enumerate(const char* slot_name, Fn slot, Target target, uint32_t limit, const T& blank,
                   std::vector<T>* out) const {
    out->clear();
    uint32_t count = 0;
    Status s = Call(slot_name, slot, target, &count, static_cast<T*>(nullptr));
    if (!s.ok() || count == 0) return s;
    if (count > limit) {
      return Error(ACCEL_ERROR_INTERNAL, "backend '{}' {} reported {} entries; the core accepts at most {}", name_,
                   slot_name, count, limit);
    }
    out->assign(count, blank);
    const uint32_t room = count;
    s = Call(slot_name, slot, target, &count, out->data());
    if (s.ok() && count > room) {
      s = Error(ACCEL_ERROR_INTERNAL, "backend '{}' {} reported {} entries in room for {}", name_, slot_name, count,
                room);
    }
    if (!s.ok()) {
      out->clear();
      return s;
    }
    out->resize(count);
    return Status::Ok();
  }

  // The backend's own NICs (context_get_nics); UNIMPLEMENTED without the slot.
  Status ListNics(std::vector<accel_nic_properties_t>* out) const;

  // Destroys the backend context and closes the library, after any destroy still running on a helper thread.
  void Shutdown();

  // A stream destroyed on a helper thread (objects.h, Stream) counts as running in the backend from before the thread
  // starts until its destroy returned: Shutdown waits for it, so the library is never closed under it. Thread-safe.
  void BeginHelperDestroy();
  void EndHelperDestroy();

  Instance* owner = nullptr;  // set once by the instance that loaded it

 private:
  Backend() = default;
  Status FailedSlot(const char* slot_name, accel_status_t status) const;
  Status Open(const Candidate& candidate, const LoaderSettings& settings, LoadReport* report);
  // dlopen of the candidate's library, or of its bare name through the
  // system library search when no such file is next to the manifest.
  Status OpenLibrary(const Candidate& candidate, LoadReport* report);

  struct HostContext {
    const Logger* log = nullptr;
    std::string name;
    bool use_environment = false;
    std::mutex settings_mutex;
    std::map<std::string, std::optional<std::string>> settings;  // read once each; values live with the backend
  };
  static void HostLog(void* context, accel_log_level_t level, const char* message);
  static void HostSetError(void* context, accel_status_t status, const char* message);
  static void* HostAlloc(void* context, size_t size, size_t alignment);
  static void HostFree(void* context, void* pointer);
  static const char* HostGetSetting(void* context, const char* name);

  void* library_ = nullptr;
  accel_backend_api_t api_{};
  HostContext host_context_;
  accel_host_services_t services_{};
  std::string cache_dir_;
  std::string machine_id_;
  accel_bk_context_t context_ = nullptr;
  std::vector<accel_bk_device_t> devices_;
  std::string name_;
  std::string version_;
  std::string library_path_;
  uint32_t abi_version_ = 0;
  std::mutex helpers_mutex_;
  std::condition_variable helpers_done_;
  uint32_t helpers_ = 0;  // destroys running on helper threads (under helpers_mutex_)
};

#define ACCEL_SLOT(backend, slot, ...) (backend).Call(#slot, (backend).api().slot, __VA_ARGS__)

}  // namespace accel::core

#endif  // ACCEL_CORE_BACKEND_H_
