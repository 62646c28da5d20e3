/* Compiles accel.h and accel_backend.h as strict C99 (-std=c99 -pedantic
 * -Werror), checks every ABI pin at compile time, then again at run time
 * from the same list (struct_layout.h). Links nothing: it uses types,
 * macros and sizeof only. */
#include "accel/accel.h"
#include "accel/object_store.h"
#include "accel/runtime.h"
#include "accel_backend.h"

#include <stdio.h>
#include <string.h>

#include "struct_layout.h"

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ != 199901L
#error "header_c99.c must be compiled as C99"
#endif

typedef struct pin_row {
  const char* what;
  unsigned long long actual;
  unsigned long long pinned;
} pin_row;

#define ROW_(what, actual, pinned) {what, (unsigned long long)(actual), (unsigned long long)(pinned)},
#define ACCEL_PIN_SIZE(type, bytes) ROW_("sizeof(" #type ")", sizeof(type), bytes)
#define ACCEL_PIN_OFFSET(type, field, bytes) ROW_("offsetof(" #type ", " #field ")", offsetof(type, field), bytes)
#define ACCEL_PIN_ENUM(type, force32) ROW_("sizeof(" #type ")", sizeof(type), 4) ROW_(#force32, force32, 0x7FFFFFFF)
#define ACCEL_PIN_VALUE(name, value) ROW_(#name, name, value)
static const pin_row kPins[] = {
#include "struct_layout.h"
};

/* Uses the headers the way a backend does, without calling anything. */
static accel_status_t fake_get_api(accel_backend_get_api_args_t* args) {
  static accel_backend_api_t api;
  api.stype = ACCEL_STRUCTURE_TYPE_BACKEND_API;
  api.struct_size = (uint32_t)sizeof api;
  api.abi_version = ACCEL_BACKEND_ABI_VERSION;
  api.name = "fake";
  if (ACCEL_VERSION_MAJOR(args->core_abi_version_max) != ACCEL_BACKEND_ABI_VERSION_MAJOR) {
    return ACCEL_ERROR_INCOMPATIBLE_VERSION;
  }
  args->out_abi_version = ACCEL_BACKEND_ABI_VERSION;
  args->out_api = &api;
  return ACCEL_SUCCESS;
}

int main(int argc, char** argv) {
  size_t i;
  size_t failures = 0;
  int list = argc > 1 && strcmp(argv[1], "--list") == 0;
  accel_backend_get_api_fn entry = fake_get_api;
  accel_backend_get_api_args_t args;
  accel_device_capabilities_t caps;

  if (!ACCEL_PIN_LP64) {
    printf("struct pins are LP64-only; skipped\n");
    return 77;
  }
  for (i = 0; i < sizeof kPins / sizeof kPins[0]; ++i) {
    if (list || kPins[i].actual != kPins[i].pinned) {
      printf("%s %s = %llu (pinned %llu)\n", kPins[i].actual == kPins[i].pinned ? "ok  " : "FAIL", kPins[i].what,
             kPins[i].actual, kPins[i].pinned);
    }
    failures += kPins[i].actual != kPins[i].pinned;
  }

  memset(&args, 0, sizeof args);
  args.stype = ACCEL_STRUCTURE_TYPE_BACKEND_GET_API_ARGS;
  args.struct_size = (uint32_t)sizeof args;
  args.core_abi_version_min = ACCEL_MAKE_VERSION(1, 0, 0);
  args.core_abi_version_max = ACCEL_BACKEND_ABI_VERSION;
  if (entry(&args) != ACCEL_SUCCESS || args.out_api == NULL || args.out_api->struct_size != 432 ||
      ACCEL_VERSION_MINOR(ACCEL_MAKE_VERSION(1, 7, 3)) != 7 || ACCEL_VERSION_PATCH(ACCEL_MAKE_VERSION(1, 7, 3)) != 3) {
    printf("FAIL negotiation through the header's types\n");
    ++failures;
  }
  /* ACCEL_STRUCT_HAS_FIELD: the full struct holds out_api; a prefix cut
   * before it (an older peer's struct) does not, but still holds host. */
  if (!ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, out_api)) {
    printf("FAIL ACCEL_STRUCT_HAS_FIELD on a full struct\n");
    ++failures;
  }
  args.struct_size = (uint32_t)offsetof(accel_backend_get_api_args_t, out_api);
  if (ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, out_api) ||
      !ACCEL_STRUCT_HAS_FIELD(&args, accel_backend_get_api_args_t, host)) {
    printf("FAIL ACCEL_STRUCT_HAS_FIELD on a shorter struct\n");
    ++failures;
  }
  memset(&caps, 0, sizeof caps);
  caps.numeric_formats = ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_BF16;
  if (sizeof caps.name != ACCEL_NAME_SIZE || (caps.numeric_formats & ACCEL_NUMERIC_FORMAT_FP64) != 0) {
    printf("FAIL capability fields\n");
    ++failures;
  }

  printf("C99: %u ABI pins checked, %u failed\n", (unsigned)(sizeof kPins / sizeof kPins[0]), (unsigned)failures);
  return failures == 0 ? 0 : 1;
}
