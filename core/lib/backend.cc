#include "backend.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "identity.h"
#include "manifest.h"

namespace accel::core {
namespace {

std::string VersionString(uint32_t v) { return fmt::format("{}.{}", ACCEL_VERSION_MAJOR(v), ACCEL_VERSION_MINOR(v)); }

// The table's header, read before its size is checked against ABI 1.0's (a table of another major may be smaller).
constexpr size_t kTableHeaderSize = offsetof(accel_backend_api_t, abi_version) + sizeof(uint32_t);

// The smallest table this core accepts: everything up to the last REQUIRED slot.
constexpr size_t kMinTableSize =
    offsetof(accel_backend_api_t, device_get_capabilities) + sizeof(accel_backend_api_t::device_get_capabilities);

}  // namespace

void Backend::HostLog(void* context, accel_log_level_t level, const char* message) {
  auto* c = static_cast<HostContext*>(context);
  if (c == nullptr || c->log == nullptr || message == nullptr) return;
  c->log->Log(level, "{}: {}", c->name, message);
}

void Backend::HostSetError(void* /*context*/, accel_status_t status, const char* message) {
  SetBackendMessage(status, message);
}

void* Backend::HostAlloc(void* /*context*/, size_t size, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  return p;
}

void Backend::HostFree(void* /*context*/, void* pointer) { std::free(pointer); }

const char* Backend::HostGetSetting(void* context, const char* name) {
  auto* host = static_cast<HostContext*>(context);
  if (host == nullptr || name == nullptr || std::strncmp(name, "ACCEL_", 6) != 0 || !host->use_environment) {
    return nullptr;
  }
  std::lock_guard lock(host->settings_mutex);
  auto it = host->settings.find(name);
  if (it == host->settings.end()) {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use of the environment
    it = host->settings.emplace(name, value != nullptr ? std::optional<std::string>(value) : std::nullopt).first;
  }
  return it->second ? it->second->c_str() : nullptr;
}

Status Backend::ListNics(std::vector<accel_nic_properties_t>* out) const {
  accel_nic_properties_t blank{};
  blank.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
  blank.struct_size = sizeof(blank);
  blank.numa_node = -1;
  Status s = Enumerate("context_get_nics", api_.context_get_nics, context_, kMaxBackendNics, blank, out);
  if (!s.ok()) return s;
  for (auto& nic : *out) {
    nic.stype = ACCEL_STRUCTURE_TYPE_NIC_PROPERTIES;
    nic.struct_size = sizeof(nic);
    nic.next = nullptr;
    nic.name[sizeof(nic.name) - 1] = '\0';
    nic.kind[sizeof(nic.kind) - 1] = '\0';
    nic.pci_bus_id[sizeof(nic.pci_bus_id) - 1] = '\0';
    nic.pcie_root[sizeof(nic.pcie_root) - 1] = '\0';
  }
  return Status::Ok();
}

Status Backend::FailedSlot(const char* slot_name, accel_status_t status) const {
  std::string message = TakeBackendMessage();
  if (message.empty()) message = fmt::format("backend '{}' {} failed with {}", name_, slot_name, StatusName(status));
  return Status(status, std::move(message));
}

std::shared_ptr<Backend> Backend::Load(const Candidate& candidate, const Logger* log, const LoaderSettings& settings,
                                       LoadReport* report) {
  report->backend_name = candidate.name;
  report->manifest_path = candidate.manifest_path;
  report->library_path = candidate.library_path;
  std::shared_ptr<Backend> backend(new Backend());
  backend->host_context_.log = log;
  backend->host_context_.name = candidate.name;
  Status s = backend->Open(candidate, settings, report);
  if (!s.ok()) {
    report->state = ACCEL_LOADER_STATE_FAILED;
    report->status = s.code();
    report->reason = s.message();
    log->Log(ACCEL_LOG_LEVEL_WARN, "loader: {}: {}",
             candidate.library_path.empty() ? candidate.manifest_path : candidate.library_path, s.message());
    backend->Shutdown();
    return nullptr;
  }
  report->state = ACCEL_LOADER_STATE_LOADED;
  report->status = ACCEL_SUCCESS;
  report->backend_name = backend->name_;
  report->device_count = static_cast<uint32_t>(backend->devices_.size());
  log->Log(ACCEL_LOG_LEVEL_INFO, "loader: loaded backend '{}' {} (ABI {}) from {} with {} device(s)", backend->name_,
           backend->version_, VersionString(backend->abi_version_), backend->library_path_, backend->devices_.size());
  return backend;
}

Status Backend::OpenLibrary(const Candidate& candidate, LoadReport* report) {
  library_path_ = candidate.library_path;
  Status trusted = CheckFileTrusted(library_path_, "library");
  const bool search = trusted.code() == ACCEL_ERROR_NOT_FOUND && !candidate.library_search_name.empty();
  if (!trusted.ok() && !search) return trusted;
  dlerror();
  const std::string& opened = search ? candidate.library_search_name : library_path_;
  library_ = dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* why = dlerror();
    if (search) {
      return Error(ACCEL_ERROR_NOT_FOUND,
                   "library '{}' is not next to the manifest ({}) and the system library search found none: {}", opened,
                   library_path_, why != nullptr ? why : "unknown error");
    }
    return Error(ACCEL_ERROR_BACKEND_UNAVAILABLE, "dlopen failed: {}", why != nullptr ? why : "unknown error");
  }
  if (search) {
    // Found on the system search path: the file it found must pass the same
    // trust check (docs/loader.md, "Trust").
    const link_map* map = nullptr;
    if (dlinfo(library_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
      return Error(ACCEL_ERROR_INTERNAL, "library '{}': dlinfo cannot say which file was loaded", opened);
    }
    library_path_ = map->l_name;
    report->library_path = library_path_;
    return CheckFileTrusted(library_path_, "library");
  }
  return Status::Ok();
}

Status Backend::Open(const Candidate& candidate, const LoaderSettings& settings, LoadReport* report) {
  Status opened = OpenLibrary(candidate, report);
  if (!opened.ok()) return opened;
  dlerror();
  void* symbol = dlsym(library_, ACCEL_BACKEND_ENTRY_POINT_NAME);
  if (symbol == nullptr) {
    const char* why = dlerror();
    return Error(ACCEL_ERROR_NOT_FOUND, "library does not export {} ({})", ACCEL_BACKEND_ENTRY_POINT_NAME,
                 why != nullptr ? why : "symbol is NULL");
  }
  auto get_api = reinterpret_cast<accel_backend_get_api_fn>(symbol);

  if (settings.cache_dir) cache_dir_ = *settings.cache_dir;
  machine_id_ = MachineId();
  services_.stype = ACCEL_STRUCTURE_TYPE_HOST_SERVICES;
  services_.struct_size = sizeof(services_);
  services_.context = &host_context_;
  services_.log = &Backend::HostLog;
  services_.set_error = &Backend::HostSetError;
  services_.allocate = &Backend::HostAlloc;
  services_.deallocate = &Backend::HostFree;
  services_.cache_dir = cache_dir_.empty() ? nullptr : cache_dir_.c_str();
  services_.machine_id = machine_id_.c_str();
  services_.get_setting = &Backend::HostGetSetting;
  host_context_.use_environment = settings.use_environment;

  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);
  args.core_abi_version_min = kCoreBackendAbiMin;
  args.core_abi_version_max = kCoreBackendAbiMax;
  args.host = &services_;
  ClearBackendMessage();
  accel_status_t s = get_api(&args);
  std::string backend_message = TakeBackendMessage();
  if (s < 0) {
    return Status(s, backend_message.empty()
                         ? fmt::format("{} returned {}", ACCEL_BACKEND_ENTRY_POINT_NAME, StatusName(s))
                         : fmt::format("{} failed: {}", ACCEL_BACKEND_ENTRY_POINT_NAME, backend_message));
  }
  const accel_backend_api_t* table = args.out_api;
  if (table == nullptr) {
    return Error(ACCEL_ERROR_INTERNAL, "{} succeeded but returned no function table", ACCEL_BACKEND_ENTRY_POINT_NAME);
  }
  if (table->stype != ACCEL_STRUCTURE_TYPE_BACKEND_API) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION, "function table has stype {}, expected {}", table->stype,
                 ACCEL_STRUCTURE_TYPE_BACKEND_API);
  }
  if (table->struct_size < kTableHeaderSize) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION, "function table is {} bytes, smaller than its {}-byte header",
                 table->struct_size, kTableHeaderSize);
  }
  report->backend_abi_version = table->abi_version;
  if (ACCEL_VERSION_MAJOR(table->abi_version) != ACCEL_BACKEND_ABI_VERSION_MAJOR ||
      ACCEL_VERSION_MAJOR(args.out_abi_version) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION,
                 "backend implements ABI {} and answered {}; this core speaks {} to {} (the major must match)",
                 VersionString(table->abi_version), VersionString(args.out_abi_version),
                 VersionString(kCoreBackendAbiMin), VersionString(kCoreBackendAbiMax));
  }
  if (args.out_abi_version < kCoreBackendAbiMin || args.out_abi_version > kCoreBackendAbiMax ||
      args.out_abi_version > table->abi_version) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION,
                 "backend answered ABI {}, outside what this core speaks ({} to {}) or what its table implements ({})",
                 VersionString(args.out_abi_version), VersionString(kCoreBackendAbiMin),
                 VersionString(kCoreBackendAbiMax), VersionString(table->abi_version));
  }
  if (table->struct_size < kMinTableSize) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION,
                 "function table is {} bytes, smaller than the {} bytes ABI 1.0 needs", table->struct_size,
                 kMinTableSize);
  }
  std::memcpy(&api_, table, std::min<size_t>(table->struct_size, sizeof(api_)));
  api_.struct_size = sizeof(api_);
  abi_version_ = args.out_abi_version;
  report->negotiated_abi_version = abi_version_;

  struct Required {
    const char* name;
    bool present;
  };
  const Required required[] = {{"context_create", api_.context_create != nullptr},
                               {"context_destroy", api_.context_destroy != nullptr},
                               {"context_get_devices", api_.context_get_devices != nullptr},
                               {"device_get_capabilities", api_.device_get_capabilities != nullptr}};
  for (const Required& r : required) {
    if (!r.present) return Error(ACCEL_ERROR_UNIMPLEMENTED, "required slot '{}' is NULL", r.name);
  }
  std::string table_name = api_.name != nullptr ? api_.name : "";
  if (table_name.empty()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "function table has no backend name");
  if (candidate.name.empty() && !IsBackendName(table_name)) {
    // A library named directly goes by the name it reports: the manifest's rule applies to it (the name becomes
    // part of device ids, settings names and selections).
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "function table names the backend \"{}\", which is not 1-31 lowercase letters, digits or '_', "
                 "starting with a letter",
                 table_name.size() > 64 ? table_name.substr(0, 64) + "..." : table_name);
  }
  name_ = candidate.name.empty() ? table_name : candidate.name;
  if (!candidate.name.empty() && table_name != candidate.name) {
    host_context_.log->Log(ACCEL_LOG_LEVEL_WARN,
                           "loader: manifest names backend '{}' but the library calls itself '{}'", candidate.name,
                           table_name);
  }
  host_context_.name = name_;
  version_ = api_.version != nullptr ? api_.version : "";

  accel_bk_context_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC;
  desc.struct_size = sizeof(desc);
  desc.host = &services_;
  desc.abi_version = abi_version_;
  Status created = Call("context_create", api_.context_create, &desc, &context_);
  if (!created.ok()) {
    context_ = nullptr;
    return Status(created.code(), "initialisation failed: " + created.message());
  }
  Status listed = Enumerate("context_get_devices", api_.context_get_devices, context_, kMaxBackendDevices,
                            accel_bk_device_t{nullptr}, &devices_);
  for (size_t i = 0; listed.ok() && i < devices_.size(); ++i) {
    if (devices_[i] == nullptr) {
      listed = Error(ACCEL_ERROR_INTERNAL, "backend '{}' context_get_devices listed device {} as NULL", name_, i);
    }
  }
  if (!listed.ok()) {
    devices_.clear();
    return Status(listed.code(), "device enumeration failed: " + listed.message());
  }
  return Status::Ok();
}

void Backend::BeginHelperDestroy() {
  std::lock_guard lock(helpers_mutex_);
  ++helpers_;
}

void Backend::EndHelperDestroy() {
  {
    std::lock_guard lock(helpers_mutex_);
    --helpers_;
  }
  helpers_done_.notify_all();
}

void Backend::Shutdown() {
  {
    std::unique_lock lock(helpers_mutex_);
    helpers_done_.wait(lock, [this] { return helpers_ == 0; });
  }
  devices_.clear();
  if (context_ != nullptr && api_.context_destroy != nullptr) api_.context_destroy(context_);
  context_ = nullptr;
  if (library_ != nullptr) dlclose(library_);
  library_ = nullptr;
}

Backend::~Backend() { Shutdown(); }

}  // namespace accel::core
