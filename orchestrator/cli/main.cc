// kvsweep's entry point: registers the subcommands, parses the command line, sets up logging,
// runs the chosen subcommand and turns what it throws into an error line and exit status.
#include <spdlog/spdlog.h>

#include <exception>
#include <stdexcept>
#include <vector>

#include "common/error_kinds.h"
#include "orchestrator/cli/command_line.h"
#include "orchestrator/cli/log.h"
#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "store/store_identity.h"

namespace orch = kvsweep::orchestrator;

int main(int argc, char** argv) {
  CLI::App app{"kvsweep: sweeps LLM-serving routing experiments and reports them"};
  app.set_version_flag("--version", KVSWEEP_VERSION);
  app.require_subcommand(1);
  // The options below work before or after the subcommand: subcommands created from here on
  // hand the options they do not know to their parent.
  app.fallthrough();
  app.footer(
      "Exit status: 0 ok, 1 a failed cell, regression or error while running, 2 bad "
      "command line or input, 3 compare found nothing to compare, 130 interrupted.");
  orch::GlobalOptions global;
  bool verbose = false;
  bool quiet = false;
  app.add_option("--db", global.db_path, "SQLite store of every experiment")->capture_default_str();
  auto* verbose_flag = app.add_flag(
      "-v,--verbose", verbose,
      "debug log on stderr: every kubectl argv, readiness poll, /metrics scrape, admin request");
  app.add_flag("-q,--quiet", quiet, "print results only: no progress or status lines")
      ->excludes(verbose_flag);

  // One line per subcommand; each lives in its own file, orchestrator/cli/<name>_command.cc.
  const std::vector<orch::Subcommand> subcommands = {
      orch::register_run(app, global),     orch::register_report(app, global),
      orch::register_runs(app, global),    orch::register_plan(app, global),
      orch::register_sim(app, global),     orch::register_proxy(app, global),
      orch::register_load(app, global),    orch::register_compare(app, global),
      orch::register_history(app, global), orch::register_export(app, global),
      orch::register_predict(app, global), orch::register_serve(app, global),
      orch::register_audit(app, global),   orch::register_migrate(app, global),
      orch::register_backup(app, global),  orch::register_prune(app, global),
      orch::register_shard(app, global),   orch::register_calibrate(app, global),
      orch::register_replay(app, global),
  };

  if (const auto status = orch::parse_command_line(app, argc, argv)) return *status;
  global.verbosity = verbose ? orch::Verbosity::kVerbose
                             : (quiet ? orch::Verbosity::kQuiet : orch::Verbosity::kNormal);
  global.log = orch::stderr_log(global.verbosity);
  // The one place spdlog is configured: code that logs without being handed a logger (the
  // simulated fleet's warnings) goes through the same sink and level.
  spdlog::set_default_logger(global.log);
  try {
    for (const auto& subcommand : subcommands) {
      if (subcommand.app->parsed()) return subcommand.run();
    }
  } catch (const orch::ScenarioFileError& e) {
    for (const auto& text : e.texts()) orch::print_error(text);
    orch::print_error(e.what());
    return orch::kExitUsage;
  } catch (const kvsweep::UsageError& e) {  // the user's input: nothing was run
    orch::print_error(e.what());
    return orch::kExitUsage;
  } catch (const kvsweep::store::NotAStore& e) {  // --db names another program's file
    orch::print_error(e.what());
    return orch::kExitUsage;
  } catch (const std::exception& e) {
    orch::print_error(e.what());
    return orch::kExitFailed;
  }
  return orch::kExitFailed;
}
