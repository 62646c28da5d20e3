// Reading the kernel corpus's corpus.json (conformance/corpus/README.md,
// "corpus.json"): each kernel's file per kernel format, and why each format
// that was not built is missing. The conformance runner and accel-bench read
// it; a backend may ship a corpus of its own, so the file is outside input.
// Plain value; the functions are thread-safe.
#ifndef ACCEL_CONFORMANCE_CORPUS_CORPUS_FILE_H_
#define ACCEL_CONFORMANCE_CORPUS_CORPUS_FILE_H_

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace accel::conformance {

struct KernelCorpus {
  std::filesystem::path dir;  // the folder holding corpus.json: the files are relative to it
  // kernel name -> format name ("native-host", "ptx") -> path relative to `dir`
  std::map<std::string, std::map<std::string, std::string>> kernels;
  std::map<std::string, std::string> missing;  // format name -> why it was not built

  // The file holding `kernel` in `format` (`dir` / its path); nullopt when the corpus has none.
  std::optional<std::filesystem::path> File(const std::string& kernel, const std::string& format) const;
};

// Parses the text of a corpus.json; `file` names it in errors. On a rejected
// file returns nullopt with `*error` naming the file, the member and what is
// wrong ("corpus.json: kernels.fill_u32.ptx must be a non-empty relative path").
std::optional<KernelCorpus> ParseKernelCorpus(std::string_view text, const std::string& file, std::string* error);

// Reads `<dir>/corpus.json` (ParseKernelCorpus); nullopt with `*error` set
// when it cannot be read or is rejected.
std::optional<KernelCorpus> ReadKernelCorpus(const std::filesystem::path& dir, std::string* error);

}  // namespace accel::conformance

#endif  // ACCEL_CONFORMANCE_CORPUS_CORPUS_FILE_H_
