#include "gangs_file.h"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <unordered_map>

#include "json_text.h"
#include "level.h"
#include "names.h"

namespace accel::plan {
namespace {

using nlohmann::json;
using planner::Error;
using planner::Expected;

// A field error, carried out of the nested readers.
struct FieldError {
  std::string field;
  std::string reason;
};

// Every key of `obj` is one of `known`.
void CheckKeys(const json& obj, const std::string& path, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : obj.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (!found) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      throw FieldError{path + key, fmt::format("unknown field (expected one of {})", list)};
    }
  }
}

const json& Object(const json& value, const std::string& field) {
  if (!value.is_object()) throw FieldError{field, "expected an object, got " + JsonTypeName(value)};
  return value;
}

const json& Array(const json& value, const std::string& field) {
  if (!value.is_array()) throw FieldError{field, "expected an array, got " + JsonTypeName(value)};
  return value;
}

std::string String(const json& value, const std::string& field) {
  if (!value.is_string()) throw FieldError{field, "expected a string, got " + JsonTypeName(value)};
  return value.get<std::string>();
}

const json* Find(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

planner::Bundle ReadBundle(const json& b, const std::string& path) {
  Object(b, path);
  const std::string p = path + ".";
  CheckKeys(b, p, {"devices", "share", "memory", "selector", "comment"});
  planner::Bundle bundle;
  if (const json* v = Find(b, "devices")) {
    if (!v->is_number_unsigned()) {
      throw FieldError{p + "devices", "expected an unsigned integer, got " + JsonTypeName(*v)};
    }
    const auto n = v->get<uint64_t>();
    if (n > kMaxUnitsPerGang) {
      throw FieldError{p + "devices", fmt::format("{} is too many (at most {} in one gang)", n, kMaxUnitsPerGang)};
    }
    bundle.devices = static_cast<uint32_t>(n);  // 0 is left to planner::Prepare's message
  }
  if (const json* v = Find(b, "share")) {
    if (!v->is_number()) throw FieldError{p + "share", "expected a number, got " + JsonTypeName(*v)};
    bundle.share = v->get<double>();  // range (and NaN, from code) is checked by planner::Prepare
  }
  if (const json* v = Find(b, "memory")) {
    if (v->is_number_unsigned()) {
      bundle.memory = v->get<uint64_t>();
    } else if (v->is_string()) {
      auto bytes = ParseBytes(v->get<std::string>());
      if (!bytes) throw FieldError{p + "memory", bytes.error().message};
      bundle.memory = bytes.value();
    } else {
      throw FieldError{p + "memory",
                       "expected bytes (an unsigned integer) or a size such as \"40GiB\", got " + JsonTypeName(*v)};
    }
  }
  if (const json* v = Find(b, "selector")) bundle.selector = String(*v, p + "selector");
  return bundle;
}

std::string StrategyList() {
  std::string list;
  for (auto s : {planner::Strategy::kPack, planner::Strategy::kSpread, planner::Strategy::kStrictPack,
                 planner::Strategy::kStrictSpread}) {
    list += (list.empty() ? "" : ", ") + std::string(planner::StrategyName(s));
  }
  return list;
}

std::string LevelList() {
  std::string list;
  for (planner::Level l : planner::kAllLevels) list += (list.empty() ? "" : ", ") + std::string(planner::LevelName(l));
  return list;
}

}  // namespace

Expected<uint64_t> ParseBytes(std::string_view text) {
  const info::ByteSize size = info::ParseByteSize(text);
  switch (size.outcome) {
    case info::ByteSize::Outcome::kBytes: return size.bytes;
    case info::ByteSize::Outcome::kNotANumber: break;
    case info::ByteSize::Outcome::kUnknownUnit:
      return Error{fmt::format("'{}': unknown unit '{}' ({})", text, size.unit, info::kByteSizeUnits)};
    case info::ByteSize::Outcome::kTooLarge: return Error{fmt::format("'{}' is 2^64 bytes or more", text)};
  }
  return Error{fmt::format("'{}' is not a size such as 40GiB ({})", text, info::kByteSizeUnits)};
}

Expected<std::vector<GangRequest>> ParseGangs(std::string_view text, std::string_view source) {
  auto doc = ParseJsonText(text, source);
  if (!doc) return doc.error();
  std::vector<GangRequest> out;
  try {
    const json& top = Object(doc.value(), "(top level)");
    CheckKeys(top, "", {"format_version", "comment", "gangs"});
    const json* version = Find(top, "format_version");
    if (!version) throw FieldError{"format_version", "missing (required)"};
    const std::string version_text = String(*version, "format_version");
    if (version_text != "1" && version_text.rfind("1.", 0) != 0) {
      throw FieldError{"format_version", "'" + version_text + "' is not 1.x"};
    }
    const json* gangs = Find(top, "gangs");
    if (!gangs) throw FieldError{"gangs", "missing (required)"};
    Array(*gangs, "gangs");
    std::unordered_map<std::string, size_t> by_name;
    std::vector<size_t> released_by(gangs->size(), SIZE_MAX);  // the entry that releases each gang
    for (size_t i = 0; i < gangs->size(); ++i) {
      const std::string path = fmt::format("gangs[{}]", i);
      const std::string p = path + ".";
      const json& g = Object((*gangs)[i], path);
      CheckKeys(g, p, {"name", "strategy", "level", "required", "bundles", "release", "comment"});
      GangRequest r;
      r.name = fmt::format("gang{}", i);
      if (const json* v = Find(g, "name")) {
        r.name = String(*v, p + "name");
        if (r.name.empty()) throw FieldError{p + "name", "empty"};
      }
      if (auto [it, ok] = by_name.emplace(r.name, i); !ok) {
        throw FieldError{p + "name", fmt::format("duplicate '{}' (also gangs[{}])", r.name, it->second)};
      }
      if (const json* v = Find(g, "strategy")) {
        const std::string name = String(*v, p + "strategy");
        auto s = planner::ParseStrategy(name);
        if (!s) throw FieldError{p + "strategy", fmt::format("'{}' is not a strategy ({})", name, StrategyList())};
        r.gang.strategy = *s;
      }
      if (const json* v = Find(g, "level")) {
        const std::string name = String(*v, p + "level");
        auto l = planner::ParseLevel(name);
        if (!l) throw FieldError{p + "level", fmt::format("'{}' is not a level ({})", name, LevelList())};
        r.gang.level = *l;
      }
      if (const json* v = Find(g, "required")) {
        if (!v->is_boolean()) throw FieldError{p + "required", "expected a boolean, got " + JsonTypeName(*v)};
        r.gang.required = v->get<bool>();
      }
      const json* bundles = Find(g, "bundles");
      if (!bundles) throw FieldError{p + "bundles", "missing (required)"};
      Array(*bundles, p + "bundles");
      uint64_t units = 0;
      for (size_t b = 0; b < bundles->size(); ++b) {
        r.gang.bundles.push_back(ReadBundle((*bundles)[b], fmt::format("{}bundles[{}]", p, b)));
        units += r.gang.bundles.back().devices;
        if (units > kMaxUnitsPerGang) {
          throw FieldError{p + "bundles",
                           fmt::format("more than {} devices in all (bundles[0..{}])", kMaxUnitsPerGang, b)};
        }
      }
      // The planner's own checks: no bundles, zero devices, share out of range, a selector that does not parse.
      if (auto prepared = planner::Prepare(r.gang); !prepared) {
        const std::string& m = prepared.error().message;  // "bundles[1].devices: zero devices ..."
        const size_t colon = m.find(": ");
        if (colon == std::string::npos) throw FieldError{p + "bundles", m};
        throw FieldError{p + m.substr(0, colon), m.substr(colon + 2)};
      }
      if (const json* v = Find(g, "release")) {
        Array(*v, p + "release");
        for (size_t k = 0; k < v->size(); ++k) {
          const std::string field = fmt::format("{}release[{}]", p, k);
          const std::string name = String((*v)[k], field);
          auto it = by_name.find(name);
          if (it == by_name.end() || it->second >= i) {
            throw FieldError{field, fmt::format("'{}' is not the name of an earlier gang", name)};
          }
          if (released_by[it->second] != SIZE_MAX) {
            throw FieldError{field,
                             fmt::format("'{}' is already released by gangs[{}]", name, released_by[it->second])};
          }
          released_by[it->second] = i;
          r.release.push_back(it->second);
        }
      }
      out.push_back(std::move(r));
    }
  } catch (const FieldError& e) {
    return Error{fmt::format("{}: {}: {}", source, e.field, e.reason)};
  }
  return out;
}

Expected<std::vector<GangRequest>> LoadGangs(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text) return text.error();
  return ParseGangs(text.value(), path);
}

}  // namespace accel::plan
