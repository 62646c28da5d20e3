// Compiles accel.h and accel_backend.h as strict C++17 (-std=c++17 -pedantic
// -Werror) and checks the same ABI pins as header_c99.c (struct_layout.h), so
// both languages agree on every layout. Links nothing.
#include "accel/accel.h"
#include "accel/object_store.h"
#include "accel/runtime.h"
#include "accel_backend.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "struct_layout.h"

static_assert(__cplusplus == 201703L, "header_cxx17.cc must be compiled as C++17");

// Every ABI type is plain C data in C++ too: trivially copyable (memcpy and
// zero-initialisation are well defined) and standard-layout (offsetof is).
#define ACCEL_PIN_SIZE(type, bytes)                                                              \
  static_assert(std::is_trivially_copyable<type>::value && std::is_standard_layout<type>::value, \
                #type " is plain data");
#define ACCEL_PIN_OFFSET(type, field, bytes)
#define ACCEL_PIN_ENUM(enum_type, force32) \
  static_assert(sizeof(std::underlying_type_t<enum_type>) == 4, #enum_type " has a 32-bit underlying type");
#define ACCEL_PIN_VALUE(name, value)
#include "struct_layout.h"

namespace {

struct PinRow {
  const char* what;
  unsigned long long actual;
  unsigned long long pinned;
};

#define ROW_(what, actual, pinned) \
  {what, static_cast<unsigned long long>(actual), static_cast<unsigned long long>(pinned)},
#define ACCEL_PIN_SIZE(type, bytes) ROW_("sizeof(" #type ")", sizeof(type), bytes)
#define ACCEL_PIN_OFFSET(type, field, bytes) ROW_("offsetof(" #type ", " #field ")", offsetof(type, field), bytes)
#define ACCEL_PIN_ENUM(type, force32) ROW_("sizeof(" #type ")", sizeof(type), 4) ROW_(#force32, force32, 0x7FFFFFFF)
#define ACCEL_PIN_VALUE(name, value) ROW_(#name, name, value)
const PinRow kPins[] = {
#include "struct_layout.h"
};
#undef ROW_

// Uses the backend header the way a C++ backend does, without calling
// anything outside this file.
accel_status_t FakeGetApi(accel_backend_get_api_args_t* args) {
  static accel_backend_api_t api{};
  api.stype = ACCEL_STRUCTURE_TYPE_BACKEND_API;
  api.struct_size = sizeof api;
  api.abi_version = ACCEL_BACKEND_ABI_VERSION;
  api.name = "fake";
  api.context_destroy = [](accel_bk_context_t) {};
  if (ACCEL_VERSION_MAJOR(args->core_abi_version_max) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
    return ACCEL_ERROR_INCOMPATIBLE_VERSION;
  }
  args->out_abi_version = ACCEL_BACKEND_ABI_VERSION;
  args->out_api = &api;
  return ACCEL_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const bool list = argc > 1 && std::strcmp(argv[1], "--list") == 0;
  if (!ACCEL_PIN_LP64) {
    std::printf("struct pins are LP64-only; skipped\n");
    return 77;
  }
  unsigned failures = 0;
  for (const PinRow& pin : kPins) {
    if (list || pin.actual != pin.pinned) {
      std::printf("%s %s = %llu (pinned %llu)\n", pin.actual == pin.pinned ? "ok  " : "FAIL", pin.what, pin.actual,
                  pin.pinned);
    }
    failures += pin.actual != pin.pinned ? 1u : 0u;
  }

  accel_backend_get_api_fn entry = FakeGetApi;
  accel_backend_get_api_args_t args{};
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = sizeof args;
  args.core_abi_version_min = ACCEL_MAKE_VERSION(1, 0, 0);
  args.core_abi_version_max = ACCEL_BACKEND_ABI_VERSION;
  if (entry(&args) != ACCEL_SUCCESS || args.out_api == nullptr || args.out_api->struct_size != 432 ||
      args.out_api->context_destroy == nullptr) {
    std::printf("FAIL negotiation through the header's types\n");
    ++failures;
  }

  // ACCEL_STRUCT_HAS_FIELD: the full struct holds out_api; a prefix cut before
  // it (an older peer's struct) does not, but still holds host.
  if (!ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, out_api)) {
    std::printf("FAIL ACCEL_STRUCT_HAS_FIELD on a full struct\n");
    ++failures;
  }
  args.struct_size = static_cast<uint32_t>(offsetof(accel_backend_get_api_args_t, out_api));
  if (ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, out_api) ||
      !ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, host)) {
    std::printf("FAIL ACCEL_STRUCT_HAS_FIELD on a shorter struct\n");
    ++failures;
  }

  std::printf("C++17: %u ABI pins checked, %u failed\n", static_cast<unsigned>(sizeof kPins / sizeof kPins[0]),
              failures);
  return failures == 0 ? 0 : 1;
}
