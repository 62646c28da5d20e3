// Reading corpus.json.
#include "corpus_file.h"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace accel::conformance {

std::optional<std::filesystem::path> KernelCorpus::File(const std::string& kernel, const std::string& format) const {
  const auto k = kernels.find(kernel);
  if (k == kernels.end()) return std::nullopt;
  const auto f = k->second.find(format);
  if (f == k->second.end()) return std::nullopt;
  return dir / f->second;
}

std::optional<KernelCorpus> ParseKernelCorpus(std::string_view text, const std::string& file, std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<KernelCorpus> {
    *error = file + ": " + what;
    return std::nullopt;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // a parse error, or a number too large for any type
    return fail(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) return fail("the top level must be an object");
  // Members a later version 1 adds are ignored: format_version changes only when a version 1 reader would misread.
  const auto version = doc.find("format_version");
  if (version == doc.end() || !version->is_number_integer()) return fail("needs an integer 'format_version'");
  if (version->is_number_unsigned() ? version->get<uint64_t>() != 1 : version->get<int64_t>() != 1) {
    return fail("format_version " + version->dump() + " is not 1, the version this reader reads");
  }
  KernelCorpus corpus;
  const auto kernels = doc.find("kernels");
  if (kernels == doc.end() || !kernels->is_object())
    return fail("needs an object 'kernels' (kernel -> format -> file)");
  for (const auto& kernel : kernels->items()) {
    const std::string where = "kernels." + kernel.key();
    if (kernel.key().empty()) return fail("kernels has an empty kernel name");
    if (!kernel.value().is_object()) return fail(where + " must be an object (format -> file)");
    auto& files = corpus.kernels[kernel.key()];
    for (const auto& format : kernel.value().items()) {
      if (format.key().empty()) return fail(where + " has an empty format name");
      const nlohmann::json& value = format.value();
      const std::string* path = value.is_string() ? value.get_ptr<const std::string*>() : nullptr;
      // The path reaches accel_module_create as a C string: a NUL would cut it short.
      if (path == nullptr || path->empty() || path->find('\0') != std::string::npos ||
          std::filesystem::path(*path).is_absolute()) {
        return fail(where + "." + format.key() + " must be a non-empty relative path (to the folder of corpus.json)");
      }
      files[format.key()] = *path;
    }
  }
  const auto missing = doc.find("missing");
  if (missing != doc.end()) {
    if (!missing->is_object()) return fail("'missing' must be an object (format -> reason)");
    for (const auto& format : missing->items()) {
      if (!format.value().is_string()) return fail("missing." + format.key() + " must be a string (the reason)");
      corpus.missing[format.key()] = format.value().get<std::string>();
    }
  }
  return corpus;
}

std::optional<KernelCorpus> ReadKernelCorpus(const std::filesystem::path& dir, std::string* error) {
  const std::filesystem::path file = dir / "corpus.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    *error = "the kernel corpus " + file.string() + " cannot be read (pass --corpus <dir>)";
    return std::nullopt;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto corpus = ParseKernelCorpus(text, file.string(), error);
  if (corpus) corpus->dir = dir;
  return corpus;
}

}  // namespace accel::conformance
