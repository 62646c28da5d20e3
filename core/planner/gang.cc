#include "gang.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace accel::planner {

std::string_view StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kPack: return "PACK";
    case Strategy::kSpread: return "SPREAD";
    case Strategy::kStrictPack: return "STRICT_PACK";
    case Strategy::kStrictSpread: return "STRICT_SPREAD";
  }
  return "?";
}

std::optional<Strategy> ParseStrategy(std::string_view name) {
  for (Strategy s : {Strategy::kPack, Strategy::kSpread, Strategy::kStrictPack, Strategy::kStrictSpread}) {
    if (StrategyName(s) == name) return s;
  }
  return std::nullopt;
}

Expected<PreparedGang> Prepare(const Gang& gang) {
  if (gang.bundles.empty()) return Error{"bundles: the gang has no bundles"};
  PreparedGang out;
  for (size_t b = 0; b < gang.bundles.size(); ++b) {
    const Bundle& bundle = gang.bundles[b];
    if (bundle.devices == 0) return Error{fmt::format("bundles[{}].devices: zero devices (must be at least 1)", b)};
    if (std::isnan(bundle.share)) return Error{fmt::format("bundles[{}].share: NaN (must be in (0, 1])", b)};
    if (!(bundle.share > 0.0) || bundle.share > 1.0) {
      return Error{fmt::format("bundles[{}].share: {} is out of range (must be in (0, 1])", b, bundle.share)};
    }
    const auto share = static_cast<int64_t>(std::llround(bundle.share * static_cast<double>(kShareUnits)));
    if (share <= 0) return Error{fmt::format("bundles[{}].share: {} is below the resolution 1e-6", b, bundle.share)};
    int32_t sel = -1;
    if (!bundle.selector.empty()) {
      auto parsed = selector::Parse(bundle.selector);
      if (!parsed) return Error{fmt::format("bundles[{}].selector: {}", b, parsed.error().ToString())};
      sel = static_cast<int32_t>(out.selectors.size());
      out.selectors.push_back(parsed.value());
    }
    for (uint32_t i = 0; i < bundle.devices; ++i) {
      out.units.push_back(Unit{static_cast<uint32_t>(b), share, bundle.memory, sel});
      out.total_share += share;
    }
  }
  std::stable_sort(out.units.begin(), out.units.end(), [](const Unit& a, const Unit& b) {
    return a.share != b.share ? a.share > b.share : a.memory > b.memory;
  });
  return out;
}

}  // namespace accel::planner
