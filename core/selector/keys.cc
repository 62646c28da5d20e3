// The selector's name tables.
#include "keys.h"

#include <algorithm>
#include <cctype>

#include "names.h"

namespace accel::selector {
namespace {

constexpr Key kKeys[] = {
    {"kind", KeyType::kKind},
    {"name", KeyType::kString},
    {"vendor", KeyType::kString},
    {"vendor_id", KeyType::kUnsigned},
    {"device_id", KeyType::kUnsigned},
    {"architecture", KeyType::kString},
    {"sku", KeyType::kString},
    {"driver_version", KeyType::kString},
    {"backend_name", KeyType::kString},
    {"stable_id", KeyType::kString},
    {"physical_device_id", KeyType::kString},
    {"uuid", KeyType::kString},
    {"pci_bus_id", KeyType::kString},
    {"numa_node", KeyType::kSigned},
    {"flags", KeyType::kNameSet},
    {"simulated", KeyType::kBool},
    {"compute_units", KeyType::kUnsigned},
    {"clock_mhz", KeyType::kUnsigned},
    {"memory_total", KeyType::kBytes},
    {"memory_free", KeyType::kBytes},
    {"max_allocation", KeyType::kBytes},
    {"max_buffer_range", KeyType::kBytes},
    {"local_memory_size", KeyType::kBytes},
    {"max_work_group_size", KeyType::kUnsigned},
    {"max_work_group_dims", KeyType::kTriple},
    {"max_grid_dims", KeyType::kTriple},
    {"max_argument_size", KeyType::kUnsigned},
    {"subgroup_size", KeyType::kUnsigned},
    {"numeric_formats", KeyType::kNameSet},
    {"kernel_formats", KeyType::kNameSet},
    {"modeled_kernel_formats", KeyType::kNameSet},
    {"features", KeyType::kNameSet},
};

constexpr Alias kAliases[] = {
    {"mem", "memory_total"},     {"memory", "memory_total"}, {"mem_free", "memory_free"}, {"arch", "architecture"},
    {"backend", "backend_name"}, {"numa", "numa_node"},      {"clock", "clock_mhz"},      {"id", "physical_device_id"},
};

constexpr Prefix kPrefixes[] = {
    {"format", "kernel_formats"},
    {"modeled_format", "modeled_kernel_formats"},
    {"feature", "features"},
    {"numeric", "numeric_formats"},
    {"flag", "flags"},
};

std::span<const info::FlagName> TableOf(std::string_view set_key) {
  if (set_key == "kernel_formats" || set_key == "modeled_kernel_formats") return info::KernelFormatNames();
  if (set_key == "features") return info::DeviceFeatureNames();
  if (set_key == "numeric_formats") return info::NumericFormatNames();
  if (set_key == "flags") return info::DeviceFlagNames();
  return {};
}

size_t Distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const Key> Keys() { return kKeys; }
std::span<const Alias> Aliases() { return kAliases; }
std::span<const Prefix> Prefixes() { return kPrefixes; }

const std::vector<BareName>& BareNames() {
  static const std::vector<BareName> names = [] {
    std::vector<BareName> out;
    for (const char* set_key : {"features", "numeric_formats", "flags"}) {
      for (const info::FlagName& f : TableOf(set_key)) {
        if (std::string_view(f.name) == "simulated") continue;  // the boolean key
        out.push_back({f.name, set_key, {f.name}});
      }
    }
    out.push_back({"fp8", "numeric_formats", {"fp8-e4m3", "fp8-e5m2"}});
    return out;
  }();
  return names;
}

std::vector<std::string> NamesOf(std::string_view set_key) {
  std::vector<std::string> out;
  for (const info::FlagName& f : TableOf(set_key)) out.emplace_back(f.name);
  if (set_key == "numeric_formats") out.emplace_back("fp8");
  return out;
}

std::string Normalize(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const Key* FindKey(std::string_view name) {
  std::string n = Normalize(name);
  for (const Alias& a : kAliases) {
    if (n == a.alias) n = a.key;
  }
  for (const Key& k : kKeys) {
    if (n == k.name) return &k;
  }
  return nullptr;
}

const Prefix* FindPrefix(std::string_view name) {
  const std::string n = Normalize(name);
  for (const Prefix& p : kPrefixes) {
    if (n == p.prefix) return &p;
  }
  return nullptr;
}

const BareName* FindBareName(std::string_view name) {
  const std::string n = Normalize(name);
  for (const BareName& b : BareNames()) {
    if (n == Normalize(b.name)) return &b;
  }
  return nullptr;
}

std::string Nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string w = Normalize(word);
  const size_t limit = w.size() >= 5 ? 2 : 1;
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const size_t d = Distance(w, Normalize(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

const char* TypeDescription(KeyType type) {
  switch (type) {
    case KeyType::kString: return "a string";
    case KeyType::kKind: return "a device kind";
    case KeyType::kUnsigned: return "an unsigned integer";
    case KeyType::kSigned: return "an integer";
    case KeyType::kBytes: return "a size in bytes";
    case KeyType::kBool: return "a boolean";
    case KeyType::kNameSet: return "a set of names";
    case KeyType::kTriple: return "a 3-component value";
  }
  return "a value";
}

}  // namespace accel::selector
