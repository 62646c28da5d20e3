#include "level.h"

namespace accel::planner {

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kClique: return "clique";
    case Level::kPcieRoot: return "pcie_root";
    case Level::kNuma: return "numa";
    case Level::kNode: return "node";
    case Level::kRack: return "rack";
    case Level::kBlock: return "block";
  }
  return "?";
}

std::optional<Level> ParseLevel(std::string_view name) {
  for (Level level : kAllLevels) {
    if (LevelName(level) == name) return level;
  }
  return std::nullopt;
}

}  // namespace accel::planner
