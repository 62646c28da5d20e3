// C entry points: capability selectors over physical devices
// (docs/selectors.md, "From C").
#include "api_common.h"
#include "selector.h"

using namespace accel::core;  // NOLINT(google-build-using-namespace)

namespace {

// The parsed selector, or INVALID_ARGUMENT naming the column and what was
// expected ("'selector' column 20: expected a value after '>=', found ')'").
Expected<accel::selector::Selector> ParseArgument(const char* text, uint32_t* out_error_column) {
  if (text == nullptr) return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'selector' is NULL");
  auto parsed = accel::selector::Parse(text);
  if (!parsed) {
    if (out_error_column != nullptr) *out_error_column = static_cast<uint32_t>(parsed.error().column());
    return Error(ACCEL_ERROR_INVALID_ARGUMENT, "'selector' {}", parsed.error().ToString());
  }
  return parsed.value();
}

std::string PhysicalId(const PhysicalDevice& physical) {
  return std::string(physical.props.stable_id, strnlen(physical.props.stable_id, sizeof(physical.props.stable_id)));
}

}  // namespace

extern "C" {

ACCEL_API accel_status_t accel_selector_check(const char* selector, uint32_t* out_error_column) {
  return Guarded(__func__, [&]() -> Status {
    if (out_error_column != nullptr) *out_error_column = 0;
    auto parsed = ParseArgument(selector, out_error_column);
    return parsed.ok() ? Status::Ok() : parsed.status();
  });
}

ACCEL_API accel_status_t accel_physical_device_matches(accel_physical_device_t physical_device, const char* selector,
                                                       uint32_t* out_matches) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PhysicalDevice, physical_device);
    ACCEL_NOT_NULL(out_matches);
    auto parsed = ParseArgument(selector, nullptr);
    if (!parsed.ok()) return parsed.status();
    *out_matches = parsed->Matches(PhysicalAttributes(self->devices, PhysicalId(*self))) ? 1 : 0;
    return Status::Ok();
  });
}

ACCEL_API accel_status_t accel_physical_device_explain(accel_physical_device_t physical_device, const char* selector,
                                                       size_t size, char* out_text, size_t* out_size) {
  return Guarded(__func__, [&]() -> Status {
    ACCEL_RESOLVE(self, PhysicalDevice, physical_device);
    ACCEL_REQUIRE(out_text != nullptr || out_size != nullptr, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'out_text' and 'out_size' are both NULL");
    auto parsed = ParseArgument(selector, nullptr);
    if (!parsed.ok()) return parsed.status();
    const std::string why = parsed->Explain(PhysicalAttributes(self->devices, PhysicalId(*self)));
    if (out_size != nullptr) *out_size = why.size() + 1;
    if (out_text == nullptr) return Status::Ok();
    ACCEL_REQUIRE(size >= why.size() + 1, ACCEL_ERROR_INVALID_ARGUMENT,
                  "'size' {} is too small for the explanation ({} bytes needed)", size, why.size() + 1);
    std::memcpy(out_text, why.c_str(), why.size() + 1);
    return Status::Ok();
  });
}

}  // extern "C"
