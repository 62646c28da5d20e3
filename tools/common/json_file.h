// Writing a tool's JSON document to the file a user named (accel-bench --json, accel-conformance --json): whole or
// not at all, and a failure the tool reports. Thread-compatible.
//
//   std::string why;
//   if (!accel::tools::WriteJsonFile(path, doc, &why)) { fmt::print(stderr, "accel-bench: {}\n", why); return 2; }
#ifndef ACCEL_TOOLS_COMMON_JSON_FILE_H_
#define ACCEL_TOOLS_COMMON_JSON_FILE_H_

#include <nlohmann/json.hpp>

#include <string>

namespace accel::tools {

// Writes `doc` (indented by 2, a newline after it) to `path` through a temporary file in the same folder (made with
// mkostemp, with the old file's permissions), renamed over `path` once complete: a reader never sees half a document
// and a failed write leaves the old file. A path that exists and is no regular file (/dev/null, /dev/stdout, a pipe)
// is written directly. Bytes that are not UTF-8 in its strings (a path or a filter as the user typed it) become
// U+FFFD instead of an exception.
// Returns false with `*error` set ("cannot write --json <path>: <why>") when the file cannot be written.
bool WriteJsonFile(const std::string& path, const nlohmann::json& doc, std::string* error);

}  // namespace accel::tools

#endif  // ACCEL_TOOLS_COMMON_JSON_FILE_H_
