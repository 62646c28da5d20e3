// A backend's expectations file (docs/conformance.md): `unsupported` entries,
// permanent, each naming a capability every device under test reports absent,
// and `expected-failure` entries, temporary, each with a reason.
//
//   {"unsupported": [{"test": "memory.map.*", "capability": "feature:host-mapped-memory",
//                     "reason": "device memory is not host-visible"}],
//    "expected-failure": [{"test": "streams.timing.monotonic", "reason": "issue 12: clock wraps"}]}
//
// Thread-safety: immutable after Load.
#ifndef ACCEL_TOOLS_ACCEL_CONFORMANCE_EXPECTATIONS_H_
#define ACCEL_TOOLS_ACCEL_CONFORMANCE_EXPECTATIONS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness.h"

namespace accel::conformance {

struct Expectations {
  struct Unsupported {
    std::string test;        // a stable id or a glob over ids ("memory.map.*")
    std::string capability;  // "feature:<name>", "kernel-format:<name>" or "numeric-format:<name>"
    std::string reason;
  };
  struct ExpectedFailure {
    std::string test;
    std::string reason;
  };
  std::string path;  // "" when none was given
  std::string sha256;
  std::vector<Unsupported> unsupported;
  std::vector<ExpectedFailure> expected_failures;

  const Unsupported* FindUnsupported(const std::string& id) const;
  const ExpectedFailure* FindExpectedFailure(const std::string& id) const;
};

// Reads and checks `path` against the registered case ids and the devices
// under test. On a rejected file returns the reason, naming the file, the
// entry and what is wrong.
std::optional<std::string> LoadExpectations(const std::string& path, const std::vector<std::string>& case_ids,
                                            const Target& target, Expectations* out);

// The same for the `contents` of an expectations file, `path` naming it (and
// filling `out->path`); `out->sha256` is left as it is.
std::optional<std::string> ParseExpectations(std::string_view contents, const std::string& path,
                                             const std::vector<std::string>& case_ids, const Target& target,
                                             Expectations* out);

// sha256 of a file's bytes as lowercase hex; "" when unreadable.
std::string Sha256File(const std::string& path);

}  // namespace accel::conformance

#endif  // ACCEL_TOOLS_ACCEL_CONFORMANCE_EXPECTATIONS_H_
