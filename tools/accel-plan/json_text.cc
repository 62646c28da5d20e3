#include "json_text.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace accel::plan {

planner::Expected<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return planner::Error{fmt::format("{}: is a directory", path)};
  std::ifstream in(path, std::ios::binary);
  if (!in) return planner::Error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return planner::Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  return text.str();
}

planner::Expected<nlohmann::json> ParseJsonText(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e999
    return planner::Error{fmt::format("{}: not valid JSON: {}", source, e.what())};
  }
}

std::string JsonTypeName(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return "an unsigned integer";
  if (value.is_number_integer()) return "a negative integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_boolean()) return "a boolean";
  return "null";
}

}  // namespace accel::plan
