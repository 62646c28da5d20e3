// Backend manifests: the JSON files that name a backend and its library
// (abi/manifest.schema.json).
#ifndef ACCEL_CORE_MANIFEST_H_
#define ACCEL_CORE_MANIFEST_H_

#include <string>

#include "status.h"

namespace accel::core {

// One parsed manifest. Plain value.
struct Manifest {
  std::string path;          // the manifest file
  std::string name;          // backend.name
  std::string library_path;  // backend.library_path resolved against the manifest's folder
  // backend.library_path when it is a bare file name (no '/'): the name the
  // system library search tries when no such file is next to the manifest.
  std::string library_search_name;
  int abi_major = 0;
};

// Whether `name` is a backend name: 1-31 lowercase letters, digits or '_',
// starting with a letter (manifests and ACCEL_BACKENDS).
bool IsBackendName(const std::string& name);

// The manifest format this core reads: major 1, any minor.
inline constexpr int kManifestFormatMajor = 1;

// Parses `text` as the manifest at `path` (absolute, or relative to the
// current folder: it is made absolute before library_path is resolved). INVALID_ARGUMENT for malformed
// content (naming the field or byte offset), INCOMPATIBLE_VERSION for a file
// format or ABI major this core cannot read.
Expected<Manifest> ParseManifest(const std::string& path, const std::string& text);

// Reads and parses the file. NOT_FOUND when it cannot be read.
Expected<Manifest> LoadManifest(const std::string& path);

}  // namespace accel::core

#endif  // ACCEL_CORE_MANIFEST_H_
