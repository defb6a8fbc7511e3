// kvsweep's entry point: registers the subcommands, parses the command line, runs the chosen one.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "orchestrator/report_commands.h"
#include "orchestrator/load_command.h"
#include "orchestrator/sim_commands.h"
#include "orchestrator/subcommand.h"

namespace orch = kvsweep::orchestrator;

int main(int argc, char** argv) {
  CLI::App app{"kvsweep: sweeps LLM-serving routing experiments and reports them"};
  app.set_version_flag("--version", KVSWEEP_VERSION);
  app.require_subcommand(1);
  orch::GlobalOptions global;
  app.add_option("--db", global.db_path, "SQLite store of every experiment")
      ->capture_default_str();
  app.add_flag("-v,--verbose", global.verbose, "debug logging on stderr");

  // One line per subcommand; each lives in its own file under orchestrator/.
  const std::vector<orch::Subcommand> subcommands = {
      orch::register_run(app, global),
      orch::register_report(app, global),
      orch::register_runs(app, global),
      orch::register_plan(app, global),
      orch::register_sim(app, global),
      orch::register_proxy(app, global),
      orch::register_load(app, global),
      orch::register_compare(app, global),
      orch::register_history(app, global),
      orch::register_export(app, global),
  };

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(global.verbose ? spdlog::level::debug : spdlog::level::warn);
  try {
    for (const auto& subcommand : subcommands) {
      if (subcommand.app->parsed()) return subcommand.run();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvsweep: error: %s\n", e.what());
    return orch::kExitFailed;
  }
  return orch::kExitFailed;
}
