// Parsing kvsweep's command line: CLI11's errors become "kvsweep: error: ..." with exit status
// 2, and a mistyped subcommand gets "did you mean".
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

// Parses argv into `app`. nullopt: go on and run the chosen subcommand. Otherwise the command
// ends here with that exit status: 0 after --help or --version (printed on stdout), 2 after a
// usage error (printed on stderr).
std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv);

// The first word (after argv[0]) that stands where a subcommand must and names none, as
// "unknown command 'sim serv'; did you mean 'sim serve'?" (or listing the commands when none
// is close). nullopt when there is no such word.
std::optional<std::string> unknown_subcommand(const CLI::App& app,
                                              const std::vector<std::string>& args);

}  // namespace kvsweep::orchestrator
