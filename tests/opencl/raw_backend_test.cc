// The OpenCL backend's table called directly, with host services of the
// test's own (no libaccel in between): what the public API cannot reach.
// Here: why PoCL's device does not list the `spir` format although PoCL builds
// SPIR bitcode, and that a context releases every OpenCL object it made.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "opencl_backend.h"

namespace accel::opencl {
namespace {

// Host services that keep the log and the last error.
class RawHost {
 public:
  RawHost() {
    services_.stype = ACCEL_STRUCTURE_TYPE_HOST_SERVICES;
    services_.struct_size = sizeof(services_);
    services_.context = this;
    services_.log = [](void* self, accel_log_level_t, const char* message) {
      auto* host = static_cast<RawHost*>(self);
      std::lock_guard lock(host->mutex_);
      host->logs_.emplace_back(message);
    };
    services_.set_error = [](void* self, accel_status_t, const char* message) {
      auto* host = static_cast<RawHost*>(self);
      std::lock_guard lock(host->mutex_);
      host->last_error_ = message;
    };
    services_.allocate = [](void*, size_t size, size_t alignment) { return std::aligned_alloc(alignment, size); };
    services_.deallocate = [](void*, void* p) { std::free(p); };
    const char* cache = std::getenv("ACCEL_CACHE_DIR");  // ctest keeps PoCL's cache in the build tree
    cache_dir_ = cache != nullptr ? cache : "";
    services_.cache_dir = cache_dir_.empty() ? nullptr : cache_dir_.c_str();
    services_.machine_id = "raw-backend-test";
    services_.get_setting = [](void*, const char*) -> const char* { return nullptr; };
  }
  const accel_host_services_t* services() const { return &services_; }
  std::string last_error() {
    std::lock_guard lock(mutex_);
    return last_error_;
  }
  bool Logged(const std::string& needle) {
    std::lock_guard lock(mutex_);
    for (const std::string& m : logs_) {
      if (m.find(needle) != std::string::npos) return true;
    }
    return false;
  }

 private:
  accel_host_services_t services_{};
  std::string cache_dir_;
  std::mutex mutex_;
  std::vector<std::string> logs_;
  std::string last_error_;
};

const accel_backend_api_t* Api(RawHost& host) {
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);
  args.core_abi_version_min = ACCEL_BACKEND_ABI_VERSION;
  args.core_abi_version_max = ACCEL_BACKEND_ABI_VERSION;
  args.host = host.services();
  EXPECT_EQ(accel_backend_get_api(&args), ACCEL_SUCCESS) << host.last_error();
  return args.out_api;
}

TEST(OpenclRaw, PoclBuildsSpirBitcodeButKeepsNoArgumentInformationForIt) {
  const std::filesystem::path bitcode = std::filesystem::path(ACCEL_TEST_CORPUS_DIR) / "spir" / "corpus.bc";
  if (!std::filesystem::exists(bitcode)) GTEST_SKIP() << bitcode << " was not built (no clang)";
  RawHost host;
  const accel_backend_api_t* api = Api(host);
  ASSERT_NE(api, nullptr);
  accel_bk_context_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC;
  desc.struct_size = sizeof(desc);
  desc.host = host.services();
  desc.abi_version = ACCEL_BACKEND_ABI_VERSION;
  accel_bk_context_t context = nullptr;
  ASSERT_EQ(api->context_create(&desc, &context), ACCEL_SUCCESS) << host.last_error();
  uint32_t count = 0;
  ASSERT_EQ(api->context_get_devices(context, &count, nullptr), ACCEL_SUCCESS);
  std::vector<accel_bk_device_t> devices(count);
  ASSERT_EQ(api->context_get_devices(context, &count, devices.data()), ACCEL_SUCCESS);
  ASSERT_GE(count, 1u);
  Device* device = Unwrap(devices[0]);
  if (device->properties.name.rfind("pthread-", 0) != 0) {
    api->context_destroy(context);
    GTEST_SKIP() << "not PoCL's pthread device: " << device->properties.name;
  }
  EXPECT_TRUE(HasExtension(device->properties.extensions, "cl_khr_spir"));
  EXPECT_EQ(device->properties.spir_versions, "") << "PoCL lists no SPIR version";
  EXPECT_EQ(device->capabilities.kernel_formats & ACCEL_KERNEL_FORMAT_SPIR, 0u);
  // Pretend the device listed SPIR 1.2: the bitcode builds, but reflection finds no argument information, so the
  // module is refused with UNSUPPORTED (and the core would try the module's next source).
  device->capabilities.kernel_formats |= ACCEL_KERNEL_FORMAT_SPIR;
  const std::string path = bitcode.string();
  accel_module_source_t source{};
  source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  source.struct_size = sizeof(source);
  source.format = ACCEL_KERNEL_FORMAT_SPIR;
  source.path = path.c_str();
  accel_bk_module_t module = nullptr;
  EXPECT_EQ(api->module_create(devices[0], &source, &module), ACCEL_ERROR_UNSUPPORTED);
  EXPECT_NE(host.last_error().find("CL_KERNEL_ARG_INFO_NOT_AVAILABLE"), std::string::npos) << host.last_error();
  EXPECT_NE(host.last_error().find("spir modules"), std::string::npos) << host.last_error();
  if (module != nullptr) api->module_destroy(module);
  // A blob that is no bitcode at all: INVALID_ARGUMENT, saying so.
  const char junk[] = "not bitcode";
  source.path = nullptr;
  source.data = junk;
  source.size = sizeof(junk);
  const accel_status_t junk_status = api->module_create(devices[0], &source, &module);
  EXPECT_EQ(junk_status, ACCEL_ERROR_INVALID_ARGUMENT) << host.last_error();
  if (junk_status == ACCEL_SUCCESS) api->module_destroy(module);
  api->context_destroy(context);
  EXPECT_FALSE(host.Logged("still alive")) << "the context left OpenCL objects behind";
}

}  // namespace
}  // namespace accel::opencl
