#include "instance.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "capabilities.h"
#include "identity.h"
#include "manifest.h"
#include "objects.h"
#include "selector.h"
#include "tenant.h"

namespace accel::core {
namespace {

void CopyString(char* dst, size_t size, const std::string& src) {
  size_t n = std::min(size - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

std::string FieldString(const char* field, size_t size) { return std::string(field, strnlen(field, size)); }

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

uint64_t HostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

uint32_t HostCpuCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 0;
}

// The identity keys of one access path: "uuid:<hex>" and "pci:<bus id>".
std::vector<std::string> IdentityKeys(const accel_device_capabilities_t& c) {
  std::vector<std::string> keys;
  const bool simulated = (c.flags & ACCEL_DEVICE_FLAG_SIMULATED) != 0;
  bool has_uuid = false;
  for (uint8_t b : c.uuid) has_uuid = has_uuid || b != 0;
  if ((c.flags & ACCEL_DEVICE_FLAG_UUID_UNIQUE) != 0 && has_uuid) {
    keys.push_back("uuid:" + std::string(reinterpret_cast<const char*>(c.uuid), sizeof(c.uuid)));
  }
  std::string bus = FieldString(c.pci_bus_id, sizeof(c.pci_bus_id));
  if (!simulated && c.kind != ACCEL_DEVICE_KIND_CPU && !bus.empty()) keys.push_back("pci:" + bus);
  return keys;
}

// Union of access paths that share an identity key; every member of a group
// gets the group's physical id (a UUID-derived one where there is one).
void MergeAccessPaths(std::vector<std::shared_ptr<Device>>& all) {
  std::vector<size_t> parent(all.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < all.size(); ++i) {
    for (const std::string& key : IdentityKeys(all[i]->caps)) {
      auto [it, inserted] = owner.emplace(key, i);
      if (!inserted) parent[find(i)] = find(it->second);
    }
  }
  // Per group: the first member's id, replaced by the first UUID-derived one.
  std::map<size_t, std::pair<std::string, bool>> chosen;
  for (size_t i = 0; i < all.size(); ++i) {
    auto& [id, from_uuid] = chosen[find(i)];
    const std::vector<std::string> keys = IdentityKeys(all[i]->caps);
    const bool uuid_id = !keys.empty() && keys[0].rfind("uuid:", 0) == 0;
    if (id.empty() || (uuid_id && !from_uuid)) {
      id = all[i]->physical_id;
      from_uuid = uuid_id;
    }
  }
  for (size_t i = 0; i < all.size(); ++i) all[i]->physical_id = chosen[find(i)].first;
}

// The physical device's own memory and compute units over `paths` (one
// chip): the largest any path reports, and for the host's CPU the host's
// figures, not each API's self-imposed limits (docs/devices.md).
std::pair<uint64_t, uint32_t> PhysicalFigures(const std::vector<std::shared_ptr<Device>>& paths) {
  const accel_device_capabilities_t& first = paths[0]->caps;
  if (first.kind == ACCEL_DEVICE_KIND_CPU && (first.flags & ACCEL_DEVICE_FLAG_SIMULATED) == 0) {
    return {HostMemoryBytes(), HostCpuCount()};
  }
  uint64_t memory = 0;
  uint32_t compute_units = 0;
  for (const auto& p : paths) {
    memory = std::max(memory, p->caps.memory_total);
    compute_units = std::max(compute_units, p->caps.compute_units);
  }
  return {memory, compute_units};
}

// Whether an ACCEL_VISIBLE_DEVICES value is a selector rather than a list of
// indices and ids (docs/selectors.md): it starts with "sel:" or contains a
// character no index or stable id has.
bool IsSelectorMask(std::string_view value) {
  return value.rfind("sel:", 0) == 0 || value.find_first_of("=<>!&|():\"'") != std::string_view::npos;
}

}  // namespace

selector::MapAttributes PhysicalAttributes(const std::vector<std::shared_ptr<Device>>& paths, const std::string& id) {
  selector::MapAttributes attributes = selector::CapabilityAttributes(paths[0]->caps);
  for (size_t p = 1; p < paths.size(); ++p) selector::MergeAccessPath(attributes, paths[p]->caps);
  attributes.Set("stable_id", id);
  attributes.Set("physical_device_id", id);
  const auto [memory, compute_units] = PhysicalFigures(paths);
  attributes.Set("memory_total", memory);
  attributes.Set("compute_units", uint64_t{compute_units});
  return attributes;
}

Expected<std::shared_ptr<Instance>> Instance::Create(const accel_instance_desc_t& desc) {
  std::shared_ptr<Instance> instance(new Instance());
  const bool privileged = ProcessIsPrivileged();
  const bool use_env = (desc.flags & ACCEL_INSTANCE_FLAG_IGNORE_ENVIRONMENT) == 0 && !privileged;
  LoaderSettings settings;
  auto pick = [&](const char* field, const char* variable, const char* field_name) -> std::optional<std::string> {
    if (field != nullptr) {
      settings.origin[variable] = std::string("desc->") + field_name;
      return std::string(field);
    }
    if (use_env) {
      const char* value = std::getenv(variable);
      if (value != nullptr) return std::string(value);
    }
    return std::nullopt;
  };

  accel_log_level_t level = desc.log_level;
  const std::optional<std::string> log_setting = pick(nullptr, "ACCEL_LOG", "");
  const bool log_unknown = log_setting && !log_setting->empty() &&
                           Logger::ParseLevel(log_setting->c_str(), static_cast<accel_log_level_t>(-1)) ==
                               static_cast<accel_log_level_t>(-1);
  if (level == ACCEL_LOG_LEVEL_OFF && log_setting) level = Logger::ParseLevel(log_setting->c_str(), level);
  instance->log_ = Logger(level, desc.log_callback, desc.log_user_data);
  if (privileged) {
    instance->log_.Log(ACCEL_LOG_LEVEL_WARN, "loader: privileged process: ACCEL_* environment variables are ignored");
  }
  if (log_unknown) {
    instance->Warn(settings, "ACCEL_LOG", *log_setting, "",
                   fmt::format("'{}' is not a log level (off, error, warn, info, debug): logging stays {}",
                               *log_setting, level == ACCEL_LOG_LEVEL_OFF ? "off" : "at the description's level"));
  }

  settings.privileged = privileged;
  settings.use_environment = use_env;
  settings.backend_files = pick(desc.backend_files, "ACCEL_BACKEND_FILES", "backend_files");
  settings.add_backend_files = pick(desc.add_backend_files, "ACCEL_ADD_BACKEND_FILES", "add_backend_files");
  settings.backends = pick(desc.backends, "ACCEL_BACKENDS", "backends");
  settings.visible_devices = pick(desc.visible_devices, "ACCEL_VISIBLE_DEVICES", "visible_devices");
  settings.cache_dir = pick(nullptr, "ACCEL_CACHE_DIR", "");
  settings.topology_domains = pick(nullptr, "ACCEL_TOPOLOGY_DOMAINS", "");
  // Domains above the node: the machine's files, then the environment's levels over them.
  const std::string domain_dir = pick(nullptr, "ACCEL_TOPOLOGY_CONFIG_DIR", "").value_or("/etc/accel/topology.d");
  instance->domains_ = ReadDomainFiles(domain_dir, instance->log_);
  if (settings.topology_domains) {
    std::vector<std::pair<std::string, std::string>> ignored;
    instance->domains_ = MergeDomains(instance->domains_, ParseDomains(*settings.topology_domains, &ignored));
    for (auto& [entry, why] : ignored) {
      instance->Warn(settings, "ACCEL_TOPOLOGY_DOMAINS", *settings.topology_domains, entry, std::move(why));
    }
  }

  instance->CheckFileSettings(settings);
  instance->LoadBackends(settings);
  instance->CheckBackendSelection(settings);
  instance->BuildRegistry(settings);
  return instance;
}

void Instance::Warn(const LoaderSettings& settings, const std::string& variable, const std::string& value,
                    std::string item, std::string message) {
  SettingWarning w{settings.SettingName(variable), value, std::move(item), std::move(message)};
  log_.Log(ACCEL_LOG_LEVEL_WARN, "loader: {}={}: {}", w.setting, w.value, w.message);
  warnings_.push_back(std::move(w));
}

void Instance::CheckFileSettings(const LoaderSettings& settings) {
  const std::pair<const char*, const std::optional<std::string>*> lists[] = {
      {"ACCEL_BACKEND_FILES", &settings.backend_files}, {"ACCEL_ADD_BACKEND_FILES", &settings.add_backend_files}};
  for (const auto& [variable, list] : lists) {
    if (!*list) continue;
    const std::vector<std::string> files = SplitList(**list, ':');
    if (files.empty() && std::string(variable) == "ACCEL_BACKEND_FILES") {
      Warn(settings, variable, **list, "", "names no file: nothing is searched for and no backend is loaded");
    }
    for (const std::string& file : files) {
      std::error_code ec;
      const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
      if (!ec && !std::filesystem::exists(absolute, ec)) {
        Warn(settings, variable, **list, file,
             fmt::format("'{}' does not exist ({})", file, absolute.lexically_normal().string()));
      }
    }
  }
}

void Instance::CheckBackendSelection(const LoaderSettings& settings) {
  if (!settings.backends) return;
  std::set<std::string> found;
  for (const LoadReport& r : reports_) {
    if (!r.backend_name.empty()) found.insert(r.backend_name);
  }
  std::string found_list;
  for (const std::string& name : found) found_list += (found_list.empty() ? "" : ", ") + name;
  for (const std::string& item : SplitList(*settings.backends, ',')) {
    const std::string name = !item.empty() && item[0] == '-' ? item.substr(1) : item;
    if (!IsBackendName(name)) {
      Warn(settings, "ACCEL_BACKENDS", *settings.backends, item,
           fmt::format("'{}' is not a backend name (1-31 lowercase letters, digits or '_', starting with a letter)",
                       name));
    } else if (found.count(name) == 0) {
      Warn(settings, "ACCEL_BACKENDS", *settings.backends, item,
           fmt::format("'{}' names no backend that was found ({})", name,
                       found.empty() ? "none was found" : "found: " + found_list));
    }
  }
}

void Instance::LoadBackends(const LoaderSettings& settings) {
  std::set<std::string> loaded_names;
  for (const Candidate& candidate : DiscoverBackends(settings, log_)) {
    LoadReport report;
    report.backend_name = candidate.name;
    report.manifest_path = candidate.manifest_path;
    report.library_path = candidate.library_path;
    if (candidate.skipped) {
      report.state = ACCEL_LOADER_STATE_SKIPPED;
      report.reason = candidate.error.message();
      log_.Log(ACCEL_LOG_LEVEL_DEBUG, "loader: {}: {}", candidate.manifest_path, report.reason);
      reports_.push_back(std::move(report));
      continue;
    }
    if (!candidate.error.ok()) {
      report.state = ACCEL_LOADER_STATE_FAILED;
      report.status = candidate.error.code();
      report.reason = candidate.error.message();
      log_.Log(ACCEL_LOG_LEVEL_WARN, "loader: {}", report.reason);
      reports_.push_back(std::move(report));
      continue;
    }
    if (!candidate.name.empty() && loaded_names.count(candidate.name) != 0) {
      // A library named directly earlier already reported this name.
      report.state = ACCEL_LOADER_STATE_SKIPPED;
      report.reason = fmt::format("skipped: a backend named '{}' was loaded earlier", candidate.name);
      reports_.push_back(std::move(report));
      continue;
    }
    std::shared_ptr<Backend> backend = Backend::Load(candidate, &log_, settings, &report);
    if (backend && candidate.name.empty()) {
      // A library named directly: selection and duplicates apply by the name it reports.
      std::optional<std::string> why = DeselectionReason(settings.backends, backend->name());
      if (!why && loaded_names.count(backend->name()) != 0) {
        why = fmt::format("skipped: a backend named '{}' was loaded earlier", backend->name());
      }
      if (why) {
        backend->Shutdown();
        backend.reset();
        report.state = ACCEL_LOADER_STATE_SKIPPED;
        report.reason = *why;
        report.device_count = 0;
      }
    }
    if (backend) {
      backend->owner = this;
      loaded_names.insert(backend->name());
      backends_.push_back(std::move(backend));
    }
    reports_.push_back(std::move(report));
  }
}

void Instance::BuildRegistry(const LoaderSettings& settings) {
  // 1. Every backend device with its descriptor.
  std::vector<std::shared_ptr<Device>> all;
  for (size_t b = 0; b < backends_.size(); ++b) {
    const std::shared_ptr<Backend>& backend = backends_[b];
    const auto& bk_devices = backend->devices();
    for (uint32_t i = 0; i < bk_devices.size(); ++i) {
      auto device = std::make_shared<Device>();
      device->instance = this;
      device->backend = backend;
      device->bk = bk_devices[i];
      device->backend_index = i;
      device->caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
      device->caps.struct_size = sizeof(device->caps);
      device->caps.numa_node = -1;
      Status s = ACCEL_SLOT(*backend, device_get_capabilities, device->bk, &device->caps);
      device->caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
      device->caps.struct_size = sizeof(device->caps);
      device->caps.next = nullptr;
      if (!s.ok()) {
        log_.Log(ACCEL_LOG_LEVEL_WARN, "registry: backend '{}' device {}: capabilities unavailable: {}",
                 backend->name(), i, s.message());
        for (LoadReport& r : reports_) {
          if (r.state == ACCEL_LOADER_STATE_LOADED && r.backend_name == backend->name()) {
            r.reason += fmt::format("{}device {} dropped: {}", r.reason.empty() ? "" : "; ", i, s.message());
          }
        }
        continue;
      }
      // Every string the backend wrote ends inside its field (the caller prints them with %s).
      auto terminate = [](auto& field) { field[sizeof(field) - 1] = '\0'; };
      terminate(device->caps.name);
      terminate(device->caps.vendor);
      terminate(device->caps.architecture);
      terminate(device->caps.sku);
      terminate(device->caps.driver_version);
      terminate(device->caps.pci_bus_id);
      CopyString(device->caps.backend_name, sizeof(device->caps.backend_name), backend->name());
      device->physical_id = PhysicalDeviceId(device->caps, backend->name(), i, MachineId());
      all.push_back(std::move(device));
    }
  }

  // 2. Group by identity (docs/devices.md): paths that share a unique UUID
  // or, for real devices, a PCI bus id are one chip, even when one backend
  // knows only the UUID and another only the bus id. The group takes a
  // UUID-derived id where a member has one.
  MergeAccessPaths(all);
  std::map<std::string, std::vector<std::shared_ptr<Device>>> groups;
  for (const auto& d : all) groups[d->physical_id].push_back(d);
  struct Group {
    OrderKey key;
    std::string id;
    std::vector<std::shared_ptr<Device>> paths;
  };
  std::vector<Group> ordered;
  for (auto& [id, paths] : groups) {
    std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) {
      return MakeOrderKey(a->caps, a->backend->name(), a->backend_index) <
             MakeOrderKey(b->caps, b->backend->name(), b->backend_index);
    });
    std::map<std::string, uint32_t> ordinals;
    for (const auto& p : paths) {
      uint32_t n = ordinals[p->backend->name()]++;
      CopyString(p->caps.stable_id, sizeof(p->caps.stable_id), AccessPathId(id, p->backend->name(), n));
    }
    ordered.push_back({MakeOrderKey(paths[0]->caps, paths[0]->backend->name(), paths[0]->backend_index), id, paths});
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const Group& a, const Group& b) { return a.key < b.key || (a.key == b.key && a.id < b.id); });

  // 3. ACCEL_VISIBLE_DEVICES: physical indices in the stable order, or ids;
  // or a capability selector (docs/selectors.md), evaluated against each
  // physical device's union of access paths. A selector that does not parse
  // shows nothing (the mask fails closed, as a list that matches nothing does).
  std::vector<bool> group_visible(ordered.size(), true);
  std::set<std::string> visible_paths;
  bool mask = settings.visible_devices.has_value();
  const bool by_selector = mask && IsSelectorMask(*settings.visible_devices);
  if (by_selector) {
    std::fill(group_visible.begin(), group_visible.end(), false);
    std::string_view text = *settings.visible_devices;
    const size_t offset = text.rfind("sel:", 0) == 0 ? 4 : 0;
    text.remove_prefix(offset);
    auto parsed = selector::Parse(text);
    if (!parsed) {
      // Parsed again with the prefix blanked (the lexer skips blanks), so that every column in the message, the
      // error's own and those inside it ("to close the '(' at column 5"), counts from the start of the value.
      auto blanked = selector::Parse(std::string(offset, ' ') + std::string(text));
      selector::ParseError e = blanked ? parsed.error() : blanked.error();
      if (blanked) e.position += offset;
      Warn(settings, "ACCEL_VISIBLE_DEVICES", *settings.visible_devices, "",
           fmt::format("the selector does not parse, so no device is visible: {}", e.ToString()));
    } else {
      size_t matched = 0;
      for (size_t g = 0; g < ordered.size(); ++g) {
        group_visible[g] = parsed->Matches(PhysicalAttributes(ordered[g].paths, ordered[g].id));
        if (group_visible[g]) ++matched;
      }
      if (matched == 0) {
        Warn(settings, "ACCEL_VISIBLE_DEVICES", *settings.visible_devices, "",
             fmt::format("the selector matches none of the {} physical device(s)", ordered.size()));
      }
    }
  } else if (mask) {
    std::fill(group_visible.begin(), group_visible.end(), false);
    for (const std::string& token : SplitList(*settings.visible_devices, ',')) {
      bool matched = false;
      if (AllDigits(token)) {
        size_t index = 0;
        const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), index);
        if (error == std::errc() && end == token.data() + token.size() && index < ordered.size()) {
          group_visible[index] = true;
          matched = true;
        }
      } else {
        for (size_t g = 0; g < ordered.size(); ++g) {
          if (ordered[g].id == token) {
            group_visible[g] = true;
            matched = true;
          }
          for (const auto& p : ordered[g].paths) {
            if (FieldString(p->caps.stable_id, sizeof(p->caps.stable_id)) == token) {
              visible_paths.insert(token);
              matched = true;
            }
          }
        }
      }
      if (!matched) {
        const size_t n = ordered.size();
        Warn(settings, "ACCEL_VISIBLE_DEVICES", *settings.visible_devices, token,
             fmt::format("'{}' matches no device: {} (or a physical or access-path stable id, as accel-info lists "
                         "them)",
                         token,
                         n == 0   ? std::string("no device was found")
                         : n == 1 ? std::string("there is 1 physical device, index 0")
                                  : fmt::format("there are {} physical devices, indices 0 to {}", n, n - 1)));
      }
    }
  }

  // 4. Register what is visible.
  for (const auto& backend : backends_) HandleTable::Get().Insert(HandleType::kBackend, backend);
  for (size_t g = 0; g < ordered.size(); ++g) {
    std::vector<std::shared_ptr<Device>> paths;
    for (const auto& p : ordered[g].paths) {
      std::string id = FieldString(p->caps.stable_id, sizeof(p->caps.stable_id));
      if (!mask || group_visible[g] || visible_paths.count(id) != 0) paths.push_back(p);
    }
    if (paths.empty()) continue;
    auto physical = std::make_shared<PhysicalDevice>();
    accel_physical_device_properties_t& props = physical->props;
    props.stype = ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES;
    props.struct_size = sizeof(props);
    const accel_device_capabilities_t& first = paths[0]->caps;
    props.kind = first.kind;
    props.flags = first.flags;
    props.index = static_cast<uint32_t>(physical_devices_.size());
    props.device_count = static_cast<uint32_t>(paths.size());
    props.numa_node = first.numa_node;
    CopyString(props.name, sizeof(props.name), FieldString(first.name, sizeof(first.name)));
    CopyString(props.stable_id, sizeof(props.stable_id), ordered[g].id);
    CopyString(props.pci_bus_id, sizeof(props.pci_bus_id), FieldString(first.pci_bus_id, sizeof(first.pci_bus_id)));
    std::tie(props.memory_total, props.compute_units) = PhysicalFigures(paths);
    for (const auto& p : paths) {
      if (p->caps.numa_node != props.numa_node) props.numa_node = -1;
    }
    for (const auto& p : paths) {
      p->physical = physical.get();
      p->index = static_cast<uint32_t>(devices_.size());
      p->label = fmt::format("device {} ({}: {})", p->index, p->backend->name(),
                             FieldString(p->caps.name, sizeof(p->caps.name)));
      HandleTable::Get().Insert(HandleType::kDevice, p);
      devices_.push_back(p);
    }
    physical->devices = std::move(paths);
    physical->account = ProcessAccount(ordered[g].id);
    HandleTable::Get().Insert(HandleType::kPhysicalDevice, physical);
    physical_devices_.push_back(std::move(physical));
  }
  ApplyMemoryLimit(settings);
  log_.Log(ACCEL_LOG_LEVEL_INFO, "registry: {} device(s) on {} physical device(s) from {} backend(s)", devices_.size(),
           physical_devices_.size(), backends_.size());
}

void Instance::ApplyMemoryLimit(const LoaderSettings& settings) {
  // Read in every process, privileged or not and whatever the instance's
  // flags: it only ever restricts (docs/memory-limits.md). Each instance sets
  // its own limit on the shared process accounts, which obey the lowest.
  auto limit_all = [this](uint64_t limit) {
    for (const auto& physical : physical_devices_) physical->account->SetLimitOf(this, limit);
  };
  const char* value = std::getenv("ACCEL_MEMORY_LIMIT");
  if (value == nullptr) {
    limit_all(ACCEL_MEMORY_UNLIMITED);
    return;
  }
  const std::string text(value);
  auto parsed = ParseMemoryLimit(text);
  if (!parsed.ok()) {
    // Fail closed: an orchestrator's limit that cannot be read allows nothing.
    Warn(settings, "ACCEL_MEMORY_LIMIT", text, "",
         parsed.status().message() + "; every device is limited to 0 bytes until it is fixed");
    limit_all(0);
    return;
  }
  std::vector<bool> used(parsed->size(), false);
  std::vector<uint64_t> limits;
  limits.reserve(physical_devices_.size());
  for (const auto& physical : physical_devices_) {
    const std::string id = FieldString(physical->props.stable_id, sizeof(physical->props.stable_id));
    const std::string index = std::to_string(physical->props.index);
    const MemoryLimitEntry* named = nullptr;
    const MemoryLimitEntry* every = nullptr;
    for (size_t e = 0; e < parsed->size(); ++e) {
      const MemoryLimitEntry& entry = (*parsed)[e];
      if (entry.device == id || entry.device == index) {
        if (named != nullptr) {
          // One device named twice, by its index and by its stable id: which limit was meant cannot be known.
          Warn(settings, "ACCEL_MEMORY_LIMIT", text, entry.device,
               fmt::format("'{}' and '{}' both name physical device {} ({}); every device is limited to 0 bytes "
                           "until it is fixed",
                           named->device, entry.device, index, id));
          limit_all(0);
          return;
        }
        named = &entry;
        used[e] = true;
      } else if (entry.device.empty()) {
        every = &entry;
        used[e] = true;
      }
    }
    const MemoryLimitEntry* chosen = named != nullptr ? named : every;
    uint64_t limit = ACCEL_MEMORY_UNLIMITED;
    if (chosen != nullptr && !chosen->is_percent) {
      limit = chosen->bytes;
    } else if (chosen != nullptr) {
      // In long double (a 64-bit mantissa on x86-64), clamped: a double product may round up to 2^64, past uint64_t.
      const long double share = static_cast<long double>(physical->props.memory_total) * chosen->percent / 100.0L;
      limit = share >= 18446744073709551616.0L ? ACCEL_MEMORY_UNLIMITED : static_cast<uint64_t>(share);
    }
    limits.push_back(limit);
  }
  for (size_t i = 0; i < physical_devices_.size(); ++i) physical_devices_[i]->account->SetLimitOf(this, limits[i]);
  for (size_t e = 0; e < parsed->size(); ++e) {
    if (used[e]) continue;
    const std::string& device = (*parsed)[e].device;
    Warn(settings, "ACCEL_MEMORY_LIMIT", text, device,
         fmt::format("'{}' names no physical device (an index below {} or a stable id)", device,
                     physical_devices_.size()));
  }
}

std::vector<std::shared_ptr<Device>> Instance::DevicesOf(const Backend* backend) const {
  std::vector<std::shared_ptr<Device>> out;
  for (const auto& d : devices_) {
    if (d->backend.get() == backend) out.push_back(d);
  }
  return out;
}

uint64_t Instance::Adopt(HandleType type, std::shared_ptr<Object> child) {
  hazard::RetireList retiring;  // retired once the lock is released: no object is destroyed under it
  std::lock_guard lock(children_mutex_);
  uint64_t handle = HandleTable::Get().Insert(type, child);
  try {
    children_.emplace(handle, std::make_pair(type, std::move(child)));
  } catch (...) {  // out of host memory: the handle must not stay live without its owner
    HandleTable::Get().RemoveInto(handle, &retiring);
    throw;
  }
  return handle;
}

std::shared_ptr<Object> Instance::Forget(uint64_t handle) {
  std::shared_ptr<Object> object;
  hazard::RetireList retiring;  // retired once the lock is released: no object is destroyed under it
  {
    std::lock_guard lock(children_mutex_);
    auto it = children_.find(handle);
    if (it == children_.end()) return nullptr;
    object = std::move(it->second.second);
    children_.erase(it);
    HandleTable::Get().RemoveInto(handle, &retiring);
  }
  hazard::Retire(std::move(retiring));
  return object;
}

void Instance::Destroy() {
  if (destroyed_) return;
  destroyed_ = true;
  std::unordered_map<uint64_t, std::pair<HandleType, std::shared_ptr<Object>>> children;
  {
    hazard::RetireList retiring;  // one barrier for them all, once the lock is released
    {
      std::lock_guard lock(children_mutex_);
      children.swap(children_);
      for (const auto& [handle, entry] : children) HandleTable::Get().RemoveInto(handle, &retiring);
    }
  }
  // A thread may still hold one of its tenants as the last it bound (accel_thread_set_tenant's fast path): marked,
  // so that binding it again fails as a stale handle does.
  for (auto& [handle, entry] : children) {
    if (entry.first == HandleType::kTenant) static_cast<Tenant*>(entry.second.get())->destroyed = true;
  }
  // Prepared launches go first, with what they keep: a buffer one kept after accel_stream_free_buffer is freed on
  // its stream while that stream lives (launches enqueued from them keep what they use). Then streams drain, and
  // kernels, modules, events and buffers go.
  for (HandleType type : {HandleType::kPreparedLaunch, HandleType::kStream, HandleType::kKernel, HandleType::kModule,
                          HandleType::kEvent, HandleType::kBuffer}) {
    for (auto& [handle, entry] : children) {
      if (entry.first != type) continue;
      if (type == HandleType::kPreparedLaunch) static_cast<PreparedLaunch*>(entry.second.get())->ReleaseAll();
      if (type == HandleType::kStream) static_cast<Stream*>(entry.second.get())->Release();
      if (type == HandleType::kKernel) static_cast<Kernel*>(entry.second.get())->Release();
      if (type == HandleType::kModule) static_cast<Module*>(entry.second.get())->Release();
      if (type == HandleType::kEvent) static_cast<Event*>(entry.second.get())->Release();
      if (type == HandleType::kBuffer) static_cast<Buffer*>(entry.second.get())->Release();
    }
  }
  children.clear();
  {
    hazard::RetireList retiring;
    for (const auto& d : devices_) HandleTable::Get().RemoveInto(d->handle(), &retiring);
    for (const auto& p : physical_devices_) HandleTable::Get().RemoveInto(p->handle(), &retiring);
    for (const auto& b : backends_) HandleTable::Get().RemoveInto(b->handle(), &retiring);
  }
  for (const auto& p : physical_devices_) p->account->DropLimitOf(this);
  for (const auto& p : physical_devices_) p->devices.clear();
  physical_devices_.clear();
  devices_.clear();
  for (const auto& b : backends_) b->Shutdown();
  backends_.clear();
  machine_.reset();
}

const MachineTopology& Instance::machine() const {
  std::call_once(machine_once_, [this] { machine_ = MachineTopology::Load(log_); });
  return *machine_;
}

const std::vector<Instance::NicEntry>& Instance::nics() const {
  std::call_once(nics_once_, [this] {
    // Built aside and kept only when complete: an exception (out of host memory) leaves nics_ empty for the retry
    // call_once makes, which would otherwise append to a half-built list.
    std::vector<NicEntry> nics;
    for (const Nic& nic : machine().nics()) nics.push_back(NicEntry{nic, nullptr, 0});
    for (const auto& backend : backends_) {
      std::vector<accel_nic_properties_t> own;
      Status s = backend->ListNics(&own);
      if (!s.ok()) {
        if (s.code() != ACCEL_ERROR_UNIMPLEMENTED) {
          log_.Log(ACCEL_LOG_LEVEL_WARN, "topology: backend '{}' context_get_nics failed: {}", backend->name(),
                   s.message());
        }
        continue;
      }
      for (size_t i = 0; i < own.size(); ++i) {
        const accel_nic_properties_t& p = own[i];
        NicEntry e;
        e.nic.name = std::string(p.name, strnlen(p.name, sizeof(p.name)));
        e.nic.kind = std::string(p.kind, strnlen(p.kind, sizeof(p.kind)));
        e.nic.placement.pci_bus_id = std::string(p.pci_bus_id, strnlen(p.pci_bus_id, sizeof(p.pci_bus_id)));
        e.nic.placement.pcie_root = std::string(p.pcie_root, strnlen(p.pcie_root, sizeof(p.pcie_root)));
        e.nic.placement.numa_node = p.numa_node;
        e.backend = backend.get();
        e.backend_index = static_cast<uint32_t>(i);
        nics.push_back(std::move(e));
      }
    }
    nics_ = std::move(nics);
  });
  return nics_;
}

bool Instance::HasOwnNics(const Backend* backend) const {
  for (const NicEntry& e : nics()) {
    if (e.backend == backend) return true;
  }
  return false;
}

Instance::~Instance() { Destroy(); }

}  // namespace accel::core
