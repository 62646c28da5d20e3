// libFuzzer target for the domains above the node (core/lib/machine_topology.h):
// the same text read as a domain file (ParseDomainFile) and, up to its first
// NUL as getenv would give it, as ACCEL_TOPOLOGY_DOMAINS (ParseDomains). Each
// warning names the file or the entry; the domains come out one per known
// level, innermost first, each with the id the input gave it, whole (1 to 63
// characters); what was accepted, written back, reads the same with no warning.
// Nothing throws, crashes, leaks or reads out of bounds (ASan and UBSan).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "machine_topology.h"

namespace {

const char* LevelName(accel_domain_level_t level) {
  switch (level) {
    case ACCEL_DOMAIN_LEVEL_RACK: return "rack";
    case ACCEL_DOMAIN_LEVEL_BLOCK: return "block";
    case ACCEL_DOMAIN_LEVEL_SLICE: return "slice";
    case ACCEL_DOMAIN_LEVEL_ZONE: return "zone";
    default: return nullptr;
  }
}

// The id as a string: NUL-terminated inside the array, 1 to 63 characters.
std::string Id(const accel_domain_t& d) {
  const size_t length = strnlen(d.id, sizeof(d.id));
  if (length == 0 || length == sizeof(d.id)) __builtin_trap();
  return std::string(d.id, length);
}

// One domain per known level, in level order, with a whole id.
void CheckShape(const std::vector<accel_domain_t>& domains) {
  for (size_t i = 0; i < domains.size(); ++i) {
    const accel_domain_t& d = domains[i];
    if (d.stype != ACCEL_STRUCTURE_TYPE_DOMAIN || d.struct_size != sizeof(d)) __builtin_trap();
    if (LevelName(d.level) == nullptr) __builtin_trap();
    if (i > 0 && domains[i - 1].level >= d.level) __builtin_trap();
    (void)Id(d);
  }
}

bool Same(const std::vector<accel_domain_t>& a, const std::vector<accel_domain_t>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].level != b[i].level || Id(a[i]) != Id(b[i])) return false;
  }
  return true;
}

void FuzzFile(const std::string& text) {
  std::vector<std::string> warnings;
  const auto domains = accel::core::ParseDomainFile(text, "/fuzz/topology.d/fuzz.json", &warnings);
  for (const std::string& w : warnings) {
    if (w.rfind("topology: /fuzz/topology.d/fuzz.json", 0) != 0) __builtin_trap();  // names the file
  }
  CheckShape(domains);
  // Each id is exactly the string the file gives its level, and every level the file gives a valid id is there
  // (the JSON reading is nlohmann's, as the parser's).
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, nullptr, false);
  } catch (const nlohmann::json::exception&) {
    doc = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("domains") || !doc["domains"].is_object()) {
    if (!domains.empty() || warnings.size() != 1) __builtin_trap();
    return;
  }
  nlohmann::json written = nlohmann::json::object();
  for (const accel_domain_t& d : domains) {
    const auto& value = doc["domains"].at(LevelName(d.level));
    if (!value.is_string() || value.get<std::string>() != Id(d)) __builtin_trap();
    written[LevelName(d.level)] = Id(d);
  }
  for (const auto& [level, id] : doc["domains"].items()) {
    const bool valid = (level == "rack" || level == "block" || level == "slice" || level == "zone") && id.is_string() &&
                       !id.get<std::string>().empty() && id.get<std::string>().size() <= 63 &&
                       id.get<std::string>().find('\0') == std::string::npos;
    if (valid != written.contains(level)) __builtin_trap();
  }
  // Written back as a file, it reads the same, with no warning.
  std::vector<std::string> again_warnings;
  const auto again =
      accel::core::ParseDomainFile(nlohmann::json{{"domains", written}}.dump(), "again.json", &again_warnings);
  if (!again_warnings.empty() || !Same(domains, again)) __builtin_trap();
}

void FuzzVariable(std::string text) {
  text.resize(strnlen(text.c_str(), text.size()));  // an environment variable ends at its first NUL
  std::vector<std::pair<std::string, std::string>> ignored;
  const auto domains = accel::core::ParseDomains(text, &ignored);
  for (const auto& [entry, reason] : ignored) {
    if (entry.empty() || reason.find("'" + entry + "'") == std::string::npos) __builtin_trap();  // names the entry
  }
  CheckShape(domains);
  // Each level keeps the id of its last valid entry: recomputed here from the comma list.
  std::vector<std::pair<std::string, std::string>> expected;  // (level, id), in text order, later ones last
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string entry = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq + 1 == entry.size() || entry.size() - eq - 1 > 63) continue;
    expected.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  std::string written;
  for (const accel_domain_t& d : domains) {
    const std::string level = LevelName(d.level);
    const std::string* last = nullptr;
    for (const auto& [l, id] : expected) {
      if (l == level) last = &id;
    }
    if (last == nullptr || *last != Id(d)) __builtin_trap();
    written += (written.empty() ? "" : ",") + level + "=" + Id(d);
  }
  // Every valid entry's level is there.
  for (const auto& [level, id] : expected) {
    bool found = level != "rack" && level != "block" && level != "slice" && level != "zone";
    for (const accel_domain_t& d : domains) found = found || level == LevelName(d.level);
    if (!found) __builtin_trap();
  }
  std::vector<std::pair<std::string, std::string>> again_ignored;
  const auto again = accel::core::ParseDomains(written, &again_ignored);
  if (!again_ignored.empty() || !Same(domains, again)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  FuzzFile(text);
  FuzzVariable(text);
  return 0;
}
