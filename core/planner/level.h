// The topology levels a gang constrains (docs/planner.md, "Levels"): clique,
// PCIe root, NUMA node, node, rack, block. Pure functions: thread-safe.
#ifndef ACCEL_CORE_PLANNER_LEVEL_H_
#define ACCEL_CORE_PLANNER_LEVEL_H_

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace accel::planner {

enum class Level : unsigned char { kClique, kPcieRoot, kNuma, kNode, kRack, kBlock };
inline constexpr size_t kLevelCount = 6;
inline constexpr std::array<Level, kLevelCount> kAllLevels = {Level::kClique, Level::kPcieRoot, Level::kNuma,
                                                              Level::kNode,   Level::kRack,     Level::kBlock};

// "clique", "pcie_root", "numa", "node", "rack", "block".
std::string_view LevelName(Level level);
// The level named `name` (as LevelName prints it), or nullopt.
std::optional<Level> ParseLevel(std::string_view name);

}  // namespace accel::planner

#endif  // ACCEL_CORE_PLANNER_LEVEL_H_
