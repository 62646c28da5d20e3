// A gang (placement group): bundles reserved all-or-nothing under one
// strategy at one level (docs/planner.md, "Gangs"). Plain values; Prepare is
// a pure function: thread-safe.
#ifndef ACCEL_CORE_PLANNER_GANG_H_
#define ACCEL_CORE_PLANNER_GANG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expected.h"
#include "level.h"
#include "selector.h"

namespace accel::planner {

// Compute shares are fixed point: 1.0 (a whole device) is kShareUnits.
inline constexpr int64_t kShareUnits = 1'000'000;

// One bundle: `devices` devices, each with `share` of its compute and
// `memory` bytes, on devices matching `selector` ("" any). A bundle of n
// devices is n one-device units with the same request, on n distinct devices.
struct Bundle {
  uint32_t devices = 1;
  double share = 1.0;  // 0 < share <= 1
  uint64_t memory = 0;
  std::string selector;
};

enum class Strategy : unsigned char { kPack, kSpread, kStrictPack, kStrictSpread };
std::string_view StrategyName(Strategy strategy);  // "PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"
std::optional<Strategy> ParseStrategy(std::string_view name);

struct Gang {
  std::vector<Bundle> bundles;
  Strategy strategy = Strategy::kPack;
  Level level = Level::kNode;
  // STRICT_* only: false makes the constraint preferred, falling back to
  // PACK / SPREAD at the same level when it cannot hold.
  bool required = true;
};

// One device-sized unit of a gang, after validation.
struct Unit {
  uint32_t bundle = 0;
  int64_t share = 0;  // kShareUnits fixed point, > 0
  uint64_t memory = 0;
  int32_t selector = -1;  // index into PreparedGang::selectors; -1 none
};

struct PreparedGang {
  std::vector<Unit> units;  // largest share first, then largest memory
  std::vector<selector::Selector> selectors;
  int64_t total_share = 0;
};

// Validates `gang` and splits it into units. Errors name the field:
// "bundles: the gang has no bundles", "bundles[1].devices: zero devices",
// "bundles[0].share: NaN (must be in (0, 1])", "bundles[2].selector: column 5: ...".
Expected<PreparedGang> Prepare(const Gang& gang);

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_GANG_H_
