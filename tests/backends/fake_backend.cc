// A deliberately small backend for loader tests, built several times with a
// different FAKE_MODE each (see CMakeLists.txt):
//   FAKE_MODE_GOOD       one fake device, only the REQUIRED slots (every other slot NULL)
//   FAKE_MODE_MAJOR2     declares and answers ABI 2.0
//   FAKE_MODE_INIT_FAIL  context_create fails with a message
//   FAKE_MODE_NULL_REQUIRED  device_get_capabilities is NULL
//   FAKE_MODE_FUTURE     built against tests/skew/future (ABI 1.1: one more
//                        table slot, one more host-services field)
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

#include "accel_backend.h"

namespace {

#if defined(FAKE_MODE_FUTURE)
// What the core said in the 1.1 field of the negotiation args; 0 when the
// core's (older) struct did not have the field.
std::atomic<uint64_t> g_core_features{0};
#endif

struct Context {
  const accel_host_services_t* host;
  int device_token;
};

accel_status_t Fail(const accel_host_services_t* host, accel_status_t status, const char* message) {
  if (host != nullptr && host->set_error != nullptr) host->set_error(host->context, status, message);
  return status;
}

accel_status_t ContextCreate(const accel_bk_context_desc_t* desc, accel_bk_context_t* out) {
#if defined(FAKE_MODE_INIT_FAIL)
  (void)out;
  return Fail(desc->host, ACCEL_ERROR_BACKEND_UNAVAILABLE, "fake driver: /dev/fake0 is missing");
#else
  auto* c = new (std::nothrow) Context{desc->host, 0};
  if (c == nullptr) return ACCEL_ERROR_RESOURCE_EXHAUSTED;
  *out = reinterpret_cast<accel_bk_context_t>(c);
  return ACCEL_SUCCESS;
#endif
}

[[maybe_unused]] void ContextDestroy(accel_bk_context_t context) { delete reinterpret_cast<Context*>(context); }

accel_status_t GetDevices(accel_bk_context_t context, uint32_t* inout_count, accel_bk_device_t* out) {
  auto* c = reinterpret_cast<Context*>(context);
  if (out != nullptr) {
    if (*inout_count < 1) return Fail(c->host, ACCEL_ERROR_INVALID_ARGUMENT, "capacity too small");
    out[0] = reinterpret_cast<accel_bk_device_t>(&c->device_token);
  }
  *inout_count = 1;
  return ACCEL_SUCCESS;
}

[[maybe_unused]] accel_status_t GetCapabilities(accel_bk_device_t /*device*/, accel_device_capabilities_t* out) {
  out->kind = ACCEL_DEVICE_KIND_NPU;
  out->flags = ACCEL_DEVICE_FLAG_SIMULATED;
  out->memory_total = uint64_t{1} << 30;
  out->max_allocation = uint64_t{1} << 30;
  out->compute_units = 4;
  std::strncpy(out->name, FAKE_DEVICE_NAME, sizeof(out->name) - 1);
#if defined(FAKE_MODE_FUTURE)
  if (g_core_features.load() == 0)
    std::strncat(out->name, " (core features: none)", sizeof(out->name) - 1 - std::strlen(out->name));
#endif
  std::strncpy(out->vendor, "Accel tests", sizeof(out->vendor) - 1);
#if defined(FAKE_UUID_BYTE)
  // Two backends reaching one chip: the same unique UUID.
  std::memset(out->uuid, FAKE_UUID_BYTE, sizeof(out->uuid));
  out->flags |= ACCEL_DEVICE_FLAG_UUID_UNIQUE;
#endif
  return ACCEL_SUCCESS;
}

#if defined(FAKE_MODE_FUTURE)
accel_status_t FutureSlot(accel_bk_device_t /*device*/, uint32_t* out_value) {
  *out_value = 11;
  return ACCEL_SUCCESS;
}
#endif

#if defined(FAKE_MODE_MAJOR2)
constexpr uint32_t kTableVersion = ACCEL_MAKE_VERSION(2, 0, 0);
#else
constexpr uint32_t kTableVersion = ACCEL_BACKEND_ABI_VERSION;
#endif

accel_backend_api_t MakeTable() {
  accel_backend_api_t t{};
  t.stype = ACCEL_STRUCTURE_TYPE_BACKEND_API;
  t.struct_size = sizeof(t);
  t.abi_version = kTableVersion;
  t.name = FAKE_BACKEND_NAME;
  t.version = "0.0.1-test";
  t.context_create = &ContextCreate;
  t.context_destroy = &ContextDestroy;
  t.context_get_devices = &GetDevices;
#if !defined(FAKE_MODE_NULL_REQUIRED)
  t.device_get_capabilities = &GetCapabilities;
#endif
#if defined(FAKE_MODE_FUTURE)
  t.device_get_future_value = &FutureSlot;
#endif
  return t;
}

const accel_backend_api_t kTable = MakeTable();

}  // namespace

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  if (args == nullptr || args->struct_size < offsetof(accel_backend_get_api_args_t, out_api) + sizeof(void*)) {
    return ACCEL_ERROR_INVALID_ARGUMENT;
  }
  const uint32_t core_major = ACCEL_VERSION_MAJOR(args->core_abi_version_max);
  if (core_major != ACCEL_VERSION_MAJOR(kTableVersion)) {
#if !defined(FAKE_MODE_MAJOR2)
    return Fail(args->host, ACCEL_ERROR_INCOMPATIBLE_VERSION, "fake backend speaks ABI major 1 only");
#endif
  }
#if defined(FAKE_MODE_MAJOR2)
  args->out_abi_version = kTableVersion;  // Answers 2.0 whatever the core says.
#else
  args->out_abi_version = args->core_abi_version_max < kTableVersion ? args->core_abi_version_max : kTableVersion;
#endif
#if defined(FAKE_MODE_FUTURE)
  // A receiver reads a field only where the sender's struct_size covers it.
  const bool has_features =
      args->struct_size >= offsetof(accel_backend_get_api_args_t, core_features) + sizeof(uint64_t);
  g_core_features = has_features ? args->core_features : 0;
#endif
  args->out_api = &kTable;
  return ACCEL_SUCCESS;
}
