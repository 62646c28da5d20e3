// Skew, the other way round: this test plays a "future 1.2" core (built
// against tests/skew/future/accel_backend.h) and loads today's 1.1 backends
// directly. They must answer 1.1, hand back a 1.1-sized table (so the 1.2
// slot reads as absent) and ignore the 1.2 field they do not know.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "accel_backend.h"  // the future copy: the include path puts it first

namespace {

static_assert(ACCEL_BACKEND_ABI_VERSION == ACCEL_MAKE_VERSION(1, 2, 0), "this test must see the future header");

struct FakeCore {
  static void Log(void*, accel_log_level_t, const char*) {}
  static void SetError(void* context, accel_status_t, const char* message) {
    *static_cast<std::string*>(context) = message != nullptr ? message : "";
  }
  static void* Alloc(void*, size_t size, size_t) { return std::malloc(size); }
  static void Free(void*, void* p) { std::free(p); }

  std::string last_error;
  accel_host_services_t services{};
  FakeCore() {
    services.stype = ACCEL_STRUCTURE_TYPE_HOST_SERVICES;
    services.struct_size = sizeof(services);
    services.context = &last_error;
    services.log = &Log;
    services.set_error = &SetError;
    services.allocate = &Alloc;
    services.deallocate = &Free;
    services.machine_id = "skew-test-machine";
  }
};

class NewerCore : public ::testing::TestWithParam<const char*> {};

TEST_P(NewerCore, OlderMinorBackendNegotiatesItsOwnVersion) {
  void* lib = dlopen(GetParam(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto get_api = reinterpret_cast<accel_backend_get_api_fn>(dlsym(lib, ACCEL_BACKEND_ENTRY_POINT_NAME));
  ASSERT_NE(get_api, nullptr);

  FakeCore core;
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);  // larger than any 1.1 backend knows
  args.core_abi_version_min = ACCEL_MAKE_VERSION(1, 0, 0);
  args.core_abi_version_max = ACCEL_MAKE_VERSION(1, 2, 0);
  args.host = &core.services;
  args.core_features = 0x5;
  ASSERT_EQ(get_api(&args), ACCEL_SUCCESS) << core.last_error;
  EXPECT_EQ(args.out_abi_version, ACCEL_MAKE_VERSION(1, 1, 0));
  const accel_backend_api_t* table = args.out_api;
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->abi_version, ACCEL_MAKE_VERSION(1, 1, 0));
  // A 1.1 table ends before the 1.2 slot: a 1.2 core treats it as NULL.
  EXPECT_LE(table->struct_size, offsetof(accel_backend_api_t, device_get_future_value));
  EXPECT_EQ(args.core_features, 0x5u) << "a backend must not write fields it does not know";

  accel_bk_context_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC;
  desc.struct_size = sizeof(desc);
  desc.host = &core.services;
  desc.abi_version = args.out_abi_version;
  accel_bk_context_t context = nullptr;
  ASSERT_EQ(table->context_create(&desc, &context), ACCEL_SUCCESS) << core.last_error;
  uint32_t count = 0;
  ASSERT_EQ(table->context_get_devices(context, &count, nullptr), ACCEL_SUCCESS);
  ASSERT_GE(count, 1u);
  accel_bk_device_t device = nullptr;
  count = 1;
  ASSERT_EQ(table->context_get_devices(context, &count, &device), ACCEL_SUCCESS);
  accel_device_capabilities_t caps{};
  caps.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  caps.struct_size = sizeof(caps);
  ASSERT_EQ(table->device_get_capabilities(device, &caps), ACCEL_SUCCESS);
  EXPECT_GT(caps.memory_total, 0u);
  EXPECT_STREQ(caps.stable_id, "") << "stable_id is the core's to fill";
  table->context_destroy(context);
  dlclose(lib);
}

TEST(NewerCore, SmallerCapabilitiesStructIsFilledOnlyUpToItsSize) {
  void* lib = dlopen(ACCEL_TEST_HOST_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto get_api = reinterpret_cast<accel_backend_get_api_fn>(dlsym(lib, ACCEL_BACKEND_ENTRY_POINT_NAME));
  FakeCore core;
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof(args);
  args.core_abi_version_min = ACCEL_MAKE_VERSION(1, 0, 0);
  args.core_abi_version_max = ACCEL_MAKE_VERSION(1, 2, 0);
  args.host = &core.services;
  ASSERT_EQ(get_api(&args), ACCEL_SUCCESS);
  accel_bk_context_desc_t desc{};
  desc.stype = ACCEL_STRUCTURE_TYPE_BACKEND_CONTEXT_DESC;
  desc.struct_size = sizeof(desc);
  desc.host = &core.services;
  desc.abi_version = args.out_abi_version;
  accel_bk_context_t context = nullptr;
  ASSERT_EQ(args.out_api->context_create(&desc, &context), ACCEL_SUCCESS);
  accel_bk_device_t device = nullptr;
  uint32_t count = 1;
  ASSERT_EQ(args.out_api->context_get_devices(context, &count, &device), ACCEL_SUCCESS);
  // An older peer's struct that ends right after memory_total: nothing past it may be written.
  unsigned char storage[sizeof(accel_device_capabilities_t)];
  std::memset(storage, 0xEE, sizeof(storage));
  auto* caps = reinterpret_cast<accel_device_capabilities_t*>(storage);
  std::memset(caps, 0, offsetof(accel_device_capabilities_t, max_allocation));
  caps->stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  caps->struct_size = offsetof(accel_device_capabilities_t, max_allocation);
  ASSERT_EQ(args.out_api->device_get_capabilities(device, caps), ACCEL_SUCCESS);
  EXPECT_GT(caps->memory_total, 0u);
  for (size_t i = offsetof(accel_device_capabilities_t, max_allocation); i < sizeof(storage); ++i) {
    ASSERT_EQ(storage[i], 0xEE) << "byte " << i << " past struct_size was written";
  }
  args.out_api->context_destroy(context);
  dlclose(lib);
}

INSTANTIATE_TEST_SUITE_P(Backends, NewerCore,
                         ::testing::Values(ACCEL_TEST_HOST_LIBRARY,
                                           ACCEL_TEST_BACKEND_DIR "/libaccel_backend_fake_good.so"),
                         [](const auto& param_info) {
                           return std::string(param_info.index == 0 ? "Host" : "FakeGood");
                         });

}  // namespace
