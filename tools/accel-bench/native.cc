// Dispatch to the native paths accel-bench knows (native_opencl.cc,
// native_vulkan.cc), by the device's backend.
#include <cstring>

#include "bench.h"

namespace accel::bench {

#if defined(ACCEL_BENCH_NATIVE_OPENCL)
std::unique_ptr<Path> MakeOpenClPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why);
#endif
#if defined(ACCEL_BENCH_NATIVE_VULKAN)
std::unique_ptr<Path> MakeVulkanPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
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
  (void)index_in_backend;
  (void)max_size;
  (void)corpus_dir;
  *why =
      std::string("none for backend '") + caps.backend_name + "' (accel-bench has native paths for opencl and vulkan)";
  return nullptr;
}

}  // namespace accel::bench
