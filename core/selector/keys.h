// The names a selector may use: capability keys with their selector types,
// short aliases, the prefixes of name-set tests (format:, feature:, ...) and
// the bare boolean names (docs/selectors.md, "Keys"). Constant tables and pure
// functions: thread-safe.
#ifndef ACCEL_CORE_SELECTOR_KEYS_H_
#define ACCEL_CORE_SELECTOR_KEYS_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace accel::selector {

// What a key's value is, for type checking and for explanations.
enum class KeyType {
  kString,    // compared with ==, != and in, ASCII case-insensitively
  kKind,      // a device kind name: cpu, gpu, npu, tpu, fpga, unknown
  kUnsigned,  // an unsigned integer
  kSigned,    // a signed integer (numa_node)
  kBytes,     // a size in bytes; literals need a unit
  kBool,      // true or false; usable bare
  kNameSet,   // a set of names; tested with a prefix (format:ptx) or bare
  kTriple,    // a 3-component value: not comparable
};

// One registered capability key as a selector sees it.
struct Key {
  const char* name;  // the canonical name of docs/capability-keys.md
  KeyType type;
};

// A short spelling of a key (mem -> memory_total).
struct Alias {
  const char* alias;
  const char* key;
};

// A prefix that tests membership in a name set (format: -> kernel_formats).
struct Prefix {
  const char* prefix;
  const char* key;
};

// A bare name that is true when the device's name set `key` has any of `any_of`.
struct BareName {
  std::string name;
  std::string key;
  std::vector<std::string> any_of;
};

std::span<const Key> Keys();
std::span<const Alias> Aliases();
std::span<const Prefix> Prefixes();
// Every bare name: features, numeric formats, device flags, and "fp8".
const std::vector<BareName>& BareNames();
// The names valid after a prefix's key: kernel formats, features, ...
std::vector<std::string> NamesOf(std::string_view set_key);

// Lowercase, with '-' read as '_': the form names are compared in.
std::string Normalize(std::string_view name);
// A key by canonical name or alias (normalised), or nullptr.
const Key* FindKey(std::string_view name);
const Prefix* FindPrefix(std::string_view name);
const BareName* FindBareName(std::string_view name);
// The candidate closest to `word` when it is close enough to be a likely
// typo (edit distance at most 1, or 2 for words of 5 or more characters);
// "" otherwise.
std::string Nearest(std::string_view word, const std::vector<std::string>& candidates);

// "a string", "a size in bytes", ... for messages.
const char* TypeDescription(KeyType type);

}  // namespace accel::selector

#endif  // ACCEL_CORE_SELECTOR_KEYS_H_
