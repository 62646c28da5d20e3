// Capability selectors: the expression language that picks devices by what
// they can do, never by vendor ("kind==gpu && mem>=40GiB && fp8 &&
// format:spirv-vulkan"); docs/selectors.md has the grammar, the keys and the
// messages. Parse checks names and types against the registered capability
// keys; a Selector then evaluates any Attributes view and explains a miss.
// Parse and every const member are pure: thread-safe. Selectors are immutable
// and cheap to copy.
#ifndef ACCEL_CORE_SELECTOR_SELECTOR_H_
#define ACCEL_CORE_SELECTOR_SELECTOR_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "attributes.h"

namespace accel::selector {

// Why a selector does not parse. Plain value.
struct ParseError {
  size_t position = 0;   // 0-based byte offset into the text; the text's length at its end
  std::string expected;  // what the parser wanted there ("a value after '>='")
  std::string found;     // what it found there ("')'", "end of selector")
  std::string message;   // the whole explanation, without the column
  size_t column() const { return position + 1; }
  // "column 17: expected a value after '>=', found ')'"
  std::string ToString() const;
};

struct Node;

// A parsed, type-checked selector.
class Selector {
 public:
  // The text it was parsed from.
  const std::string& text() const { return text_; }
  // Whether the device described by `attributes` matches. An attribute the
  // device does not report makes its comparison false.
  bool Matches(const Attributes& attributes) const;
  // "" when the device matches; otherwise each atom that decides the miss,
  // "; "-separated, with the device's value: "mem>=40GiB: the device has 22.5 GiB".
  std::string Explain(const Attributes& attributes) const;

 private:
  friend class Parser;
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// A selector, or why the text is not one.
class ParseResult {
 public:
  ParseResult(Selector selector) : v_(std::move(selector)) {}  // NOLINT(google-explicit-constructor)
  ParseResult(ParseError error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)
  bool ok() const { return std::holds_alternative<Selector>(v_); }
  explicit operator bool() const { return ok(); }
  const Selector& value() const { return std::get<Selector>(v_); }
  const Selector* operator->() const { return &value(); }
  const ParseError& error() const { return std::get<ParseError>(v_); }

 private:
  std::variant<Selector, ParseError> v_;
};

// Parses and type-checks `text` (docs/selectors.md, "Grammar").
ParseResult Parse(std::string_view text);

}  // namespace accel::selector

#endif  // ACCEL_CORE_SELECTOR_SELECTOR_H_
