// libFuzzer target for the topology description parser (backends/sim/profile.h)
// and the ACCEL_SIM_FAULTS parser: any input either parses or is rejected with a
// message; nothing crashes, leaks or reads out of bounds (ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  auto profile = accel::sim::ParseProfile(text, "fuzz.json", &error);
  if (!profile && error.rfind("fuzz.json: ", 0) != 0) __builtin_trap();  // every rejection names the file
  if (profile && profile->devices.empty()) __builtin_trap();             // a profile has at least one device
  accel::sim::FaultSpec faults;
  (void)accel::sim::ParseFaults(text, &faults, &error);
  return 0;
}
