#include "discovery.h"

#include <dlfcn.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "manifest.h"

namespace accel::core {
namespace fs = std::filesystem;

bool ProcessIsPrivileged() { return getauxval(AT_SECURE) != 0 || getuid() != geteuid() || getgid() != getegid(); }

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    auto first = item.find_first_not_of(" \t");
    auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return out;
}

namespace {

std::string LibaccelDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&ManifestSearchDirs), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  fs::path p = fs::canonical(info.dli_fname, ec);
  if (ec) return {};
  return p.parent_path().string();
}

}  // namespace

std::vector<std::string> ManifestSearchDirs(bool privileged) {
  std::vector<std::string> dirs;
  std::string self = LibaccelDir();
  if (!self.empty()) dirs.push_back((fs::path(self) / ACCEL_MANIFEST_DIR_FROM_LIBDIR).lexically_normal().string());
  const char* xdg = privileged ? nullptr : std::getenv("XDG_DATA_DIRS");
  std::string data_dirs = (xdg != nullptr && *xdg != '\0') ? xdg : "/usr/local/share:/usr/share";
  for (const std::string& d : SplitList(data_dirs, ':')) dirs.push_back((fs::path(d) / "accel/backends.d").string());
  dirs.emplace_back("/etc/accel/backends.d");
  return dirs;
}

Status CheckFileTrusted(const std::string& path, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Error(ACCEL_ERROR_NOT_FOUND, "{} {} does not exist: {}", what, path, std::strerror(errno));
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    return Error(ACCEL_ERROR_FAILED_PRECONDITION, "refused: {} {} is writable by others (mode {:04o})", what, path,
                 st.st_mode & 07777);
  }
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  fs::path dir = ec ? fs::path(path).parent_path() : real.parent_path();
  if (dir.empty()) dir = ".";
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) == 0 && (dst.st_mode & S_IWOTH) != 0 && (dst.st_mode & S_ISVTX) == 0) {
    return Error(ACCEL_ERROR_FAILED_PRECONDITION,
                 "refused: {} {} is in {}, a folder writable by others without the sticky bit (mode {:04o})", what,
                 path, dir.string(), dst.st_mode & 07777);
  }
  return Status::Ok();
}

std::optional<std::string> DeselectionReason(const std::optional<std::string>& selection, const std::string& name) {
  if (!selection) return std::nullopt;
  std::vector<std::string> items = SplitList(*selection, ',');
  bool any_positive = false;
  bool named = false;
  for (const std::string& item : items) {
    if (!item.empty() && item[0] == '-') {
      if (item.substr(1) == name) return "deselected by ACCEL_BACKENDS=" + *selection;
    } else {
      any_positive = true;
      if (item == name) named = true;
    }
  }
  if (any_positive && !named) return "not selected by ACCEL_BACKENDS=" + *selection;
  return std::nullopt;
}

namespace {

// `file` made absolute against the current folder, so that what the
// candidate names does not change meaning with the folder dlopen searches.
std::string AbsolutePath(const std::string& file) {
  std::error_code ec;
  fs::path absolute = fs::absolute(file, ec);
  return (ec ? fs::path(file) : absolute).lexically_normal().string();
}

Candidate FromFile(const std::string& given) {
  Candidate c;
  const std::string file = AbsolutePath(given);
  if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0) {
    c.manifest_path = file;
    Status trust = CheckFileTrusted(file, "manifest");
    if (!trust.ok()) {
      c.error = trust;
      return c;
    }
    auto manifest = LoadManifest(file);
    if (!manifest.ok()) {
      c.error = manifest.status();
      return c;
    }
    c.name = manifest->name;
    c.library_path = manifest->library_path;
    c.library_search_name = manifest->library_search_name;
  } else {
    c.library_path = file;
  }
  return c;
}

void AddDir(const std::string& dir, std::vector<std::string>* files) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
}

}  // namespace

std::vector<Candidate> DiscoverBackends(const LoaderSettings& settings, const Logger& log) {
  std::vector<std::string> files;
  if (settings.backend_files) {
    files = SplitList(*settings.backend_files, ':');
    log.Log(ACCEL_LOG_LEVEL_DEBUG, "loader: backend files given: {}", *settings.backend_files);
  } else {
    std::set<std::string> seen;
    for (const std::string& dir : ManifestSearchDirs(settings.privileged)) {
      std::error_code ec;
      std::string key = fs::weakly_canonical(dir, ec).string();
      if (!seen.insert(ec ? dir : key).second) continue;
      log.Log(ACCEL_LOG_LEVEL_DEBUG, "loader: searching {}", dir);
      AddDir(dir, &files);
    }
  }
  if (settings.add_backend_files) {
    for (const std::string& f : SplitList(*settings.add_backend_files, ':')) files.push_back(f);
  }

  std::vector<Candidate> out;
  std::set<std::string> names;
  std::set<std::string> libraries;
  for (const std::string& file : files) {
    Candidate c = FromFile(file);
    if (c.error.ok() && !c.name.empty()) {
      if (auto why = DeselectionReason(settings.backends, c.name)) {
        c.skipped = true;
        c.error = Status(ACCEL_SUCCESS, *why);
      } else if (!names.insert(c.name).second) {
        c.skipped = true;
        c.error = Status(ACCEL_SUCCESS, fmt::format("skipped: a backend named '{}' was found earlier", c.name));
      }
    }
    if (c.error.ok() && !c.skipped) {
      std::error_code ec;
      std::string key = fs::weakly_canonical(c.library_path, ec).string();
      if (!libraries.insert(ec ? c.library_path : key).second) {
        c.skipped = true;
        c.error = Status(ACCEL_SUCCESS, fmt::format("skipped: library {} was found earlier", c.library_path));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace accel::core
