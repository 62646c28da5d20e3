// The tools' shared CLI11 parse (command_line.h).
#include "command_line.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace accel::tools {
namespace {

// CLI11's help text, ending with exactly one newline.
void PrintHelp(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  fmt::print("{}\n", text);
}

}  // namespace

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv, std::string_view tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    PrintHelp(app.help());
    return kExitSuccess;
  } catch (const CLI::CallForAllHelp&) {
    PrintHelp(app.help("", CLI::AppFormatMode::All));
    return kExitSuccess;
  } catch (const CLI::CallForVersion& e) {
    fmt::print("{}\n", e.what());
    return kExitSuccess;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return kExitSuccess;
    fmt::print(stderr, "{}: {}\nRun with --help for more information.\n", tool, e.what());
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace accel::tools
