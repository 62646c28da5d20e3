// The gangs file accel-plan reads (docs/planner.md, "CLI"): the gangs to
// place, in order, each all-or-nothing, optionally releasing earlier ones
// first. Pure functions of the text: thread-safe.
#ifndef ACCEL_TOOLS_ACCEL_PLAN_GANGS_FILE_H_
#define ACCEL_TOOLS_ACCEL_PLAN_GANGS_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "expected.h"
#include "gang.h"

namespace accel::plan {

// The most device units one gang may ask for (the sum of its bundles'
// `devices`): a larger gang is bad input, not a refusal.
inline constexpr uint64_t kMaxUnitsPerGang = uint64_t{1} << 20;

// One entry of the file: a named gang, and the earlier gangs it releases
// before it is placed. Plain value.
struct GangRequest {
  std::string name;             // unique in the file; "gang<i>" when the entry has none
  planner::Gang gang;           // validated: planner::Prepare accepts it
  std::vector<size_t> release;  // indices of earlier entries, each released once in the whole file
};

// Parses a gangs file: {"format_version": "1.x", "gangs": [{"name", "strategy",
// "level", "required", "bundles": [{"devices", "share", "memory", "selector"}],
// "release": ["<earlier name>", ...]}, ...]}, with a "comment" of any value
// allowed at each of the three levels. Unknown fields are errors (a misspelt
// "strategy" would otherwise silently mean PACK). Errors are
// "<source>: <field>: <reason>": "g.json: gangs[1].bundles[0].devices: zero
// devices (must be at least 1)", "g.json: not valid JSON: ...".
planner::Expected<std::vector<GangRequest>> ParseGangs(std::string_view text, std::string_view source);
// Reads and parses the file at `path`; "<path>: cannot open" when it cannot be read.
planner::Expected<std::vector<GangRequest>> LoadGangs(const std::string& path);

// A byte size: digits with an optional fraction and unit (B, kB, KB, MB, GB,
// TB, KiB, MiB, GiB, TiB), a space allowed before the unit: "40GiB",
// "1.5 TB", "4096". Fractions of a byte are dropped. Errors say why.
planner::Expected<uint64_t> ParseBytes(std::string_view text);

}  // namespace accel::plan

#endif  // ACCEL_TOOLS_ACCEL_PLAN_GANGS_FILE_H_
