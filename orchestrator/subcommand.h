// How a kvsweep subcommand plugs into the command line: it registers its options, and says
// what to run when the user chose it. main() only wires these together.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace kvsweep::orchestrator {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;       // an error, or a sweep with failed cells
inline constexpr int kExitNothingCompared = 3;  // compare: no level or metric in common
inline constexpr int kExitInterrupted = 130;

// Options every subcommand sees; filled in by CLI11 before any subcommand runs.
struct GlobalOptions {
  std::string db_path = "kvsweep.db";
  bool verbose = false;
};

struct Subcommand {
  CLI::App* app = nullptr;    // the CLI11 subcommand, for "was it chosen?"
  std::function<int()> run;   // returns the process exit status; throws on errors
};

// Each registers one subcommand on `app`. `global` outlives the returned runner. The
// reporting subcommands are declared in orchestrator/report_commands.h.
Subcommand register_run(CLI::App& app, const GlobalOptions& global);
Subcommand register_runs(CLI::App& app, const GlobalOptions& global);
Subcommand register_plan(CLI::App& app, const GlobalOptions& global);

}  // namespace kvsweep::orchestrator
