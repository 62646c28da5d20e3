// The selector lexer, parser and evaluator.
#include "selector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

#include "keys.h"
#include "names.h"

namespace accel::selector {

// ---------------------------------------------------------------- syntax tree

enum class Cmp { kEq, kNe, kLt, kLe, kGt, kGe };

// A literal after type checking: a string, or an integer as sign and magnitude.
struct Literal {
  std::string text;
  bool negative = false;
  uint64_t magnitude = 0;
  bool boolean = false;
};

struct Atom {
  enum class Type { kCompare, kIn, kHas, kBool } type = Type::kBool;
  std::string text;  // as written
  std::string key;   // canonical key
  KeyType key_type = KeyType::kBool;
  Cmp cmp = Cmp::kEq;
  std::vector<Literal> values;
  std::vector<std::string> any_of;  // kHas
};

struct Node {
  enum class Op { kOr, kAnd, kNot, kAtom } op = Op::kAtom;
  std::vector<std::shared_ptr<const Node>> children;
  Atom atom;
};

std::string ParseError::ToString() const { return fmt::format("column {}: {}", column(), message); }

namespace {

// ---------------------------------------------------------------- lexer

struct Token {
  enum class Kind { kEnd, kWord, kString, kOp, kError } kind = Kind::kEnd;
  size_t pos = 0;
  size_t end = 0;
  std::string text;   // the source text; the operator for kOp
  std::string value;  // a string's contents; a word's text; an error's message
};

bool WordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

std::string Shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 24)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  if (text.size() > 24) out += "...";
  return out;
}

std::vector<Token> Lex(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    Token t;
    t.pos = i;
    if (i >= s.size()) {
      t.kind = Token::Kind::kEnd;
      t.end = i;
      out.push_back(t);
      return out;
    }
    const char c = s[i];
    const bool negative_number = c == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]));
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || negative_number) {
      size_t j = i + 1;
      while (j < s.size() && WordChar(s[j])) ++j;
      // A bandwidth unit: 80GB/s.
      if (std::isdigit(static_cast<unsigned char>(c)) || negative_number) {
        if (j + 1 < s.size() && s[j] == '/' && s[j + 1] == 's' && (j + 2 >= s.size() || !WordChar(s[j + 2]))) j += 2;
      }
      t.kind = Token::Kind::kWord;
      t.text = std::string(s.substr(i, j - i));
      t.value = t.text;
      t.end = j;
      i = j;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      std::string value;
      bool closed = false;
      while (j < s.size()) {
        if (s[j] == '\\' && j + 1 < s.size()) {
          value += s[j + 1];
          j += 2;
        } else if (s[j] == c) {
          closed = true;
          ++j;
          break;
        } else {
          value += s[j++];
        }
      }
      if (!closed) {
        t.kind = Token::Kind::kError;
        t.text = std::string(s.substr(i));
        t.value = fmt::format("unterminated string: expected a closing {} for the one at column {}", c, i + 1);
        t.end = s.size();
        out.push_back(t);
        return out;
      }
      t.kind = Token::Kind::kString;
      t.text = std::string(s.substr(i, j - i));
      t.value = std::move(value);
      t.end = j;
      i = j;
    } else {
      static constexpr std::string_view kOps[] = {"||", "&&", "==", "!=", "<=", ">=", "<",
                                                  ">",  "=",  "!",  "(",  ")",  ",",  ":"};
      std::string_view op;
      for (std::string_view o : kOps) {
        if (s.substr(i, o.size()) == o) {
          op = o;
          break;
        }
      }
      if (op.empty()) {
        t.kind = Token::Kind::kError;
        t.text = std::string(1, c);
        t.end = i + 1;
        if (c == '&' || c == '|') {
          t.value = fmt::format("expected '{0}{0}', found '{0}'", c);
        } else {
          t.value = fmt::format("unexpected character '{}'", Shown(s.substr(i, 1)));
        }
        out.push_back(t);
        return out;
      }
      t.kind = Token::Kind::kOp;
      t.text = std::string(op);
      t.end = i + op.size();
      i += op.size();
    }
    out.push_back(std::move(t));
  }
}

// ---------------------------------------------------------------- numbers

struct Unit {
  std::string_view name;
  uint64_t multiplier;
  bool bandwidth;
};

constexpr uint64_t kKi = 1024;
constexpr Unit kUnits[] = {
    {"B", 1, false},
    {"kB", 1000, false},
    {"KB", 1000, false},
    {"MB", 1000 * 1000, false},
    {"GB", 1000ull * 1000 * 1000, false},
    {"TB", 1000ull * 1000 * 1000 * 1000, false},
    {"KiB", kKi, false},
    {"MiB", kKi* kKi, false},
    {"GiB", kKi* kKi* kKi, false},
    {"TiB", kKi* kKi* kKi* kKi, false},
    {"MB/s", 1000 * 1000, true},
    {"GB/s", 1000ull * 1000 * 1000, true},
};
constexpr const char* kSizeUnits = "B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB";

// A word read as a number: -?(0x hex | digits(.digits)?) unit?
struct Number {
  bool negative = false;
  bool integer = true;
  bool overflow = false;
  uint64_t magnitude = 0;
  long double value = 0;
  std::string unit;
  size_t unit_offset = 0;
};

std::optional<Number> ReadNumber(std::string_view w) {
  Number n;
  size_t i = 0;
  if (i < w.size() && w[i] == '-') {
    n.negative = true;
    ++i;
  }
  const size_t start = i;
  int base = 10;
  if (w.substr(i, 2) == "0x" || w.substr(i, 2) == "0X") {
    base = 16;
    i += 2;
    const size_t digits = i;
    while (i < w.size() && std::isxdigit(static_cast<unsigned char>(w[i]))) ++i;
    if (i == digits) return std::nullopt;
    const auto r = std::from_chars(w.data() + digits, w.data() + i, n.magnitude, 16);
    n.overflow = r.ec != std::errc();
  } else {
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
    if (i == start) return std::nullopt;
    const auto r = std::from_chars(w.data() + start, w.data() + i, n.magnitude, 10);
    n.overflow = r.ec != std::errc();
    if (i < w.size() && w[i] == '.') {
      const size_t fraction = ++i;
      while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
      if (i == fraction) return std::nullopt;
      n.integer = false;
    }
  }
  // from_chars, not strtold: a decimal point whatever the process's locale (strtold under de_DE read "1.5" as 1).
  if (base == 10) std::from_chars(w.data() + start, w.data() + i, n.value);
  if (base == 16) n.value = static_cast<long double>(n.magnitude);
  n.unit_offset = i;
  n.unit = std::string(w.substr(i));
  for (size_t k = 0; k < n.unit.size(); ++k) {
    const char c = n.unit[k];
    const bool slash_s = n.unit.size() >= 2 && k + 2 == n.unit.size() && n.unit.substr(k) == "/s";
    if (slash_s) break;
    if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (base == 16 && !n.unit.empty()) return std::nullopt;
  return n;
}

const Unit* FindUnit(std::string_view name) {
  for (const Unit& u : kUnits) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

const Unit* FindUnitIgnoringCase(std::string_view name) {
  for (const Unit& u : kUnits) {
    if (u.name.size() == name.size() && std::equal(name.begin(), name.end(), u.name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return &u;
    }
  }
  return nullptr;
}

bool EqualIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

constexpr const char* kKinds[] = {"cpu", "gpu", "npu", "tpu", "fpga", "unknown"};

std::string KeyList() {
  std::vector<std::string> names;
  for (const Key& k : Keys()) names.emplace_back(k.name);
  for (const Alias& a : Aliases()) names.emplace_back(a.alias);
  return info::Join(names, ", ");
}

}  // namespace

// ---------------------------------------------------------------- parser

// A literal, or nothing after an error was recorded (built from Fail's nullptr).
struct MaybeLiteral : std::optional<Literal> {
  using std::optional<Literal>::optional;
  MaybeLiteral(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
};

// Recursive descent over the token list; stops at the first error.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(Lex(text)) {}

  ParseResult Run() {
    auto root = ParseOr("at the start");
    if (!error_ && Peek().kind != Token::Kind::kEnd) {
      Fail(Peek(), "'&&', '||' or the end of the selector");
    }
    if (error_) return *error_;
    Selector s;
    s.text_ = std::string(text_);
    s.root_ = std::move(root);
    return s;
  }

 private:
  using NodePtr = std::shared_ptr<const Node>;

  const Token& Peek() const { return tokens_[std::min(next_, tokens_.size() - 1)]; }
  const Token& Take() {
    const Token& t = Peek();
    if (next_ < tokens_.size() - 1) ++next_;
    return t;
  }
  bool IsOp(const Token& t, std::string_view op) const { return t.kind == Token::Kind::kOp && t.text == op; }

  static std::string Found(const Token& t) {
    if (t.kind == Token::Kind::kEnd) return "end of selector";
    return fmt::format("'{}'", Shown(t.text));
  }

  // Records the first error: "expected <expected>, found <token>", or
  // `message` when given. A lexical error token reports its own message.
  std::nullptr_t Fail(const Token& t, std::string expected, std::string message = "") {
    if (error_) return nullptr;
    ParseError e;
    e.position = t.pos;
    e.found = Found(t);
    if (t.kind == Token::Kind::kError) {
      e.expected = std::move(expected);
      e.message = t.value;
    } else {
      e.message = message.empty() ? fmt::format("expected {}, found {}", expected, e.found) : std::move(message);
      e.expected = std::move(expected);
    }
    error_ = std::move(e);
    return nullptr;
  }
  std::nullptr_t FailAt(size_t pos, std::string expected, std::string found, std::string message) {
    if (error_) return nullptr;
    error_ = ParseError{pos, std::move(expected), std::move(found), std::move(message)};
    return nullptr;
  }

  NodePtr Combine(Node::Op op, std::vector<NodePtr> children) {
    if (children.size() == 1) return children[0];
    auto n = std::make_shared<Node>();
    n->op = op;
    n->children = std::move(children);
    return n;
  }

  NodePtr ParseOr(const std::string& context) {
    std::vector<NodePtr> children;
    auto first = ParseAnd(context);
    if (!first) return nullptr;
    children.push_back(first);
    while (IsOp(Peek(), "||")) {
      Take();
      auto next = ParseAnd("after '||'");
      if (!next) return nullptr;
      children.push_back(next);
    }
    return Combine(Node::Op::kOr, std::move(children));
  }

  NodePtr ParseAnd(const std::string& context) {
    std::vector<NodePtr> children;
    auto first = ParseUnary(context);
    if (!first) return nullptr;
    children.push_back(first);
    while (IsOp(Peek(), "&&")) {
      Take();
      auto next = ParseUnary("after '&&'");
      if (!next) return nullptr;
      children.push_back(next);
    }
    return Combine(Node::Op::kAnd, std::move(children));
  }

  // Each '!' and '(' nests one level; past kMaxNesting the selector is
  // refused, so no input can exhaust the stack (of the parser, or of the
  // evaluation and destruction of the tree it would build).
  static constexpr size_t kMaxNesting = 128;
  class Nesting {
   public:
    explicit Nesting(size_t* depth) : depth_(depth) { ++*depth_; }
    ~Nesting() { --*depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    size_t* depth_;
  };
  std::nullptr_t TooDeep(const Token& t) {
    return FailAt(t.pos, "at most " + std::to_string(kMaxNesting) + " nested '!' and '('", Found(t),
                  fmt::format("the selector nests '!' and '(' deeper than {} levels", kMaxNesting));
  }

  NodePtr ParseUnary(const std::string& context) {
    if (IsOp(Peek(), "!")) {
      const Token& bang = Take();
      Nesting nesting(&depth_);
      if (depth_ > kMaxNesting) return TooDeep(bang);
      auto child = ParseUnary("after '!'");
      if (!child) return nullptr;
      auto n = std::make_shared<Node>();
      n->op = Node::Op::kNot;
      n->children.push_back(child);
      return n;
    }
    return ParsePrimary(context);
  }

  NodePtr ParsePrimary(const std::string& context) {
    const Token& t = Peek();
    if (IsOp(t, "(")) {
      const Token& open = Take();
      Nesting nesting(&depth_);
      if (depth_ > kMaxNesting) return TooDeep(open);
      auto inner = ParseOr("after '('");
      if (!inner) return nullptr;
      if (!IsOp(Peek(), ")")) {
        return Fail(Peek(), fmt::format("')' to close the '(' at column {}", open.pos + 1));
      }
      Take();
      return inner;
    }
    const bool identifier =
        t.kind == Token::Kind::kWord && (std::isalpha(static_cast<unsigned char>(t.text[0])) || t.text[0] == '_');
    if (!identifier) return Fail(t, fmt::format("a term (a key, a name or '(') {}", context));
    return ParseTerm();
  }

  NodePtr AtomNode(Atom atom, size_t begin, size_t end) {
    auto n = std::make_shared<Node>();
    n->op = Node::Op::kAtom;
    atom.text = std::string(text_.substr(begin, end - begin));
    n->atom = std::move(atom);
    return n;
  }

  std::nullptr_t UnknownKey(const Token& t) {
    std::vector<std::string> candidates;
    for (const Key& k : Keys()) candidates.emplace_back(k.name);
    for (const Alias& a : Aliases()) candidates.emplace_back(a.alias);
    const std::string near = Nearest(t.text, candidates);
    return FailAt(t.pos, "a capability key", Found(t),
                  near.empty() ? fmt::format("unknown key '{}' (keys: {})", Shown(t.text), KeyList())
                               : fmt::format("unknown key '{}' (did you mean '{}'?)", Shown(t.text), near));
  }

  NodePtr ParseTerm() {
    const Token& word = Take();
    const Token& next = Peek();
    if (IsOp(next, ":")) return ParsePrefixed(word);
    static constexpr std::string_view kCompare[] = {"==", "=", "!=", "<", "<=", ">", ">="};
    const bool compare = next.kind == Token::Kind::kOp &&
                         std::find(std::begin(kCompare), std::end(kCompare), next.text) != std::end(kCompare);
    const bool in = next.kind == Token::Kind::kWord && EqualIgnoringCase(next.text, "in");
    if (compare || in) {
      const Key* key = FindKey(word.text);
      if (key == nullptr) return UnknownKey(word);
      if (key->type == KeyType::kTriple) {
        return FailAt(word.pos, "a comparable key", Found(word),
                      fmt::format("'{}' is {}: selectors cannot compare it", key->name, TypeDescription(key->type)));
      }
      if (key->type == KeyType::kNameSet) return NameSetHint(word, *key);
      return compare ? ParseComparison(word, *key) : ParseIn(word, *key);
    }
    // A bare boolean term.
    if (const Key* key = FindKey(word.text)) {
      if (key->type == KeyType::kBool) {
        Atom a;
        a.type = Atom::Type::kBool;
        a.key = key->name;
        a.key_type = key->type;
        return AtomNode(std::move(a), word.pos, word.end);
      }
      if (key->type == KeyType::kNameSet) return NameSetHint(word, *key);
      if (next.kind == Token::Kind::kError) return Fail(next, "");
      return Fail(next, fmt::format("a comparison (==, !=, <, <=, >, >= or in) after '{}'", Shown(word.text)));
    }
    if (const BareName* bare = FindBareName(word.text)) {
      Atom a;
      a.type = Atom::Type::kHas;
      a.key = bare->key;
      a.key_type = KeyType::kNameSet;
      a.any_of = bare->any_of;
      return AtomNode(std::move(a), word.pos, word.end);
    }
    for (const std::string& format : NamesOf("kernel_formats")) {
      if (Normalize(format) == Normalize(word.text)) {
        return FailAt(word.pos, "a key or a name", Found(word),
                      fmt::format("'{}' is a kernel format: write format:{}", Shown(word.text), format));
      }
    }
    std::vector<std::string> candidates;
    for (const Key& k : Keys()) candidates.emplace_back(k.name);
    for (const Alias& a : Aliases()) candidates.emplace_back(a.alias);
    for (const BareName& b : BareNames()) candidates.push_back(b.name);
    const std::string near = Nearest(word.text, candidates);
    return FailAt(word.pos, "a key or a name", Found(word),
                  near.empty()
                      ? fmt::format("unknown key or name '{}' (docs/selectors.md lists them)", Shown(word.text))
                      : fmt::format("unknown key or name '{}' (did you mean '{}'?)", Shown(word.text), near));
  }

  std::nullptr_t NameSetHint(const Token& word, const Key& key) {
    std::string prefix = "format";
    for (const Prefix& p : Prefixes()) {
      if (key.name == std::string_view(p.key)) prefix = p.prefix;
    }
    return FailAt(word.pos, "a comparable key", Found(word),
                  fmt::format("'{}' is a set of names: test one with {}:<name>", key.name, prefix));
  }

  NodePtr ParsePrefixed(const Token& word) {
    const Prefix* prefix = FindPrefix(word.text);
    if (prefix == nullptr) {
      std::vector<std::string> candidates;
      for (const Prefix& p : Prefixes()) candidates.emplace_back(p.prefix);
      const std::string near = Nearest(word.text, candidates);
      return FailAt(word.pos, "a prefix", Found(word),
                    fmt::format("unknown prefix '{}'{} (prefixes: format, modeled_format, feature, numeric, flag)",
                                Shown(word.text), near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    }
    const Token& colon = Take();
    const Token& name = Peek();
    if (name.kind != Token::Kind::kWord && name.kind != Token::Kind::kString) {
      return Fail(name, fmt::format("a name after '{}{}'", Shown(word.text), colon.text));
    }
    Take();
    const std::vector<std::string> names = NamesOf(prefix->key);
    const std::string wanted = Normalize(name.value);
    for (const std::string& n : names) {
      if (Normalize(n) != wanted) continue;
      Atom a;
      a.type = Atom::Type::kHas;
      a.key = prefix->key;
      a.key_type = KeyType::kNameSet;
      if (n == "fp8") {
        a.any_of = {"fp8-e4m3", "fp8-e5m2"};
      } else {
        a.any_of = {n};
      }
      return AtomNode(std::move(a), word.pos, name.end);
    }
    const std::string near = Nearest(name.value, names);
    return FailAt(
        name.pos, fmt::format("a name in {}", prefix->key), Found(name),
        fmt::format("unknown {} name '{}' ({}: {})", prefix->prefix, Shown(name.value),
                    near.empty() ? "known" : fmt::format("did you mean '{}'? known", near), info::Join(names, ", ")));
  }

  // Reads the literal at the next token as a value of `key`'s type.
  MaybeLiteral ParseValue(const Key& key, const std::string& context) {
    const Token& t = Peek();
    if (t.kind != Token::Kind::kWord && t.kind != Token::Kind::kString) {
      Fail(t, fmt::format("a value {}", context));
      return std::nullopt;
    }
    Take();
    Literal lit;
    lit.text = t.value;
    auto wrong = [&](const std::string& wanted) {
      FailAt(t.pos, wanted, Found(t), fmt::format("'{}' takes {}, found {}", key.name, wanted, Found(t)));
      return std::nullopt;
    };
    switch (key.type) {
      case KeyType::kString: return lit;
      case KeyType::kKind:
        for (const char* k : kKinds) {
          if (EqualIgnoringCase(t.value, k)) {
            lit.text = k;
            return lit;
          }
        }
        return wrong("a device kind (cpu, gpu, npu, tpu, fpga or unknown)");
      case KeyType::kBool:
        if (t.kind == Token::Kind::kWord &&
            (EqualIgnoringCase(t.value, "true") || EqualIgnoringCase(t.value, "false"))) {
          lit.boolean = EqualIgnoringCase(t.value, "true");
          return lit;
        }
        return wrong("true or false");
      case KeyType::kUnsigned:
      case KeyType::kSigned: {
        const char* wanted = key.type == KeyType::kUnsigned ? "an unsigned integer" : "an integer";
        auto n = t.kind == Token::Kind::kWord ? ReadNumber(t.text) : std::nullopt;
        if (!n || !n->integer || !n->unit.empty() || (n->negative && key.type == KeyType::kUnsigned)) {
          return wrong(wanted);
        }
        if (n->overflow || (key.type == KeyType::kSigned && n->magnitude > (uint64_t{1} << 63))) {
          return FailAt(t.pos, wanted, Found(t), fmt::format("'{}' is out of range for '{}'", Shown(t.text), key.name));
        }
        lit.negative = n->negative && n->magnitude != 0;
        lit.magnitude = n->magnitude;
        return lit;
      }
      case KeyType::kBytes: {
        auto n = t.kind == Token::Kind::kWord ? ReadNumber(t.text) : std::nullopt;
        if (!n || n->negative) return wrong(fmt::format("a size such as 40GiB ({})", kSizeUnits));
        if (n->unit.empty()) {
          return FailAt(t.pos + t.text.size(), fmt::format("a unit ({})", kSizeUnits), Found(t),
                        fmt::format("'{}' is a size: '{}' needs a unit ({})", key.name, Shown(t.text), kSizeUnits));
        }
        const Unit* unit = FindUnit(n->unit);
        if (unit == nullptr) {
          const Unit* near = FindUnitIgnoringCase(n->unit);
          return FailAt(
              t.pos + n->unit_offset, fmt::format("a unit ({})", kSizeUnits), fmt::format("'{}'", n->unit),
              fmt::format("unknown unit '{}' in '{}' ({}units: {}, MB/s, GB/s)", Shown(n->unit), Shown(t.text),
                          near ? fmt::format("did you mean '{}'? ", near->name) : "", kSizeUnits));
        }
        if (unit->bandwidth) {
          return FailAt(t.pos, "a size", Found(t),
                        fmt::format("'{}' is a size in bytes, found a bandwidth {}", key.name, Found(t)));
        }
        uint64_t bytes = 0;
        bool overflow = n->overflow;
        if (n->integer) {
          overflow = overflow || __builtin_mul_overflow(n->magnitude, unit->multiplier, &bytes);
        } else {
          // Rounded in long double and converted unsigned: llround's long long overflowed from 2^63 on.
          const long double v = std::roundl(n->value * static_cast<long double>(unit->multiplier));
          overflow = overflow || !(v < 18446744073709551616.0L);  // 2^64, exact in every long double
          if (!overflow) bytes = static_cast<uint64_t>(v);
        }
        if (overflow) {
          return FailAt(t.pos, "a size", Found(t),
                        fmt::format("'{}' is out of range for '{}'", Shown(t.text), key.name));
        }
        lit.magnitude = bytes;
        return lit;
      }
      case KeyType::kNameSet:
      case KeyType::kTriple: break;
    }
    return wrong("a value");
  }

  NodePtr ParseComparison(const Token& word, const Key& key) {
    const Token& op = Take();
    Atom a;
    a.type = Atom::Type::kCompare;
    a.key = key.name;
    a.key_type = key.type;
    if (op.text == "==" || op.text == "=") a.cmp = Cmp::kEq;
    if (op.text == "!=") a.cmp = Cmp::kNe;
    if (op.text == "<") a.cmp = Cmp::kLt;
    if (op.text == "<=") a.cmp = Cmp::kLe;
    if (op.text == ">") a.cmp = Cmp::kGt;
    if (op.text == ">=") a.cmp = Cmp::kGe;
    const bool ordered = a.cmp != Cmp::kEq && a.cmp != Cmp::kNe;
    if (ordered && (key.type == KeyType::kString || key.type == KeyType::kKind || key.type == KeyType::kBool)) {
      return FailAt(op.pos, "==, != or in", Found(op),
                    fmt::format("'{}' does not apply to '{}' ({}): use ==, != or in", op.text, key.name,
                                TypeDescription(key.type)));
    }
    auto value = ParseValue(key, fmt::format("after '{}'", op.text));
    if (!value) return nullptr;
    a.values.push_back(std::move(*value));
    return AtomNode(std::move(a), word.pos, tokens_[next_ - 1].end);
  }

  NodePtr ParseIn(const Token& word, const Key& key) {
    const Token& in = Take();
    if (!IsOp(Peek(), "(")) return Fail(Peek(), fmt::format("'(' after '{}'", in.text));
    Take();
    Atom a;
    a.type = Atom::Type::kIn;
    a.key = key.name;
    a.key_type = key.type;
    std::string context = "after '('";
    while (true) {
      auto value = ParseValue(key, context);
      if (!value) return nullptr;
      a.values.push_back(std::move(*value));
      if (IsOp(Peek(), ",")) {
        Take();
        context = "after ','";
        continue;
      }
      if (IsOp(Peek(), ")")) break;
      return Fail(Peek(), "',' or ')' in the list");
    }
    const Token& close = Take();
    return AtomNode(std::move(a), word.pos, close.end);
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
  std::optional<ParseError> error_;
  size_t depth_ = 0;  // nesting of the term being parsed (kMaxNesting)
};

ParseResult Parse(std::string_view text) { return Parser(text).Run(); }

// ---------------------------------------------------------------- evaluation

namespace {

// -1, 0, 1 comparing two sign-and-magnitude integers.
int CompareIntegers(bool a_negative, uint64_t a, bool b_negative, uint64_t b) {
  if (a_negative != b_negative) return a_negative ? -1 : 1;
  const int magnitude = a < b ? -1 : (a > b ? 1 : 0);
  return a_negative ? -magnitude : magnitude;
}

bool Holds(Cmp cmp, int order) {
  switch (cmp) {
    case Cmp::kEq: return order == 0;
    case Cmp::kNe: return order != 0;
    case Cmp::kLt: return order < 0;
    case Cmp::kLe: return order <= 0;
    case Cmp::kGt: return order > 0;
    case Cmp::kGe: return order >= 0;
  }
  return false;
}

// The device's value against one literal; nullopt when the value is of a type that does not compare.
std::optional<int> Order(const Value& v, const Literal& lit) {
  if (const auto* s = std::get_if<std::string>(&v)) return EqualIgnoringCase(*s, lit.text) ? 0 : 1;
  if (const auto* u = std::get_if<uint64_t>(&v)) return CompareIntegers(false, *u, lit.negative, lit.magnitude);
  if (const auto* i = std::get_if<int64_t>(&v)) {
    const uint64_t magnitude = *i < 0 ? uint64_t{0} - static_cast<uint64_t>(*i) : static_cast<uint64_t>(*i);
    return CompareIntegers(*i < 0, magnitude, lit.negative, lit.magnitude);
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b == lit.boolean ? 0 : 1;
  return std::nullopt;
}

bool HasAny(const Value& v, const std::vector<std::string>& any_of) {
  const auto* set = std::get_if<NameSet>(&v);
  if (set == nullptr) return false;
  for (const std::string& name : set->names) {
    for (const std::string& wanted : any_of) {
      if (EqualIgnoringCase(name, wanted)) return true;
    }
  }
  return false;
}

bool Evaluate(const Atom& a, const Attributes& attributes) {
  const std::optional<Value> v = attributes.Get(a.key);
  if (!v) return false;
  switch (a.type) {
    case Atom::Type::kBool:
      if (const auto* b = std::get_if<bool>(&*v)) return *b;
      if (const auto* u = std::get_if<uint64_t>(&*v)) return *u != 0;
      return false;
    case Atom::Type::kHas: return HasAny(*v, a.any_of);
    case Atom::Type::kCompare: {
      auto order = Order(*v, a.values[0]);
      return order && Holds(a.cmp, *order);
    }
    case Atom::Type::kIn:
      for (const Literal& lit : a.values) {
        auto order = Order(*v, lit);
        if (order && *order == 0) return true;
      }
      return false;
  }
  return false;
}

bool Evaluate(const Node& n, const Attributes& attributes) {
  switch (n.op) {
    case Node::Op::kAtom: return Evaluate(n.atom, attributes);
    case Node::Op::kNot: return !Evaluate(*n.children[0], attributes);
    case Node::Op::kAnd:
      return std::all_of(n.children.begin(), n.children.end(), [&](const auto& c) { return Evaluate(*c, attributes); });
    case Node::Op::kOr:
      return std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return Evaluate(*c, attributes); });
  }
  return false;
}

// What the device has, for an explanation: "the device has 22.5 GiB".
std::string Fact(const Atom& a, const Attributes& attributes) {
  const std::optional<Value> v = attributes.Get(a.key);
  if (!v) return fmt::format("the device does not report {}", a.key);
  if (const auto* set = std::get_if<NameSet>(&*v)) {
    std::vector<std::string> present;
    for (const std::string& wanted : a.any_of) {
      if (set->Has(wanted)) present.push_back(wanted);
    }
    if (!present.empty()) return fmt::format("the device has {}", info::Join(present, ", "));
    return fmt::format("the device has no {}; its {}: {}", info::Join(a.any_of, " or "), a.key,
                       set->names.empty() ? std::string("none") : info::Join(set->names, ", "));
  }
  if (const auto* b = std::get_if<bool>(&*v)) {
    if (a.key == "simulated") return *b ? "the device is simulated" : "the device is not simulated";
    return fmt::format("the device's {} is {}", a.key, *b ? "true" : "false");
  }
  if (const auto* s = std::get_if<std::string>(&*v)) {
    if (a.key_type == KeyType::kKind) return fmt::format("the device's kind is {}", *s);
    return fmt::format("the device's {} is \"{}\"", a.key, *s);
  }
  if (const auto* u = std::get_if<uint64_t>(&*v)) {
    if (a.key_type == KeyType::kBytes) return fmt::format("the device has {}", info::HumanBytes(*u));
    return fmt::format("the device's {} is {}", a.key, *u);
  }
  if (const auto* i = std::get_if<int64_t>(&*v)) return fmt::format("the device's {} is {}", a.key, *i);
  return fmt::format("the device's {} is not comparable", a.key);
}

bool Simple(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return WordChar(c) || c == ':'; });
}

// Why `n` is not `want`, as a list of atom explanations.
void Explain(const Node& n, bool want, const Attributes& attributes, std::vector<std::string>& out) {
  switch (n.op) {
    case Node::Op::kAtom:
      if (Evaluate(n.atom, attributes) != want) {
        const std::string text =
            want ? n.atom.text : (Simple(n.atom.text) ? "!" + n.atom.text : fmt::format("!({})", n.atom.text));
        out.push_back(fmt::format("{}: {}", text, Fact(n.atom, attributes)));
      }
      return;
    case Node::Op::kNot: Explain(*n.children[0], !want, attributes, out); return;
    case Node::Op::kAnd:
    case Node::Op::kOr:
      // An AND misses through each false child; an OR holds (unwanted) through each true child.
      for (const auto& c : n.children) {
        if (Evaluate(*c, attributes) != want) Explain(*c, want, attributes, out);
      }
      return;
  }
}

}  // namespace

bool Selector::Matches(const Attributes& attributes) const { return root_ && Evaluate(*root_, attributes); }

std::string Selector::Explain(const Attributes& attributes) const {
  if (!root_ || Evaluate(*root_, attributes)) return "";
  std::vector<std::string> reasons;
  selector::Explain(*root_, true, attributes, reasons);
  return info::Join(reasons, "; ");
}

}  // namespace accel::selector
