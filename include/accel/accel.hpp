// Accel C++ API: a header-only C++17 RAII wrapper over the C API of accel.h.
//
// Each class here wraps one C object and adds nothing the C API lacks:
// owners (Instance, Buffer, Stream, Event, Module, Mapping) release their
// handle in their destructor and are move-only; Device, PhysicalDevice and
// Backend are copyable non-owning values, valid while their Instance lives,
// and Kernel one valid while its Module lives. A failing
// call throws accel::Error with the C status and the C message
// (accel_last_error()). Destructors never throw: they ignore the status, so
// an owner that outlives its Instance is harmless (its handle is stale and the
// C call rejects it). The C rules (docs/ownership.md, docs/threading.md,
// docs/errors.md) apply unchanged; `handle()` and `release()` hand a raw
// handle to C code. A docs/<name>.md named here is in Accel's source tree and
// installed as <prefix>/share/doc/accel/<name>.md.
#ifndef ACCEL_ACCEL_HPP_
#define ACCEL_ACCEL_HPP_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "accel/accel.h"

namespace accel {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// An Accel call that failed: its (negative) status and its message.
// A plain exception value; safe to copy and to read from any thread.
//
//   try {
//     accel::Buffer huge(device, uint64_t{1} << 50);
//   } catch (const accel::Error& e) {
//     if (e.status() == ACCEL_ERROR_RESOURCE_EXHAUSTED) std::puts(e.what());
//   }
class Error : public std::runtime_error {
 public:
  Error(accel_status_t status, const std::string& message) : std::runtime_error(message), status_(status) {}

  accel_status_t status() const noexcept { return status_; }
  // "ACCEL_ERROR_RESOURCE_EXHAUSTED"; static storage.
  const char* status_name() const noexcept { return accel_status_name(status_); }

 private:
  accel_status_t status_;
};

// Throws Error for a negative status, with the calling thread's C message
// (or the status name when the message is empty); returns any other status
// unchanged, so ACCEL_NOT_READY passes through.
inline accel_status_t check(accel_status_t status) {
  if (status < 0) {
    const char* message = accel_last_error();
    throw Error(status, (message != nullptr && *message != '\0') ? message : accel_status_name(status));
  }
  return status;
}

// Pass as a timeout to wait without one.
inline constexpr std::chrono::nanoseconds infinite = std::chrono::nanoseconds::max();

// Pass as a size to mean "to the end of the buffer".
inline constexpr uint64_t whole_size = ~uint64_t{0};

namespace detail {

// A C struct with its header filled in and every other field zero.
template <class T>
T sized(uint32_t stype) noexcept {
  static_assert(std::is_trivially_copyable_v<T>, "only C structs carry the struct header");
  T value{};
  value.stype = stype;
  value.struct_size = static_cast<uint32_t>(sizeof(T));
  return value;
}

inline std::string to_string(const char* text) { return text != nullptr ? std::string(text) : std::string(); }

// A fixed-size char array of a descriptor, NUL-terminated or full.
template <std::size_t N>
std::string from_array(const char (&text)[N]) {
  const void* end = std::memchr(text, '\0', N);
  return std::string(text, end != nullptr ? static_cast<std::size_t>(static_cast<const char*>(end) - text) : N);
}

inline uint64_t to_timeout_ns(std::chrono::nanoseconds timeout) noexcept {
  if (timeout == infinite) return ACCEL_TIMEOUT_INFINITE;
  return timeout.count() <= 0 ? 0 : static_cast<uint64_t>(timeout.count());
}

// Runs one C enumeration (count, then fill) and wraps each handle.
template <class Wrapper, class Handle, class Enumerate>
std::vector<Wrapper> enumerate(Enumerate&& enumerate_fn) {
  uint32_t count = 0;
  check(enumerate_fn(&count, static_cast<Handle*>(nullptr)));
  std::vector<Handle> handles(count);
  if (count > 0) check(enumerate_fn(&count, handles.data()));
  handles.resize(count);
  return std::vector<Wrapper>(handles.begin(), handles.end());
}

// ACCEL_SUCCESS -> true, ACCEL_NOT_READY -> false, errors throw.
inline bool ready(accel_status_t status) { return check(status) == ACCEL_SUCCESS; }

// ACCEL_SUCCESS -> true, ACCEL_ERROR_TIMEOUT -> false, other errors throw.
inline bool completed(accel_status_t status) {
  if (status == ACCEL_ERROR_TIMEOUT) return false;
  check(status);
  return true;
}

// The move-only ownership of one C handle, destroyed with Destroy (its status
// ignored, so destructors never throw): the base of every owning class.
template <class Handle, accel_status_t (*Destroy)(Handle)>
class Owner {
 public:
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  Handle handle() const noexcept { return handle_; }
  // Gives up ownership; the caller destroys the handle.
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, nullptr); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 protected:
  Owner() noexcept = default;
  explicit Owner(Handle handle) noexcept : handle_(handle) {}
  ~Owner() { reset(); }
  Owner(Owner&& other) noexcept : handle_(other.release()) {}
  Owner& operator=(Owner&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = other.release();
    }
    return *this;
  }

  Handle* out() noexcept { return &handle_; }  // where a create call writes the handle
  void reset() noexcept {
    if (handle_ != nullptr) static_cast<void>(Destroy(release()));
  }

 private:
  Handle handle_ = nullptr;
};

}  // namespace detail

//===----------------------------------------------------------------------===//
// Plain data
//===----------------------------------------------------------------------===//

// libaccel's version and the backend ABI range its loader accepts.
struct VersionInfo {
  uint32_t library_version = 0;  // ACCEL_MAKE_VERSION; ACCEL_VERSION_MAJOR() etc. unpack it
  uint32_t abi_version = 0;
  uint32_t backend_abi_min = 0;
  uint32_t backend_abi_max = 0;
  std::string build;
};

// One candidate backend the loader considered (accel_loader_entry_t).
struct LoaderEntry {
  std::string backend_name;
  std::string manifest_path;
  std::string library_path;
  std::string reason;  // why it failed or was skipped; "" when loaded
  accel_loader_state_t state = ACCEL_LOADER_STATE_FAILED;
  accel_status_t status = ACCEL_SUCCESS;
  uint32_t negotiated_abi_version = 0;
  uint32_t backend_abi_version = 0;
  uint32_t device_count = 0;
};

// An override that named nothing or could not be parsed
// (accel_loader_warning_t, ABI 1.1).
struct LoaderWarning {
  std::string setting;  // "ACCEL_BACKENDS", or "desc->backends"
  std::string value;
  std::string item;  // the part that is wrong; "" when it is the whole value
  std::string message;
};

// A loaded backend's properties (accel_backend_properties_t).
struct BackendInfo {
  std::string name;
  std::string version;
  std::string library_path;
  uint32_t abi_version = 0;
  uint32_t device_count = 0;
};

// Live free and total memory of a device, in bytes.
struct MemoryInfo {
  uint64_t free = 0;
  uint64_t total = 0;
};

inline VersionInfo version() {
  auto info = detail::sized<accel_version_info_t>(ACCEL_STRUCTURE_TYPE_VERSION_INFO);
  check(accel_version_get(&info));
  return {info.library_version, info.abi_version, info.backend_abi_min, info.backend_abi_max,
          detail::to_string(info.build)};
}

class Backend;
class PhysicalDevice;

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

// One access path to a device (a backend device): a non-owning handle value,
// valid while its Instance lives. Copyable; every call is thread-safe.
//
//   for (accel::Device device : instance.devices()) {
//     auto caps = device.capabilities();
//     auto units = device.info<uint32_t>(ACCEL_DEVICE_INFO_COMPUTE_UNITS);
//     std::printf("%s: %u units, %s, CPUs %s\n", device.name().c_str(), units, caps.backend_name,
//                 device.topology().local_cpus);
//   }
class Device {
 public:
  Device() noexcept = default;
  explicit Device(accel_device_t handle) noexcept : handle_(handle) {}

  accel_device_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  friend bool operator==(Device a, Device b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(Device a, Device b) noexcept { return a.handle_ != b.handle_; }

  // The typed snapshot of every capability.
  accel_device_capabilities_t capabilities() const {
    auto caps = detail::sized<accel_device_capabilities_t>(ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES);
    check(accel_device_get_capabilities(handle_, &caps));
    return caps;
  }

  // One fixed-size capability: T is the key's value type (uint32_t, int32_t,
  // uint64_t, std::array<uint32_t, 3>, std::array<uint8_t, 16>,
  // accel_device_kind_t). Throws ACCEL_ERROR_INVALID_ARGUMENT when T's size
  // is not the key's.
  template <class T>
  T info(accel_device_info_key_t key) const {
    static_assert(std::is_trivially_copyable_v<T>, "info<T>: T must be a plain value; use info_string for strings");
    T value{};
    std::size_t size = 0;
    check(accel_device_get_info(handle_, key, sizeof(T), &value, &size));
    if (size != sizeof(T)) {
      throw Error(ACCEL_ERROR_INVALID_ARGUMENT, "accel::Device::info: key " + std::to_string(static_cast<int>(key)) +
                                                    " has a " + std::to_string(size) + "-byte value, T has " +
                                                    std::to_string(sizeof(T)) + " bytes");
    }
    return value;
  }

  // One string capability (ACCEL_DEVICE_INFO_NAME, _STABLE_ID, ...).
  std::string info_string(accel_device_info_key_t key) const {
    std::size_t size = 0;
    check(accel_device_get_info(handle_, key, 0, nullptr, &size));
    std::string value(size, '\0');
    if (size > 0) check(accel_device_get_info(handle_, key, size, value.data(), &size));
    const std::size_t end = value.find('\0');
    if (end != std::string::npos) value.resize(end);
    return value;
  }

  MemoryInfo memory_info() const {
    MemoryInfo memory;
    check(accel_device_get_memory_info(handle_, &memory.free, &memory.total));
    return memory;
  }

  std::string name() const { return info_string(ACCEL_DEVICE_INFO_NAME); }
  std::string stable_id() const { return info_string(ACCEL_DEVICE_INFO_STABLE_ID); }
  inline Backend backend() const;
  inline PhysicalDevice physical_device() const;

  // Where the device sits in the machine: PCI, NUMA node, local CPUs, the
  // nearest NIC (docs/topology.md).
  accel_device_topology_t topology() const {
    auto topology = detail::sized<accel_device_topology_t>(ACCEL_STRUCTURE_TYPE_DEVICE_TOPOLOGY);
    check(accel_device_get_topology(handle_, &topology));
    return topology;
  }

  // The path to `peer`: link class, fabric links, bandwidth, peer access
  // (ACCEL_LINK_CLASS_SELF for the same physical device).
  accel_device_link_t link(Device peer) const {
    auto link = detail::sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
    check(accel_device_get_link(handle_, peer.handle_, &link));
    return link;
  }

  // The path to NIC `nic_index` of Instance::nics(); PIX or PXB is affine.
  accel_device_link_t nic_link(uint32_t nic_index) const {
    auto link = detail::sized<accel_device_link_t>(ACCEL_STRUCTURE_TYPE_DEVICE_LINK);
    check(accel_device_get_nic_link(handle_, nic_index, &link));
    return link;
  }

  // The domains above the device, innermost first: clique, node, then the
  // levels ACCEL_TOPOLOGY_DOMAINS names.
  std::vector<accel_domain_t> domains() const {
    const uint32_t count = topology().domain_count;
    std::vector<accel_domain_t> domains;
    domains.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      domains.push_back(detail::sized<accel_domain_t>(ACCEL_STRUCTURE_TYPE_DOMAIN));
      check(accel_device_get_domain(handle_, i, &domains.back()));
    }
    return domains;
  }

 private:
  accel_device_t handle_ = nullptr;
};

// A physical device: the identity and accounting unit behind one or more
// access paths. A non-owning, copyable handle value; every call is thread-safe.
//
//   for (accel::PhysicalDevice chip : instance.physical_devices()) {
//     auto props = chip.properties();
//     std::printf("%s: %zu access paths\n", props.name, chip.devices().size());
//   }
class PhysicalDevice {
 public:
  PhysicalDevice() noexcept = default;
  explicit PhysicalDevice(accel_physical_device_t handle) noexcept : handle_(handle) {}

  accel_physical_device_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  friend bool operator==(PhysicalDevice a, PhysicalDevice b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(PhysicalDevice a, PhysicalDevice b) noexcept { return a.handle_ != b.handle_; }

  accel_physical_device_properties_t properties() const {
    auto props = detail::sized<accel_physical_device_properties_t>(ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES);
    check(accel_physical_device_get_properties(handle_, &props));
    return props;
  }

  // Its visible access paths.
  std::vector<Device> devices() const {
    return detail::enumerate<Device, accel_device_t>([this](uint32_t* count, accel_device_t* out) {
      return accel_physical_device_enumerate_devices(handle_, count, out);
    });
  }

  std::string name() const { return detail::from_array(properties().name); }
  std::string stable_id() const { return detail::from_array(properties().stable_id); }

 private:
  accel_physical_device_t handle_ = nullptr;
};

// A backend that loaded and initialised: a non-owning, copyable handle value,
// valid while its Instance lives; every call is thread-safe.
//
//   for (accel::Backend backend : instance.backends()) {
//     accel::BackendInfo info = backend.info();
//     std::printf("%s %s: %u devices\n", info.name.c_str(), info.version.c_str(), info.device_count);
//   }
class Backend {
 public:
  Backend() noexcept = default;
  explicit Backend(accel_backend_t handle) noexcept : handle_(handle) {}

  accel_backend_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  friend bool operator==(Backend a, Backend b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(Backend a, Backend b) noexcept { return a.handle_ != b.handle_; }

  BackendInfo info() const {
    auto props = detail::sized<accel_backend_properties_t>(ACCEL_STRUCTURE_TYPE_BACKEND_PROPERTIES);
    check(accel_backend_get_properties(handle_, &props));
    return {detail::to_string(props.name), detail::to_string(props.version), detail::to_string(props.library_path),
            props.abi_version, props.device_count};
  }

  std::string name() const { return info().name; }

  // The visible devices reached through this backend.
  std::vector<Device> devices() const {
    return detail::enumerate<Device, accel_device_t>(
        [this](uint32_t* count, accel_device_t* out) { return accel_backend_enumerate_devices(handle_, count, out); });
  }

 private:
  accel_backend_t handle_ = nullptr;
};

inline Backend Device::backend() const {
  accel_backend_t backend = nullptr;
  check(accel_device_get_backend(handle_, &backend));
  return Backend(backend);
}

inline PhysicalDevice Device::physical_device() const {
  accel_physical_device_t physical = nullptr;
  check(accel_device_get_physical_device(handle_, &physical));
  return PhysicalDevice(physical);
}

//===----------------------------------------------------------------------===//
// Instances
//===----------------------------------------------------------------------===//

// Builds an accel_instance_desc_t; each setter replaces an environment
// variable for one instance. A plain value; not for concurrent mutation.
//
//   accel::Instance instance(accel::InstanceDesc()
//                                .backends("host")
//                                .visible_devices("0")
//                                .log_level(ACCEL_LOG_LEVEL_WARN));
class InstanceDesc {
 public:
  InstanceDesc& ignore_environment(bool ignore = true) {
    flags_ =
        ignore ? (flags_ | ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT) : (flags_ & ~ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT);
    return *this;
  }
  InstanceDesc& backend_files(std::string files) { return set(backend_files_, std::move(files)); }
  InstanceDesc& add_backend_files(std::string files) { return set(add_backend_files_, std::move(files)); }
  InstanceDesc& backends(std::string selection) { return set(backends_, std::move(selection)); }
  InstanceDesc& visible_devices(std::string selection) { return set(visible_devices_, std::move(selection)); }
  InstanceDesc& log_level(accel_log_level_t level) {
    log_level_ = level;
    return *this;
  }
  // `callback` is called from any thread, possibly concurrently; it must not
  // call back into Accel.
  InstanceDesc& log_callback(accel_log_callback_t callback, void* user_data = nullptr) {
    log_callback_ = callback;
    log_user_data_ = user_data;
    return *this;
  }

  // The C descriptor; its strings point into *this, so it is valid while this
  // builder lives unchanged.
  accel_instance_desc_t c_desc() const noexcept {
    auto desc = detail::sized<accel_instance_desc_t>(ACCEL_STRUCTURE_TYPE_INSTANCE_DESC);
    desc.flags = flags_;
    desc.backend_files = c_str(backend_files_);
    desc.add_backend_files = c_str(add_backend_files_);
    desc.backends = c_str(backends_);
    desc.visible_devices = c_str(visible_devices_);
    desc.log_level = log_level_;
    desc.log_callback = log_callback_;
    desc.log_user_data = log_user_data_;
    return desc;
  }

 private:
  InstanceDesc& set(std::optional<std::string>& field, std::string value) {
    field = std::move(value);
    return *this;
  }
  static const char* c_str(const std::optional<std::string>& text) noexcept { return text ? text->c_str() : nullptr; }

  uint64_t flags_ = 0;
  std::optional<std::string> backend_files_;
  std::optional<std::string> add_backend_files_;
  std::optional<std::string> backends_;
  std::optional<std::string> visible_devices_;
  accel_log_level_t log_level_ = ACCEL_LOG_LEVEL_OFF;
  accel_log_callback_t log_callback_ = nullptr;
  void* log_user_data_ = nullptr;
};

// Owns an accel_instance_t: loaded backends, the device registry and every
// object created under it. Queries are thread-safe; destroying (or
// move-assigning over) it must not race any call on its objects.
//
//   accel::Instance instance;  // defaults: backends and settings from the environment
//   for (const accel::LoaderEntry& entry : instance.loader_report())
//     std::printf("%s: %s\n", entry.backend_name.c_str(), entry.reason.c_str());
//   accel::Device device = instance.devices().at(0);
class Instance : public detail::Owner<accel_instance_t, accel_instance_destroy> {
 public:
  Instance() { check(accel_instance_create(nullptr, out())); }
  explicit Instance(const accel_instance_desc_t& desc) { check(accel_instance_create(&desc, out())); }
  explicit Instance(const InstanceDesc& desc) : Instance(desc.c_desc()) {}
  // Takes ownership of a handle created through the C API.
  static Instance adopt(accel_instance_t handle) noexcept { return Instance(handle); }

  // Visible devices of every backend, in the stable order.
  std::vector<Device> devices() const {
    return detail::enumerate<Device, accel_device_t>([this](uint32_t* count, accel_device_t* array) {
      return accel_instance_enumerate_devices(handle(), count, array);
    });
  }
  std::vector<PhysicalDevice> physical_devices() const {
    return detail::enumerate<PhysicalDevice, accel_physical_device_t>(
        [this](uint32_t* count, accel_physical_device_t* array) {
          return accel_instance_enumerate_physical_devices(handle(), count, array);
        });
  }
  std::vector<Backend> backends() const {
    return detail::enumerate<Backend, accel_backend_t>([this](uint32_t* count, accel_backend_t* array) {
      return accel_instance_enumerate_backends(handle(), count, array);
    });
  }

  // The machine's NICs with a PCI address, in PCI order (docs/topology.md);
  // index i is Device::nic_link(i)'s.
  std::vector<accel_nic_properties_t> nics() const {
    uint32_t count = 0;
    check(accel_instance_get_nic_count(handle(), &count));
    std::vector<accel_nic_properties_t> nics;
    nics.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      nics.push_back(detail::sized<accel_nic_properties_t>(ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES));
      check(accel_instance_get_nic(handle(), i, &nics.back()));
    }
    return nics;
  }

  // Every candidate backend the loader considered, loaded or not.
  std::vector<LoaderEntry> loader_report() const {
    uint32_t count = 0;
    check(accel_instance_get_loader_entry_count(handle(), &count));
    std::vector<LoaderEntry> report;
    report.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      auto entry = detail::sized<accel_loader_entry_t>(ACCEL_STRUCTURE_TYPE_LOADER_ENTRY);
      check(accel_instance_get_loader_entry(handle(), i, &entry));
      report.push_back({detail::to_string(entry.backend_name), detail::to_string(entry.manifest_path),
                        detail::to_string(entry.library_path), detail::to_string(entry.reason), entry.state,
                        entry.status, entry.negotiated_abi_version, entry.backend_abi_version, entry.device_count});
    }
    return report;
  }

  // The overrides that named nothing or could not be parsed (docs/loader.md,
  // "Setting warnings"); empty when every setting was used.
  std::vector<LoaderWarning> loader_warnings() const {
    uint32_t count = 0;
    check(accel_instance_get_loader_warning_count(handle(), &count));
    std::vector<LoaderWarning> warnings;
    warnings.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      auto w = detail::sized<accel_loader_warning_t>(ACCEL_STRUCTURE_TYPE_LOADER_WARNING);
      check(accel_instance_get_loader_warning(handle(), i, &w));
      warnings.push_back({detail::to_string(w.setting), detail::to_string(w.value), detail::to_string(w.item),
                          detail::to_string(w.message)});
    }
    return warnings;
  }

 private:
  explicit Instance(accel_instance_t handle) noexcept : Owner(handle) {}
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace detail {

// The C side of Buffer::import_host's release callable: runs it once, then
// deletes it. Exceptions never cross into C: one is swallowed.
template <class Fn>
void release_trampoline(void* user_data) noexcept {
  std::unique_ptr<Fn> fn(static_cast<Fn*>(user_data));
  try {
    std::invoke(*fn);
  } catch (...) {
  }
}

}  // namespace detail

// Owns one buffer on one device; a default-constructed Buffer owns nothing.
// Calls are thread-safe; destroying (or moving) it must not race other calls
// on it. Destruction is stream-ordered: enqueued work still completes.
//
//   accel::Buffer buffer(device, 1024 * sizeof(float));
//   stream.copy_from_host(input.data(), buffer, buffer.size());
//   stream.synchronize();
//   accel::Mapping view(buffer);  // unmapped when `view` goes out of scope
//
//   std::vector<float> host(1024);  // zero-copy: the buffer's bytes are host's
//   accel::Buffer wrapped = accel::Buffer::import_host(device, host.data(), host.size() * sizeof(float));
class Buffer : public detail::Owner<accel_buffer_t, accel_buffer_destroy> {
 public:
  Buffer() noexcept = default;
  Buffer(Device device, uint64_t size, accel_memory_kind_t memory_kind = ACCEL_MEMORY_KIND_DEVICE) : size_(size) {
    auto desc = detail::sized<accel_buffer_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_DESC);
    desc.size = size;
    desc.memory_kind = memory_kind;
    check(accel_buffer_create(device.handle(), &desc, out()));
  }
  // Takes ownership of a handle created through the C API (not taken when
  // this throws).
  static Buffer adopt(accel_buffer_t handle) {
    auto props = detail::sized<accel_buffer_properties_t>(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES);
    check(accel_buffer_get_properties(handle, &props));
    Buffer buffer;
    *buffer.out() = handle;
    buffer.size_ = props.size;
    return buffer;
  }

  // Wraps external memory without copying (docs/interop.md). `desc.release`,
  // if set, runs once when Accel no longer uses the memory; on failure this
  // throws and it never runs.
  static Buffer import(Device device, const accel_buffer_import_desc_t& desc) {
    Buffer buffer;
    check(accel_buffer_import(device.handle(), &desc, buffer.out()));
    buffer.size_ = desc.size;
    return buffer;
  }

  // Wraps `size` bytes at `pointer` (zero-copy). The memory must stay valid
  // until this buffer is destroyed and the work enqueued before that
  // completed. `flags`: 0 or ACCEL_IMPORT_FLAG_READ_ONLY.
  static Buffer import_host(Device device, void* pointer, uint64_t size, uint64_t flags = 0) {
    return import(device, host_import_desc(pointer, size, flags));
  }

  // As above, and runs a copy of `release` once, on any thread, when Accel no
  // longer uses the memory (it must not call back into Accel; an exception it
  // throws is ignored). When the import fails, `release` is destroyed without
  // being called.
  //
  //   float* data = new float[n];
  //   auto buffer = accel::Buffer::import_host(device, data, n * sizeof(float), [data] { delete[] data; });
  template <class F, class = std::enable_if_t<std::is_invocable_v<std::decay_t<F>&>>>
  static Buffer import_host(Device device, void* pointer, uint64_t size, F&& release, uint64_t flags = 0) {
    using Fn = std::decay_t<F>;
    auto owned = std::make_unique<Fn>(std::forward<F>(release));
    accel_buffer_import_desc_t desc = host_import_desc(pointer, size, flags);
    desc.release = &detail::release_trampoline<Fn>;
    desc.release_user_data = owned.get();
    Buffer buffer = import(device, desc);  // throws: `owned` deletes the callable unused
    static_cast<void>(owned.release());    // the trampoline deletes it
    return buffer;
  }

  Buffer(Buffer&& other) noexcept : Owner(std::move(other)), size_(std::exchange(other.size_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    size_ = std::exchange(other.size_, 0);
    Owner::operator=(std::move(other));
    return *this;
  }

  // Bytes, as created.
  uint64_t size() const noexcept { return size_; }

  accel_buffer_properties_t properties() const {
    auto props = detail::sized<accel_buffer_properties_t>(ACCEL_STRUCTURE_TYPE_BUFFER_PROPERTIES);
    check(accel_buffer_get_properties(handle(), &props));
    return props;
  }
  Device device() const { return Device(properties().device); }

  // Maps [offset, offset + size) for host access (one mapping at a time; work
  // on the buffer must be complete). Prefer Mapping, which unmaps for you.
  void* map(uint64_t offset = 0, uint64_t size = whole_size, uint64_t flags = ACCEL_MAP_READ | ACCEL_MAP_WRITE) {
    void* pointer = nullptr;
    check(accel_buffer_map(handle(), offset, size == whole_size ? size_ - offset : size, flags, &pointer));
    return pointer;
  }
  void unmap() { check(accel_buffer_unmap(handle())); }

  // The host address of the first byte, for direct host access without a map
  // (host-backed, unified or imported host memory); ordering with stream work
  // is the caller's. Throws ACCEL_ERROR_UNSUPPORTED for device-only memory.
  void* host_address() const {
    void* address = nullptr;
    check(accel_buffer_get_host_address(handle(), &address));
    return address;
  }

  // The device address of the first byte, for Arg::device_address (devices
  // with ACCEL_DEVICE_FEATURE_DEVICE_ADDRESSES; ACCEL_ERROR_UNSUPPORTED else).
  uint64_t device_address() const {
    uint64_t address = 0;
    check(accel_buffer_get_device_address(handle(), &address));
    return address;
  }

  // The buffer as a native handle of `type`, valid while the buffer lives (a
  // file descriptor is the caller's to close). Named so because `export` is a
  // C++ keyword.
  accel_external_memory_t export_handle(accel_external_memory_type_t type) const {
    auto memory = detail::sized<accel_external_memory_t>(ACCEL_STRUCTURE_TYPE_EXTERNAL_MEMORY);
    check(accel_buffer_export(handle(), type, &memory));
    return memory;
  }

 private:
  static accel_buffer_import_desc_t host_import_desc(void* pointer, uint64_t size, uint64_t flags) noexcept {
    auto desc = detail::sized<accel_buffer_import_desc_t>(ACCEL_STRUCTURE_TYPE_BUFFER_IMPORT_DESC);
    desc.type = ACCEL_EXTERNAL_MEMORY_TYPE_HOST_POINTER;
    desc.handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer));
    desc.size = size;
    desc.flags = flags;
    return desc;
  }

  uint64_t size_ = 0;
};

// A scoped host mapping of a Buffer: maps in its constructor, unmaps in its
// destructor. Used by one thread; it must not outlive the Buffer's handle.
//
//   stream.synchronize();
//   {
//     accel::Mapping view(buffer, 0, accel::whole_size, ACCEL_MAP_READ);
//     const float* values = view.as<const float>();
//   }  // unmapped here
class Mapping {
 public:
  explicit Mapping(Buffer& buffer, uint64_t offset = 0, uint64_t size = whole_size,
                   uint64_t flags = ACCEL_MAP_READ | ACCEL_MAP_WRITE)
      : buffer_(buffer.handle()),
        size_(size == whole_size ? buffer.size() - offset : size),
        data_(buffer.map(offset, size_, flags)) {}
  ~Mapping() {
    if (buffer_ != nullptr) static_cast<void>(accel_buffer_unmap(buffer_));
  }
  Mapping(Mapping&& other) noexcept
      : buffer_(std::exchange(other.buffer_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        data_(std::exchange(other.data_, nullptr)) {}
  Mapping& operator=(Mapping&&) = delete;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  void* data() const noexcept { return data_; }
  uint64_t size() const noexcept { return size_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  accel_buffer_t buffer_;
  uint64_t size_;
  void* data_;
};

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

// Owns an event: a point recorded in a stream that other streams and the host
// wait on. Calls are thread-safe; destroying (or moving) it must not race
// other calls on it.
//
//   accel::Event start(device, ACCEL_EVENT_FLAG_TIMING), end(device, ACCEL_EVENT_FLAG_TIMING);
//   stream.record(start);
//   stream.copy_from_host(data, buffer, size);
//   stream.record(end);
//   end.synchronize();
//   std::chrono::nanoseconds took = accel::Event::elapsed(start, end);
class Event : public detail::Owner<accel_event_t, accel_event_destroy> {
 public:
  Event() noexcept = default;
  explicit Event(Device device, uint64_t flags = 0) {
    auto desc = detail::sized<accel_event_desc_t>(ACCEL_STRUCTURE_TYPE_EVENT_DESC);
    desc.flags = flags;
    check(accel_event_create(device.handle(), &desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static Event adopt(accel_event_t handle) noexcept {
    Event event;
    *event.out() = handle;
    return event;
  }

  // True when complete (or never recorded), false while pending; throws the
  // error the work before it failed with. Never blocks.
  bool query() const { return detail::ready(accel_event_query(handle())); }

  // Waits; true when complete, false when `timeout` passed first; throws the
  // error the work before it failed with.
  bool synchronize(std::chrono::nanoseconds timeout = infinite) const {
    return detail::completed(accel_event_synchronize(handle(), detail::to_timeout_ns(timeout)));
  }

  // Time between two completed events created with ACCEL_EVENT_FLAG_TIMING.
  static std::chrono::nanoseconds elapsed(const Event& start, const Event& end) {
    uint64_t nanoseconds = 0;
    check(accel_event_elapsed_time(start.handle(), end.handle(), &nanoseconds));
    return std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(nanoseconds));
  }
};

//===----------------------------------------------------------------------===//
// Modules and kernels (docs/kernels.md)
//===----------------------------------------------------------------------===//

// Launch geometry along x, y, z; unused dimensions are 1. Converts from one
// number, so `256` means 256x1x1. A plain value.
struct Dim3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;

  constexpr Dim3() noexcept = default;
  constexpr Dim3(uint32_t x_, uint32_t y_ = 1, uint32_t z_ = 1) noexcept : x(x_), y(y_), z(z_) {}  // NOLINT
};

// One form of a module: a blob, a file, or a native-host table, in exactly one
// kernel format. A plain value; c_source() points into it.
//
//   std::vector<accel::ModuleSource> sources = {
//       accel::ModuleSource::from_file(ACCEL_KERNEL_FORMAT_SPIRV_VULKAN, "scale.spv"),
//       accel::ModuleSource::native(kScaleModule),  // an accel_native_module_t
//   };
class ModuleSource {
 public:
  // `size` bytes at `data`, copied or consumed while the Module is created.
  static ModuleSource from_data(accel_kernel_formats_t format, const void* data, uint64_t size,
                                std::string options = {}) {
    ModuleSource source(format, std::move(options));
    source.data_ = data;
    source.size_ = size;
    return source;
  }
  // The blob is read from the file at `path`.
  static ModuleSource from_file(accel_kernel_formats_t format, std::string path, std::string options = {}) {
    ModuleSource source(format, std::move(options));
    source.path_ = std::move(path);
    return source;
  }
  // An in-process native-host table. It is not copied: it and its functions
  // must outlive the Module and its launches (so a temporary is refused).
  static ModuleSource native(const accel_native_module_t& table) {
    return from_data(ACCEL_KERNEL_FORMAT_NATIVE_HOST, &table, sizeof(table));
  }
  static ModuleSource native(const accel_native_module_t&& table) = delete;

  // The C source; its pointers point into *this, valid while it lives unchanged.
  accel_module_source_t c_source() const noexcept {
    auto source = detail::sized<accel_module_source_t>(ACCEL_STRUCTURE_TYPE_MODULE_SOURCE);
    source.format = format_;
    source.data = data_;
    source.size = size_;
    source.path = path_ ? path_->c_str() : nullptr;
    source.options = options_.empty() ? nullptr : options_.c_str();
    return source;
  }

 private:
  ModuleSource(accel_kernel_formats_t format, std::string options) : format_(format), options_(std::move(options)) {}

  accel_kernel_formats_t format_ = 0;
  const void* data_ = nullptr;
  uint64_t size_ = 0;
  std::optional<std::string> path_;
  std::string options_;
};

// One kernel of a loaded Module: a non-owning, copyable handle value, valid
// while its Module lives; every call is thread-safe.
//
//   accel::Kernel scale = module.kernel("scale");
//   for (const accel_kernel_argument_info_t& arg : scale.arguments()) std::puts(arg.name);
class Kernel {
 public:
  Kernel() noexcept = default;
  explicit Kernel(accel_kernel_t handle) noexcept : handle_(handle) {}

  accel_kernel_t handle() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  friend bool operator==(Kernel a, Kernel b) noexcept { return a.handle_ == b.handle_; }
  friend bool operator!=(Kernel a, Kernel b) noexcept { return a.handle_ != b.handle_; }

  // Name, argument count, work-group limits, static local memory.
  accel_kernel_properties_t properties() const {
    auto props = detail::sized<accel_kernel_properties_t>(ACCEL_STRUCTURE_TYPE_KERNEL_PROPERTIES);
    check(accel_kernel_get_properties(handle_, &props));
    return props;
  }
  std::string name() const { return detail::to_string(properties().name); }

  // Argument `index` as the kernel declares it; its name lives as long as the module.
  accel_kernel_argument_info_t argument_info(uint32_t index) const {
    auto info = detail::sized<accel_kernel_argument_info_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARGUMENT_INFO);
    check(accel_kernel_get_argument_info(handle_, index, &info));
    return info;
  }
  // Every argument, in order.
  std::vector<accel_kernel_argument_info_t> arguments() const {
    const uint32_t count = properties().argument_count;
    std::vector<accel_kernel_argument_info_t> arguments;
    arguments.reserve(count);
    for (uint32_t i = 0; i < count; ++i) arguments.push_back(argument_info(i));
    return arguments;
  }

 private:
  accel_kernel_t handle_ = nullptr;
};

// Owns a module loaded on one device from one or several sources (the first
// whose format the device executes wins). Calls are thread-safe; destroying
// (or moving) it must not race other calls on it or its kernels. Destroying
// it makes its Kernel values stale (moving does not); enqueued launches still
// run.
//
//   accel::Module module(device, accel::ModuleSource::native(kModule), "samples");
//   accel::Kernel add = module.kernel("vector_add");
class Module : public detail::Owner<accel_module_t, accel_module_destroy> {
 public:
  Module() noexcept = default;
  Module(Device device, const ModuleSource& source, const std::string& name = {})
      : Module(device, std::vector<ModuleSource>{source}, name) {}
  // Throws ACCEL_ERROR_UNSUPPORTED when no source has a format the device
  // executes (the message lists both sides).
  Module(Device device, const std::vector<ModuleSource>& sources, const std::string& name = {}) {
    std::vector<accel_module_source_t> c_sources;
    c_sources.reserve(sources.size());
    for (const ModuleSource& source : sources) c_sources.push_back(source.c_source());
    auto desc = detail::sized<accel_module_desc_t>(ACCEL_STRUCTURE_TYPE_MODULE_DESC);
    desc.sources = c_sources.data();
    desc.source_count = static_cast<uint32_t>(c_sources.size());
    desc.name = name.empty() ? nullptr : name.c_str();
    check(accel_module_create(device.handle(), &desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static Module adopt(accel_module_t handle) noexcept {
    Module module;
    *module.out() = handle;
    return module;
  }

  // The loaded format and source index, every source's format, kernel count.
  accel_module_properties_t properties() const {
    auto props = detail::sized<accel_module_properties_t>(ACCEL_STRUCTURE_TYPE_MODULE_PROPERTIES);
    check(accel_module_get_properties(handle(), &props));
    return props;
  }
  Device device() const { return Device(properties().device); }

  std::vector<std::string> kernel_names() const {
    const uint32_t count = properties().kernel_count;
    std::vector<std::string> names;
    names.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      check(accel_module_get_kernel_name(handle(), i, &name));
      names.push_back(detail::to_string(name));
    }
    return names;
  }

  // The kernel named `name`; throws ACCEL_ERROR_NOT_FOUND (listing the names
  // the module has) when there is none.
  Kernel kernel(const std::string& name) const {
    accel_kernel_t kernel = nullptr;
    check(accel_module_get_kernel(handle(), name.c_str(), &kernel));
    return Kernel(kernel);
  }
};

// One argument of a launch, built by kind; scalars are copied into the Arg.
// A plain value.
//
//   stream.launch(add, grid, block,
//                 {accel::Arg::buffer(a), accel::Arg::buffer(b), accel::Arg::buffer(c), accel::Arg::scalar(n)});
class Arg {
 public:
  // [offset, offset + size) of `buffer`; whole_size (or 0, as in C) binds to
  // the end. An `access` of 0 means the kernel's declared access.
  static Arg buffer(const Buffer& buffer, uint64_t offset = 0, uint64_t size = whole_size,
                    accel_access_t access = static_cast<accel_access_t>(0)) noexcept {
    Arg arg(ACCEL_KERNEL_ARG_KIND_BUFFER);
    arg.buffer_ = buffer.handle();
    arg.offset_ = offset;
    arg.size_ = size == whole_size ? 0 : size;
    arg.access_ = access;
    return arg;
  }
  // The bytes of `value`, of a size the kernel declares (uint32_t, float, a
  // plain struct).
  template <class T>
  static Arg scalar(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "Arg::scalar: T must be trivially copyable");
    Arg arg(ACCEL_KERNEL_ARG_KIND_SCALAR);
    arg.size_ = sizeof(T);
    arg.bytes_.resize(sizeof(T));
    std::memcpy(arg.bytes_.data(), &value, sizeof(T));
    return arg;
  }
  // `bytes` of work-group local memory.
  static Arg local(uint64_t bytes) noexcept {
    Arg arg(ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
    arg.size_ = bytes;
    return arg;
  }
  // A device address (Buffer::device_address).
  static Arg device_address(uint64_t address) noexcept {
    Arg arg(ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS);
    arg.device_address_ = address;
    return arg;
  }

  accel_kernel_arg_kind_t kind() const noexcept { return kind_; }

  // The C argument; a scalar's value points into *this, valid while it lives unchanged.
  accel_kernel_arg_t c_arg() const noexcept {
    auto arg = detail::sized<accel_kernel_arg_t>(ACCEL_STRUCTURE_TYPE_KERNEL_ARG);
    arg.kind = kind_;
    arg.access = access_;
    arg.buffer = buffer_;
    arg.offset = offset_;
    arg.size = size_;
    arg.value = bytes_.empty() ? nullptr : bytes_.data();
    arg.device_address = device_address_;
    return arg;
  }

 private:
  explicit Arg(accel_kernel_arg_kind_t kind) noexcept : kind_(kind) {}

  accel_kernel_arg_kind_t kind_;
  accel_access_t access_ = static_cast<accel_access_t>(0);
  accel_buffer_t buffer_ = nullptr;
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
  uint64_t device_address_ = 0;
  std::vector<unsigned char> bytes_;
};

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

namespace detail {

// The C side of Stream::host_callback: runs the heap-allocated callable once,
// then deletes it. Exceptions never cross into C: one becomes
// ACCEL_ERROR_INTERNAL, the stream's asynchronous error.
template <class Fn>
accel_status_t host_callback_trampoline(void* user_data, accel_status_t status) noexcept {
  std::unique_ptr<Fn> fn(static_cast<Fn*>(user_data));
  if (status != ACCEL_SUCCESS) return status;  // skipped after an earlier error: only free the callable
  try {
    if constexpr (std::is_same_v<std::invoke_result_t<Fn&>, accel_status_t>) {
      return std::invoke(*fn);
    } else {
      std::invoke(*fn);
      return ACCEL_SUCCESS;
    }
  } catch (...) {
    return ACCEL_ERROR_INTERNAL;
  }
}

}  // namespace detail

namespace detail {

// The launch descriptor of `grid`, `block` and `c_args` (which it points into).
inline accel_launch_desc_t launch_desc(Dim3 grid, Dim3 block, const std::vector<accel_kernel_arg_t>& c_args) {
  auto desc = sized<accel_launch_desc_t>(ACCEL_STRUCTURE_TYPE_LAUNCH_DESC);
  desc.grid[0] = grid.x;
  desc.grid[1] = grid.y;
  desc.grid[2] = grid.z;
  desc.block[0] = block.x;
  desc.block[1] = block.y;
  desc.block[2] = block.z;
  desc.args = c_args.empty() ? nullptr : c_args.data();
  desc.arg_count = static_cast<uint32_t>(c_args.size());
  return desc;
}

inline std::vector<accel_kernel_arg_t> c_args(const Arg* args, std::size_t count) {
  std::vector<accel_kernel_arg_t> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.push_back(args[i].c_arg());
  return out;
}

}  // namespace detail

// Owns a launch checked once and enqueued any number of times with
// Stream::launch (docs/kernels.md, "Prepared launches"): the arguments are
// checked and copied when it is made; it keeps the kernel and the buffers
// alive. Immutable, so every call is thread-safe; destroying (or moving) it
// must not race other calls on it. Launches already enqueued still run.
//
//   accel::PreparedLaunch step(kernel, blocks, 256, {accel::Arg::buffer(state), accel::Arg::scalar(n)});
//   for (int i = 0; i < steps; ++i) stream.launch(step);
class PreparedLaunch : public detail::Owner<accel_prepared_launch_t, accel_prepared_launch_destroy> {
 public:
  PreparedLaunch() noexcept = default;
  PreparedLaunch(const Kernel& kernel, Dim3 grid, Dim3 block, std::initializer_list<Arg> args)
      : PreparedLaunch(kernel, grid, block, args.begin(), args.size()) {}
  PreparedLaunch(const Kernel& kernel, Dim3 grid, Dim3 block, const std::vector<Arg>& args)
      : PreparedLaunch(kernel, grid, block, args.data(), args.size()) {}
  PreparedLaunch(const Kernel& kernel, Dim3 grid, Dim3 block, const Arg* args, std::size_t count) {
    const std::vector<accel_kernel_arg_t> c_args = detail::c_args(args, count);
    const accel_launch_desc_t desc = detail::launch_desc(grid, block, c_args);
    check(accel_kernel_prepare_launch(kernel.handle(), &desc, out()));
  }
};

// Owns an in-order stream of work on one device. Enqueueing is thread-safe;
// destroying (or moving) it must not race other calls on it, and the
// destructor waits for the enqueued work.
//
//   accel::Stream stream(device);
//   stream.fill(buffer, uint32_t{0});
//   stream.launch(kernel, (n + 255) / 256, 256, {accel::Arg::buffer(buffer), accel::Arg::scalar(n)});
//   stream.copy_to_host(buffer, host.data(), buffer.size());
//   stream.host_callback([&] { std::puts("copied"); });
//   stream.synchronize();
class Stream : public detail::Owner<accel_stream_t, accel_stream_destroy> {
 public:
  Stream() noexcept = default;
  explicit Stream(Device device, int32_t priority = 0) {
    auto desc = detail::sized<accel_stream_desc_t>(ACCEL_STRUCTURE_TYPE_STREAM_DESC);
    desc.priority = priority;
    check(accel_stream_create(device.handle(), &desc, out()));
  }
  // Takes ownership of a handle created through the C API.
  static Stream adopt(accel_stream_t handle) noexcept {
    Stream stream;
    *stream.out() = handle;
    return stream;
  }

  // Host memory must stay valid until the copy completes.
  void copy_from_host(const void* src, Buffer& dst, uint64_t size, uint64_t dst_offset = 0) {
    check(accel_stream_copy_host_to_buffer(handle(), src, dst.handle(), dst_offset, size));
  }
  void copy_to_host(const Buffer& src, void* dst, uint64_t size, uint64_t src_offset = 0) {
    check(accel_stream_copy_buffer_to_host(handle(), src.handle(), src_offset, dst, size));
  }
  void copy(const Buffer& src, Buffer& dst, uint64_t size, uint64_t src_offset = 0, uint64_t dst_offset = 0) {
    check(accel_stream_copy_buffer(handle(), src.handle(), src_offset, dst.handle(), dst_offset, size));
  }

  // Fills [offset, offset + size) with a 1, 2 or 4 byte pattern (copied now).
  template <class T>
  void fill(Buffer& buffer, const T& pattern, uint64_t offset = 0, uint64_t size = whole_size) {
    static_assert(std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4),
                  "fill: the pattern must be a plain 1, 2 or 4 byte value");
    check(accel_stream_fill_buffer(handle(), buffer.handle(), offset,
                                   size == whole_size ? buffer.size() - offset : size, &pattern,
                                   static_cast<uint32_t>(sizeof(T))));
  }

  // Enqueues a copy of `callable`, run once on the stream's worker in stream
  // order, then destroyed. It may return accel_status_t (an error becomes the
  // stream's asynchronous error) or nothing; a thrown exception becomes
  // ACCEL_ERROR_INTERNAL. It must not block on later work of this stream.
  // Skipped after an earlier asynchronous error, it is destroyed without
  // being called.
  template <class F>
  void host_callback(F&& callable) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "host_callback: the callable must take no arguments");
    auto owned = std::make_unique<Fn>(std::forward<F>(callable));
    check(accel_stream_enqueue_host_callback(handle(), &detail::host_callback_trampoline<Fn>, owned.get()));
    static_cast<void>(owned.release());  // the trampoline deletes it
  }

  // Stream-ordered free: the handle goes now, the memory once the work
  // enqueued before this call completes. `buffer` is left empty; on failure
  // it still owns its handle.
  void free(Buffer&& buffer) {
    check(accel_stream_free_buffer(handle(), buffer.handle()));
    static_cast<void>(buffer.release());
    buffer = Buffer();
  }

  // Enqueues `kernel` over `grid` work-groups of `block` work-items, with one
  // Arg per declared argument (docs/kernels.md). Arguments are checked and
  // copied now; errors while it runs land on the stream.
  void launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::initializer_list<Arg> args) {
    launch(kernel, grid, block, args.begin(), args.size());
  }
  void launch(const Kernel& kernel, Dim3 grid, Dim3 block, const std::vector<Arg>& args) {
    launch(kernel, grid, block, args.data(), args.size());
  }
  void launch(const Kernel& kernel, Dim3 grid, Dim3 block, const Arg* args, std::size_t count) {
    const std::vector<accel_kernel_arg_t> c_args = detail::c_args(args, count);
    const accel_launch_desc_t desc = detail::launch_desc(grid, block, c_args);
    check(accel_stream_launch_kernel(handle(), kernel.handle(), &desc));
  }
  // Enqueues `prepared` once, as the launch it was made from.
  void launch(const PreparedLaunch& prepared) { check(accel_stream_launch_prepared(handle(), prepared.handle())); }

  void record(Event& event) { check(accel_stream_record_event(handle(), event.handle())); }
  // Later work on this stream waits for `event` as last recorded.
  void wait(const Event& event) { check(accel_stream_wait_event(handle(), event.handle())); }

  // True when all enqueued work completed, false while some is pending;
  // throws the stream's asynchronous error. Never blocks.
  bool query() const { return detail::ready(accel_stream_query(handle())); }

  // Waits for the enqueued work; true when complete, false when `timeout`
  // passed first; throws the stream's asynchronous error.
  bool synchronize(std::chrono::nanoseconds timeout = infinite) const {
    return detail::completed(accel_stream_synchronize(handle(), detail::to_timeout_ns(timeout)));
  }

  // Clears an asynchronous error so later work runs again.
  void clear_error() { check(accel_stream_clear_error(handle())); }
};

}  // namespace accel

#endif  // ACCEL_ACCEL_HPP_
