// Reading the JSON files accel-plan is given: the text of a file, and that
// text as a JSON document, with errors that name the file. Pure functions:
// thread-safe.
#ifndef ACCEL_TOOLS_ACCEL_PLAN_JSON_TEXT_H_
#define ACCEL_TOOLS_ACCEL_PLAN_JSON_TEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "expected.h"

namespace accel::plan {

// The contents of the file at `path`. Errors: "<path>: cannot open: <reason>",
// "<path>: is a directory".
planner::Expected<std::string> ReadTextFile(const std::string& path);

// `text` as a JSON document. Errors: "<source>: not valid JSON: <the parser's
// reason, with the line and column>", also for numbers no double holds
// ("number overflow parsing '1e999'").
planner::Expected<nlohmann::json> ParseJsonText(std::string_view text, std::string_view source);

// "a string", "an unsigned integer", "a negative integer", "a number",
// "an object", "an array", "a boolean", "null": for "expected ..., got ...".
std::string JsonTypeName(const nlohmann::json& value);

}  // namespace accel::plan

#endif  // ACCEL_TOOLS_ACCEL_PLAN_JSON_TEXT_H_
