// PTX reflection (ptx.h).
#include "ptx.h"

#include <cctype>
#include <cstdlib>

namespace accel::cuda {

namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '.';
}

// Whether `text` holds `word` delimited by non-identifier characters.
bool HasWord(std::string_view text, std::string_view word) {
  size_t at = 0;
  while ((at = text.find(word, at)) != std::string_view::npos) {
    const bool left = at == 0 || !IsIdentifierChar(text[at - 1]);
    const size_t end = at + word.size();
    const bool right = end >= text.size() || !IsIdentifierChar(text[end]);
    if (left && right) return true;
    at = end;
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < s.size()) {
    while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at])) != 0) ++at;
    size_t end = at;
    while (end < s.size() && std::isspace(static_cast<unsigned char>(s[end])) == 0) ++end;
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

// Bytes of a PTX fundamental type (".u64" 8, ".f32" 4, ".b8" 1); 0 unknown.
uint32_t TypeSize(std::string_view type) {
  if (type.size() < 3 || type[0] != '.') return 0;
  const char kind = type[1];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f') return 0;
  const int bits = std::atoi(std::string(type.substr(2)).c_str());
  return bits >= 8 ? static_cast<uint32_t>(bits / 8) : 0;
}

// Strips // and /* */ comments.
std::string StripComments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

// The register `ld.param.<type> %r, [param]` loads `param` into, or "" when the body never loads it.
std::vector<std::string> LoadedRegisters(std::string_view body, std::string_view param) {
  std::vector<std::string> registers;
  const std::string operand = "[" + std::string(param) + "]";
  size_t at = 0;
  while ((at = body.find(operand, at)) != std::string_view::npos) {
    const size_t line_start = body.rfind('\n', at) == std::string_view::npos ? 0 : body.rfind('\n', at) + 1;
    const std::string_view line = body.substr(line_start, at - line_start);
    const size_t percent = line.find('%');
    if (line.find("ld.param") != std::string_view::npos && percent != std::string_view::npos) {
      size_t end = percent + 1;
      while (end < line.size() && IsIdentifierChar(line[end])) ++end;
      registers.emplace_back(line.substr(percent, end - percent));
    }
    at += operand.size();
  }
  return registers;
}

// Whether `reg` is used as an address: converted by cvta, or inside an address operand "[%rd1]" / "[%rd1+4]".
bool UsedAsAddress(std::string_view body, std::string_view reg) {
  size_t at = 0;
  while ((at = body.find(reg, at)) != std::string_view::npos) {
    const size_t end = at + reg.size();
    if (end < body.size() && IsIdentifierChar(body[end])) {
      at = end;
      continue;
    }
    const size_t line_start = body.rfind('\n', at) == std::string_view::npos ? 0 : body.rfind('\n', at) + 1;
    const std::string_view before = body.substr(line_start, at - line_start);
    if (before.find("cvta") != std::string_view::npos) return true;
    if (!before.empty() && before.back() == '[') return true;
    at = end;
  }
  return false;
}

}  // namespace

std::vector<PtxEntry> ParsePtxEntries(std::string_view ptx_text) {
  const std::string ptx = StripComments(ptx_text);
  // Module-level dynamic shared memory: ".extern .shared .align 16 .b8 scratch[];".
  std::vector<std::string> dynamic_shared;
  for (size_t at = 0; (at = ptx.find(".extern", at)) != std::string::npos; at += 7) {
    const size_t end = ptx.find(';', at);
    if (end == std::string::npos) break;
    const std::string_view declaration(ptx.data() + at, end - at);
    if (declaration.find(".shared") == std::string_view::npos) continue;
    const size_t bracket = declaration.find('[');
    std::string_view head = Trim(declaration.substr(0, bracket));
    const size_t space = head.find_last_of(" \t");
    dynamic_shared.emplace_back(space == std::string_view::npos ? head : head.substr(space + 1));
  }
  std::vector<PtxEntry> entries;
  for (size_t at = 0; (at = ptx.find(".entry", at)) != std::string::npos;) {
    const bool word_start = at == 0 || !IsIdentifierChar(ptx[at - 1]);
    at += 6;
    if (!word_start || at >= ptx.size() || IsIdentifierChar(ptx[at])) continue;
    const size_t open = ptx.find('(', at);
    const size_t brace = ptx.find('{', at);
    if (brace == std::string::npos) break;
    PtxEntry entry;
    const size_t name_end = open != std::string::npos && open < brace ? open : brace;
    entry.name = std::string(Trim(std::string_view(ptx).substr(at, name_end - at)));
    // The body: from the entry's '{' to its matching '}'.
    size_t depth = 0;
    size_t close = brace;
    for (; close < ptx.size(); ++close) {
      if (ptx[close] == '{') ++depth;
      if (ptx[close] == '}' && --depth == 0) break;
    }
    const std::string_view body = std::string_view(ptx).substr(brace, close - brace);
    if (open != std::string::npos && open < brace) {
      const size_t params_end = ptx.find(')', open);
      const std::string_view params = std::string_view(ptx).substr(open + 1, params_end - open - 1);
      size_t from = 0;
      while (from <= params.size()) {
        size_t comma = params.find(',', from);
        if (comma == std::string_view::npos) comma = params.size();
        const std::string_view param = Trim(params.substr(from, comma - from));
        from = comma + 1;
        if (param.empty()) continue;
        const std::vector<std::string_view> tokens = Tokens(param);
        ArgumentDeclaration a;
        std::string_view name = tokens.back();
        uint32_t size = 0;
        uint32_t element = 0;
        bool pointer_annotation = false;
        for (const std::string_view t : tokens) {
          if (t == ".ptr") pointer_annotation = true;
          if (element == 0) element = TypeSize(t);
        }
        const size_t bracket = name.find('[');
        if (bracket != std::string_view::npos) {  // ".param .align 8 .b8 name[16]": a by-value struct
          size = element * static_cast<uint32_t>(std::atoi(std::string(name.substr(bracket + 1)).c_str()));
          name = name.substr(0, bracket);
        } else {
          size = element;
        }
        a.name = std::string(name);
        bool buffer = false;
        if (bracket == std::string_view::npos && element == 8) {
          const std::vector<std::string> registers = LoadedRegisters(body, name);
          buffer = pointer_annotation || registers.empty();
          for (const std::string& reg : registers) buffer = buffer || UsedAsAddress(body, reg);
        }
        if (buffer) {
          a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
          a.access = ACCEL_ACCESS_READ_WRITE;
          a.size = 0;
        } else {
          a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
          a.access = ACCEL_ACCESS_READ;
          a.size = size;
        }
        entry.arguments.push_back(std::move(a));
      }
    }
    for (const std::string& shared : dynamic_shared) {
      if (HasWord(body, shared)) {
        ArgumentDeclaration a;
        a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
        a.access = ACCEL_ACCESS_READ_WRITE;
        a.name = shared;
        entry.arguments.push_back(std::move(a));
        break;
      }
    }
    entries.push_back(std::move(entry));
    at = close;
  }
  return entries;
}

}  // namespace accel::cuda
