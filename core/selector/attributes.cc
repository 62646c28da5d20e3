// Attribute views.
#include "attributes.h"

#include <algorithm>

namespace accel::selector {

bool NameSet::Has(std::string_view name) const { return std::find(names.begin(), names.end(), name) != names.end(); }

std::optional<Value> MapAttributes::Get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

}  // namespace accel::selector
