// Dispatch to the native paths accel-bench knows (native_opencl.cc,
// native_vulkan.cc, native_cuda.cc), by the device's backend.
#include <cstring>
#include <fstream>

#include "bench.h"

namespace accel::bench {

bool ReadCorpus(const std::string& corpus_dir, nlohmann::json* doc, std::string* error) {
  std::ifstream in(corpus_dir + "/corpus.json");
  if (!in) {
    *error = "the kernel corpus " + corpus_dir + "/corpus.json cannot be read (pass --corpus)";
    return false;
  }
  // allow_exceptions=false still throws out_of_range for a number too large for any type.
  try {
    *doc = nlohmann::json::parse(in, nullptr, false);
  } catch (const nlohmann::json::exception&) {
    *doc = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (doc->is_discarded()) {
    *error = corpus_dir + "/corpus.json is not JSON";
    return false;
  }
  return true;
}

std::string CorpusFile(const std::string& corpus_dir, const char* format, std::string* error) {
  nlohmann::json doc;
  if (!ReadCorpus(corpus_dir, &doc, error)) return std::string();
  if (!doc.contains("kernels") || !doc["kernels"].contains("fill_u32") ||
      !doc["kernels"]["fill_u32"].contains(format) || !doc["kernels"]["fill_u32"][format].is_string()) {
    *error = corpus_dir + "/corpus.json has no fill_u32 in " + format;
    if (doc.contains("missing") && doc["missing"].contains(format) && doc["missing"][format].is_string()) {
      *error += " (" + doc["missing"][format].get<std::string>() + ")";
    }
    return std::string();
  }
  return corpus_dir + "/" + doc["kernels"]["fill_u32"][format].get<std::string>();
}

#if defined(ACCEL_BENCH_NATIVE_OPENCL)
std::unique_ptr<Path> MakeOpenClPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why);
#endif
#if defined(ACCEL_BENCH_NATIVE_VULKAN)
std::unique_ptr<Path> MakeVulkanPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why);
#endif
#if defined(ACCEL_BENCH_NATIVE_CUDA)
std::unique_ptr<Path> MakeCudaPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                   uint64_t max_size, const std::string& corpus_dir, std::string* why);
#endif

std::unique_ptr<Path> MakeNativePath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why) {
#if defined(ACCEL_BENCH_NATIVE_OPENCL)
  if (std::strcmp(caps.backend_name, "opencl") == 0) {
    return MakeOpenClPath(caps, index_in_backend, max_size, corpus_dir, why);
  }
#endif
#if defined(ACCEL_BENCH_NATIVE_VULKAN)
  if (std::strcmp(caps.backend_name, "vulkan") == 0) {
    return MakeVulkanPath(caps, index_in_backend, max_size, corpus_dir, why);
  }
#endif
#if defined(ACCEL_BENCH_NATIVE_CUDA)
  if (std::strcmp(caps.backend_name, "cuda") == 0) {
    return MakeCudaPath(caps, index_in_backend, max_size, corpus_dir, why);
  }
#endif
  (void)index_in_backend;
  (void)max_size;
  (void)corpus_dir;
  *why = std::string("none for backend '") + caps.backend_name +
         "' (accel-bench has native paths for opencl, vulkan and cuda)";
  return nullptr;
}

}  // namespace accel::bench
