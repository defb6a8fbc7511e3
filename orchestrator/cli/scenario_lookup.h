// Finding the scenario a subcommand names: a file (a mistyped path gets "did you mean" from
// its directory) or, for `history`, the name its runs are stored under.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "store/store_readers.h"

namespace kvsweep::orchestrator {

// A scenario file with errors. what(): "2 problems in FILE; nothing was run"; texts(): each
// error in full (file:line:column, message, source line, caret), for main() to print.
class ScenarioFileError : public UsageError {
 public:
  ScenarioFileError(const std::string& path, std::vector<std::string> texts);
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::vector<std::string> texts_;
};

// Reads and checks a scenario file against kvsweep's target kinds; throws ScenarioFileError
// listing every problem.
ScenarioSpec load_scenario_or_throw(const std::string& path);

// Why `path` is no scenario file to read: "no such file: scenarios/quickstat.yaml; did you
// mean 'scenarios/quickstart.yaml'?"; nullopt when it is a regular file.
std::optional<std::string> missing_scenario_file(const std::string& path);

// A CLI11 check for a scenario file argument: a mistyped path gets "did you mean".
CLI::Validator scenario_file();

// The scenario name a `history` argument means: a scenario file's `name` (an existing file, or
// anything that looks like a path), else the argument itself, which must be stored. Throws
// ScenarioFileError for a file with errors, std::invalid_argument for a path that is no file
// or a name with no stored run (with "did you mean" among the stored names).
std::string scenario_name_of(const store::RunReader& store, const std::string& file_or_name);

}  // namespace kvsweep::orchestrator
