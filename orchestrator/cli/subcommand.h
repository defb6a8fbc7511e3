// How a kvsweep subcommand plugs into the command line: it registers its options, and says
// what to run when the user chose it. main() only wires these together.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "common/log.h"
#include "orchestrator/cli/console.h"

namespace kvsweep::orchestrator {

// The exit statuses, as README.md's table lists them. A subcommand returns kExitOk or
// kExitFailed itself; main() maps what it throws by its kind (common/error_kinds.h): a
// UsageError (bad input: an option's value, a missing store, an unknown experiment) to
// kExitUsage, anything else, a corrupt stored row among them, to kExitFailed.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // a failed cell, a regression, an error while running
inline constexpr int kExitUsage = 2;   // bad command line or input; nothing was run
inline constexpr int kExitNothingCompared = 3;  // compare: no level or metric in common
// run --resume: another live run holds the experiment (or took it over from this one)
inline constexpr int kExitClaimed = 4;

// Where reports and exports go without -o: a folder of its own, never a source folder (run from
// the repository root, "reports/" would mix results with the renderer's sources).
inline constexpr const char* kDefaultReportsDir = "kvsweep-reports";
inline constexpr int kExitInterrupted = 130;

// Options every subcommand sees, before or after its name; filled in by main() before any
// subcommand runs.
struct GlobalOptions {
  std::string db_path = "kvsweep.db";
  Verbosity verbosity = Verbosity::kNormal;
  Log log = silent_log();  // debug lines under --verbose
};

struct Subcommand {
  CLI::App* app = nullptr;   // the CLI11 subcommand, for "was it chosen?"
  std::function<int()> run;  // returns the process exit status; throws on errors
};

// Each registers one subcommand on `app`; each lives in its own file, cli/<name>_command.cc.
// `global` outlives the returned runner.
Subcommand register_run(CLI::App& app, const GlobalOptions& global);
Subcommand register_predict(CLI::App& app, const GlobalOptions& global);  // run --target predict
Subcommand register_runs(CLI::App& app, const GlobalOptions& global);
Subcommand register_plan(CLI::App& app, const GlobalOptions& global);
Subcommand register_report(CLI::App& app, const GlobalOptions& global);
Subcommand register_compare(CLI::App& app, const GlobalOptions& global);
Subcommand register_history(CLI::App& app, const GlobalOptions& global);
Subcommand register_export(CLI::App& app, const GlobalOptions& global);
Subcommand register_load(CLI::App& app, const GlobalOptions& global);
Subcommand register_sim(CLI::App& app, const GlobalOptions& global);  // `sim serve`
Subcommand register_proxy(CLI::App& app, const GlobalOptions& global);
Subcommand register_serve(CLI::App& app, const GlobalOptions& global);  // the web view
Subcommand register_audit(CLI::App& app, const GlobalOptions& global);  // an outside result
Subcommand register_migrate(CLI::App& app, const GlobalOptions& global);
Subcommand register_backup(CLI::App& app, const GlobalOptions& global);
Subcommand register_calibrate(CLI::App& app, const GlobalOptions& global);
Subcommand register_replay(CLI::App& app, const GlobalOptions& global);
Subcommand register_shard(CLI::App& app, const GlobalOptions& global);
Subcommand register_prune(CLI::App& app, const GlobalOptions& global);

}  // namespace kvsweep::orchestrator
