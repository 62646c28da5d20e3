// A deliberately small backend for loader tests, built several times with a
// different FAKE_MODE each (see CMakeLists.txt):
//   FAKE_MODE_GOOD       one fake device, only the REQUIRED slots (every other slot NULL)
//   FAKE_MODE_MAJOR2     declares and answers ABI 2.0
//   FAKE_MODE_INIT_FAIL  context_create fails with a message
//   FAKE_MODE_NULL_REQUIRED  device_get_capabilities is NULL
//   FAKE_MODE_FUTURE     built against tests/skew/future (ABI 1.2: one more
//                        table slot, one more host-services field)
//   FAKE_MODE_MISBEHAVE  one device, modules, NICs and domains, broken at run time the way the environment variable
//                        ACCEL_TEST_MISBEHAVE says: tiny_table (an 8-byte function table), devices_huge,
//                        devices_grow (the second call reports more than its room), devices_null, strings (every
//                        capability string fills its field without a NUL), nics_huge, nics_grow, domains_huge,
//                        kernels_huge, bad_name (the table's name breaks the manifest's rule), bad_link_class (a
//                        NIC link of class 4242)
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "accel_backend.h"

namespace {

#if defined(FAKE_MODE_MISBEHAVE)
bool Misbehaves(const char* how) {
  const char* mode = std::getenv("ACCEL_TEST_MISBEHAVE");
  return mode != nullptr && std::strcmp(mode, how) == 0;
}

// The counts a broken enumeration reports: its first call (count) and its second (after writing `written` entries).
uint32_t FirstCount(const char* huge, uint32_t real) { return Misbehaves(huge) ? UINT32_MAX : real; }
uint32_t SecondCount(const char* grow, uint32_t real) { return Misbehaves(grow) ? real + 2 : real; }
#else
uint32_t FirstCount(const char* /*huge*/, uint32_t real) { return real; }
uint32_t SecondCount(const char* /*grow*/, uint32_t real) { return real; }
#endif

#if defined(FAKE_MODE_FUTURE)
// What the core said in the 1.2 field of the negotiation args; 0 when the
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
  if (out == nullptr) {
    *inout_count = FirstCount("devices_huge", 1);
    return ACCEL_SUCCESS;
  }
  if (*inout_count < 1) return Fail(c->host, ACCEL_ERROR_INVALID_ARGUMENT, "capacity too small");
  out[0] = reinterpret_cast<accel_bk_device_t>(&c->device_token);
#if defined(FAKE_MODE_MISBEHAVE)
  if (Misbehaves("devices_null")) out[0] = nullptr;
#endif
  *inout_count = SecondCount("devices_grow", 1);
  return ACCEL_SUCCESS;
}

#if defined(FAKE_MODE_MISBEHAVE)
accel_status_t GetNics(accel_bk_context_t /*context*/, uint32_t* inout_count, accel_nic_properties_t* out) {
  if (out == nullptr) {
    *inout_count = FirstCount("nics_huge", 1);
    return ACCEL_SUCCESS;
  }
  if (*inout_count < 1) return ACCEL_ERROR_INVALID_ARGUMENT;
  std::strncpy(out[0].name, "fake0", sizeof(out[0].name) - 1);
  std::strncpy(out[0].kind, "ethernet", sizeof(out[0].kind) - 1);
  *inout_count = SecondCount("nics_grow", 1);
  return ACCEL_SUCCESS;
}

accel_status_t GetNicLink(accel_bk_device_t /*device*/, uint32_t /*nic_index*/, accel_device_link_t* out) {
  // bad_link_class: a class no version of the ABI names.
  out->link_class = Misbehaves("bad_link_class") ? static_cast<accel_link_class_t>(4242) : ACCEL_LINK_CLASS_PIX;
  return ACCEL_SUCCESS;
}

accel_status_t GetDomains(accel_bk_device_t /*device*/, uint32_t* inout_count, accel_domain_t* out) {
  if (out == nullptr) {
    *inout_count = FirstCount("domains_huge", 1);
    return ACCEL_SUCCESS;
  }
  if (*inout_count < 1) return ACCEL_ERROR_INVALID_ARGUMENT;
  out[0].level = ACCEL_DOMAIN_LEVEL_RACK;
  std::strncpy(out[0].id, "r1", sizeof(out[0].id) - 1);
  *inout_count = 1;
  return ACCEL_SUCCESS;
}

int g_module_token = 0;
const char* const kKernelNames[] = {"fake_kernel"};

accel_status_t ModuleCreate(accel_bk_device_t /*device*/, const accel_module_source_t* /*source*/,
                            accel_bk_module_t* out) {
  *out = reinterpret_cast<accel_bk_module_t>(&g_module_token);
  return ACCEL_SUCCESS;
}

void ModuleDestroy(accel_bk_module_t /*module*/) {}

accel_status_t EnumerateKernels(accel_bk_module_t /*module*/, uint32_t* inout_count, const char** out) {
  if (out == nullptr) {
    *inout_count = FirstCount("kernels_huge", 1);
    return ACCEL_SUCCESS;
  }
  if (*inout_count < 1) return ACCEL_ERROR_INVALID_ARGUMENT;
  out[0] = kKernelNames[0];
  *inout_count = 1;
  return ACCEL_SUCCESS;
}
#endif

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
#if defined(FAKE_MODE_MISBEHAVE)
  out->kernel_formats = ACCEL_KERNEL_FORMAT_SPIR;
  if (Misbehaves("strings")) {
    for (auto* field : {out->name, out->vendor, out->architecture, out->sku, out->driver_version}) {
      std::memset(field, 'x', ACCEL_SHORT_STRING_SIZE);
    }
    std::memset(out->name, 'x', sizeof(out->name));
    std::memset(out->pci_bus_id, 'x', sizeof(out->pci_bus_id));
  }
#endif
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
#if defined(FAKE_MODE_MISBEHAVE)
  t.context_get_nics = &GetNics;
  t.device_get_nic_link = &GetNicLink;
  t.device_get_domains = &GetDomains;
  t.module_create = &ModuleCreate;
  t.module_destroy = &ModuleDestroy;
  t.module_enumerate_kernels = &EnumerateKernels;
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
#if defined(FAKE_MODE_MISBEHAVE)
  if (Misbehaves("bad_name")) {
    static accel_backend_api_t renamed = kTable;
    renamed.name = "Not A Name!";
    args->out_api = &renamed;
  }
  if (Misbehaves("tiny_table")) {
    // Only the stype and struct_size, in a global of their size: a core that reads further reads past it (ASan's
    // global redzones say so). Not malloc'd: the library is closed with the pointer, which LeakSanitizer reports.
    alignas(8) static uint32_t tiny[2] = {ACCEL_STRUCTURE_TYPE_BACKEND_API, 2 * sizeof(uint32_t)};
    args->out_api = reinterpret_cast<const accel_backend_api_t*>(tiny);
  }
#endif
  return ACCEL_SUCCESS;
}
