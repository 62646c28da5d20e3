// libFuzzer target for the kernel corpus's corpus.json
// (conformance/corpus/corpus_file.h), as the conformance runner and
// accel-bench read it: any text either parses into a corpus whose every file is
// a non-empty relative path under the corpus folder, or is rejected with a
// message naming the file; what parsed, written back, parses to the same
// corpus. Nothing throws, crashes, leaks or reads out of bounds (ASan, UBSan).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "corpus_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string file = "/fuzz/corpus/corpus.json";
  std::string error;
  auto corpus = accel::conformance::ParseKernelCorpus(text, file, &error);
  if (!corpus) {
    if (error.rfind(file + ": ", 0) != 0 || error.size() == file.size() + 2) __builtin_trap();  // names the file
    return 0;
  }
  if (!error.empty()) __builtin_trap();
  corpus->dir = "/fuzz/corpus";
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [kernel, files] : corpus->kernels) {
    if (kernel.empty()) __builtin_trap();
    kernels[kernel] = nlohmann::json::object();
    for (const auto& [format, path] : files) {
      if (format.empty() || path.empty() || path.find('\0') != std::string::npos || path[0] == '/') __builtin_trap();
      const auto found = corpus->File(kernel, format);
      if (!found || found->string() != "/fuzz/corpus/" + path) __builtin_trap();  // under the corpus folder
      kernels[kernel][format] = path;
    }
  }
  if (corpus->File("", "native-host")) __builtin_trap();
  // Written back, it parses to the same corpus.
  const nlohmann::json written = {{"format_version", 1}, {"kernels", kernels}, {"missing", corpus->missing}};
  std::string again_error;
  const auto again = accel::conformance::ParseKernelCorpus(written.dump(), "again.json", &again_error);
  if (!again || again->kernels != corpus->kernels || again->missing != corpus->missing) __builtin_trap();
  return 0;
}
