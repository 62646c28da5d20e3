// The command-line conventions accel-info and accel-plan share: --help and
// --help-all print CLI11's help to stdout, --version prints the version text,
// and a usage error prints "<tool>: <what is wrong>" and a hint to stderr.
// Thread-compatible: one App, parsed from main.
#ifndef ACCEL_TOOLS_COMMON_COMMAND_LINE_H_
#define ACCEL_TOOLS_COMMON_COMMAND_LINE_H_

#include <CLI/CLI.hpp>

#include <optional>
#include <string_view>

namespace accel::tools {

// The exit statuses ParseCommandLine returns, the same in every tool's
// documented list.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitUsage = 1;

// Parses `argv` with `app` and handles what ends the run there: help
// (--help, --help-all) to stdout, the version flag's text to stdout, and a
// parse error (also one thrown by a callback of `app`, such as a
// CLI::RequiredError for a rule CLI11 cannot state) as
// "<tool>: <error>\nRun with --help for more information.\n" to stderr.
// Returns the exit status when the run ends there (kExitSuccess after help or
// the version, kExitUsage after an error), std::nullopt when the tool goes on.
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, std::string_view tool);

}  // namespace accel::tools

#endif  // ACCEL_TOOLS_COMMON_COMMAND_LINE_H_
