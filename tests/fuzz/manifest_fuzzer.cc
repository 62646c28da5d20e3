// libFuzzer target for backend manifests (core/lib/manifest.h): any text
// either parses into a manifest the loader can use, or is rejected with
// INVALID_ARGUMENT or INCOMPATIBLE_VERSION and a message naming the file;
// nothing throws, crashes, leaks or reads out of bounds (ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto manifest = accel::core::ParseManifest("/fuzz/backends.d/fuzz.json", text);
  if (!manifest.ok()) {
    const accel::core::Status& s = manifest.status();
    if (s.code() != ACCEL_ERROR_INVALID_ARGUMENT && s.code() != ACCEL_ERROR_INCOMPATIBLE_VERSION) __builtin_trap();
    if (s.message().rfind("manifest /fuzz/backends.d/fuzz.json: ", 0) != 0) __builtin_trap();  // names the file
    return 0;
  }
  // Accepted: every field the loader uses is there and checked.
  const accel::core::Manifest& m = *manifest;
  if (!accel::core::IsBackendName(m.name)) __builtin_trap();
  if (m.library_path.empty() || m.library_path[0] != '/') __builtin_trap();  // resolved against the manifest
  if (m.abi_major != ACCEL_ABI_VERSION_MAJOR) __builtin_trap();
  // ... and it is what the file says: the ABI major as written is exactly this core's (no integer wrapped
  // into it), and the file format's major is exactly 1.
  const auto doc = nlohmann::json::parse(text);
  const auto& abi = doc.at("backend").at("abi_major");
  const bool abi_is_ours = abi.is_number_unsigned()
                               ? abi.get<uint64_t>() == ACCEL_ABI_VERSION_MAJOR
                               : abi.is_number_integer() && abi.get<int64_t>() == ACCEL_ABI_VERSION_MAJOR;
  if (!abi_is_ours) __builtin_trap();
  std::string major = doc.at("file_format_version").get<std::string>();
  major = major.substr(0, major.find('.'));
  major.erase(0, major.find_first_not_of('0'));  // "01" is 1
  if (major != "1") __builtin_trap();
  return 0;
}
