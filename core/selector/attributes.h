// The attribute view a selector evaluates against: capability key name ->
// typed value. It does not depend on libaccel, so the same selector evaluates
// a live device, a physical device's union of paths, or a device of a
// serialised topology description (docs/selectors.md).
#ifndef ACCEL_CORE_SELECTOR_ATTRIBUTES_H_
#define ACCEL_CORE_SELECTOR_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace accel::selector {

// A set of named bits ("peer-access", "ptx"), by the names core/names prints.
struct NameSet {
  std::vector<std::string> names;
  bool Has(std::string_view name) const;
};

// One attribute's value. Sizes are uint64 bytes; kind is its name ("gpu").
// Plain value.
using Value = std::variant<uint64_t, int64_t, bool, std::string, NameSet>;

// Read access to one device's attributes by canonical key name
// (docs/selectors.md, "Keys"). Implementations are read-only while a
// selector evaluates them; the selector itself never keeps a reference.
class Attributes {
 public:
  virtual ~Attributes() = default;
  // The value of `key`, or nullopt when the device does not report it.
  virtual std::optional<Value> Get(std::string_view key) const = 0;
};

// Attributes held in a map. Not thread-safe while being modified.
class MapAttributes : public Attributes {
 public:
  std::optional<Value> Get(std::string_view key) const override;
  void Set(std::string key, Value value) { values_[std::move(key)] = std::move(value); }
  const std::map<std::string, Value, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace accel::selector

#endif  // ACCEL_CORE_SELECTOR_ATTRIBUTES_H_
