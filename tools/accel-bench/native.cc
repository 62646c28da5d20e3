// Dispatch to the native paths accel-bench knows (native_opencl.cc,
// native_vulkan.cc, native_cuda.cc), by the device's backend.
#include <cstring>

#include "bench.h"
#include "corpus_file.h"

namespace accel::bench {

std::string CorpusFile(const std::string& corpus_dir, const char* format, std::string* error) {
  const auto corpus = accel::conformance::ReadKernelCorpus(corpus_dir, error);
  if (!corpus) return std::string();
  const auto file = corpus->File("fill_u32", format);
  if (!file) {
    *error = corpus_dir + "/corpus.json has no fill_u32 in " + format;
    if (const auto why = corpus->missing.find(format); why != corpus->missing.end()) *error += " (" + why->second + ")";
    return std::string();
  }
  return file->string();
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
