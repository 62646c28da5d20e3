// Finding backend candidates: manifest search order, the environment
// overrides, selection by name, and the file-permission checks
// (docs/loader.md).
#ifndef ACCEL_CORE_DISCOVERY_H_
#define ACCEL_CORE_DISCOVERY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "log.h"
#include "status.h"

namespace accel::core {

// The loader settings of one instance after the instance description and
// the environment were combined. Plain value.
struct LoaderSettings {
  std::optional<std::string> backend_files;      // replaces the search
  std::optional<std::string> add_backend_files;  // appended to it
  std::optional<std::string> backends;           // "a,b" or "-a,-b"
  std::optional<std::string> visible_devices;
  std::optional<std::string> cache_dir;
  std::optional<std::string> topology_domains;  // ACCEL_TOPOLOGY_DOMAINS: "rack=r12,block=b3"
  bool privileged = false;                      // environment ignored because the process is setuid or similar
  bool use_environment = false;                 // ACCEL_* variables may be read (host services' get_setting)
  // Where a setting's value came from, by variable: "desc->backends" when the
  // instance description gave it; absent when the environment did.
  std::map<std::string, std::string> origin;
  // The name a warning about `variable` gives its setting.
  std::string SettingName(const std::string& variable) const {
    auto it = origin.find(variable);
    return it != origin.end() ? it->second : variable;
  }
};

// One backend the loader will consider. Plain value.
struct Candidate {
  std::string manifest_path;        // absolute; "" for a library named directly
  std::string library_path;         // absolute
  std::string library_search_name;  // a bare library_path: tried on the system search path when library_path is missing
  std::string name;                 // from the manifest; "" until the library says
  Status error;                     // set: FAILED before opening
  bool skipped = false;             // deselected or duplicate; `error` holds the reason text
};

// True when the process must not trust its environment (setuid, setgid,
// file capabilities: AT_SECURE).
bool ProcessIsPrivileged();

// The manifest folders in search order: relative to libaccel, then
// $XDG_DATA_DIRS/accel/backends.d, then /etc/accel/backends.d.
std::vector<std::string> ManifestSearchDirs(bool privileged);

// Builds the candidate list, applying selection and duplicate rules.
std::vector<Candidate> DiscoverBackends(const LoaderSettings& settings, const Logger& log);

// Applies ACCEL_BACKENDS-style selection to one backend name; returns the
// reason it is deselected, or nothing when it stays.
std::optional<std::string> DeselectionReason(const std::optional<std::string>& selection, const std::string& name);

// FAILED_PRECONDITION when `path`, or its folder (without the sticky bit),
// is writable by others; NOT_FOUND when it does not exist.
Status CheckFileTrusted(const std::string& path, const char* what);

std::vector<std::string> SplitList(const std::string& text, char separator);

}  // namespace accel::core

#endif  // ACCEL_CORE_DISCOVERY_H_
