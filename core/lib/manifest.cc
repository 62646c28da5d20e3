#include "manifest.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace accel::core {

bool IsBackendName(const std::string& name) {
  static const std::regex kName(R"(^[a-z][a-z0-9_]{0,30}$)");
  return std::regex_match(name, kName);
}

Expected<Manifest> ParseManifest(const std::string& path, const std::string& text) {
  using nlohmann::json;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: malformed JSON at byte {}: {}", path, e.byte, e.what());
  } catch (const json::exception& e) {  // out_of_range 406: a number too large for any type
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: malformed JSON: {}", path, e.what());
  }
  if (!doc.is_object()) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: the top level is not an object", path);
  auto format = doc.find("file_format_version");
  if (format == doc.end() || !format->is_string()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: 'file_format_version' is missing or not a string", path);
  }
  static const std::regex kVersion(R"(^(\d+)\.(\d+)\.(\d+)$)");
  std::smatch m;
  const std::string version = format->get<std::string>();
  if (!std::regex_match(version, m, kVersion)) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: 'file_format_version' \"{}\" is not MAJOR.MINOR.PATCH",
                 path, version);
  }
  // The major as written, however long: "99999999999" is a format this core cannot read, not an exception.
  uint64_t major = 0;
  const std::string major_text = m[1].str();
  const auto parsed = std::from_chars(major_text.data(), major_text.data() + major_text.size(), major);
  if (parsed.ec != std::errc() || parsed.ptr != major_text.data() + major_text.size() ||
      major != kManifestFormatMajor) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION,
                 "manifest {}: file format {} is not readable by this core (reads {}.x)", path, version,
                 kManifestFormatMajor);
  }
  auto backend = doc.find("backend");
  if (backend == doc.end() || !backend->is_object()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: 'backend' is missing or not an object", path);
  }
  Manifest out;
  out.path = path;
  auto name = backend->find("name");
  if (name == backend->end() || !name->is_string()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: 'backend.name' is missing or not a string", path);
  }
  out.name = name->get<std::string>();
  if (!IsBackendName(out.name)) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "manifest {}: 'backend.name' \"{}\" must be 1-31 lowercase letters, digits or '_', starting with a "
                 "letter",
                 path, out.name);
  }
  auto library = backend->find("library_path");
  if (library == backend->end() || !library->is_string() || library->get<std::string>().empty()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT,
                 "manifest {}: 'backend.library_path' is missing or not a non-empty string", path);
  }
  // A relative library_path is relative to the manifest's folder, whatever
  // the current folder; a bare file name may also come from the system
  // library search (docs/loader.md, "Manifests").
  const std::string given = library->get<std::string>();
  std::filesystem::path lib(given);
  if (lib.is_relative()) {
    std::error_code ec;
    std::filesystem::path manifest = std::filesystem::absolute(path, ec);
    if (ec) manifest = path;
    lib = manifest.parent_path() / lib;
    if (given.find('/') == std::string::npos) out.library_search_name = given;
  }
  out.library_path = lib.lexically_normal().string();
  auto abi = backend->find("abi_major");
  if (abi == backend->end() || !abi->is_number_integer()) {
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "manifest {}: 'backend.abi_major' is missing or not an integer", path);
  }
  // Compared as written: get<int>() would wrap 4294967297 into 1.
  const bool ours = abi->is_number_unsigned() ? abi->get<uint64_t>() == ACCEL_ABI_VERSION_MAJOR
                                              : abi->get<int64_t>() == ACCEL_ABI_VERSION_MAJOR;
  if (!ours) {
    return Error(ACCEL_ERROR_INCOMPATIBLE_VERSION, "manifest {}: backend ABI major {} is not this core's ({})", path,
                 abi->dump(), ACCEL_ABI_VERSION_MAJOR);
  }
  out.abi_major = ACCEL_ABI_VERSION_MAJOR;
  return out;
}

Expected<Manifest> LoadManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ACCEL_ERROR_NOT_FOUND, "manifest {}: cannot be read: {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseManifest(path, text.str());
}

}  // namespace accel::core
