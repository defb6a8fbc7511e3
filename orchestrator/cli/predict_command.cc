// `kvsweep predict`: `kvsweep run SCENARIO --target predict`, the sweep in virtual time.
#include <memory>

#include "orchestrator/cli/run_command.h"
#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {

Subcommand register_predict(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  args->target_override = "predict";
  auto* cmd = app.add_subcommand(
      "predict",
      "predict a scenario's sweep in seconds: its cells at full size on the simulated fleet "
      "(target.sim: replicas, profile) in virtual time; stored and reported as predicted "
      "(short for run SCENARIO --target predict)");
  auto no_print = std::make_shared<bool>(false);
  add_run_options(cmd, *args, no_print.get());
  add_network_latency_option(cmd, *args);
  return {cmd, [args, no_print, &global] {
            args->db_path = global.db_path;
            args->print_report = !*no_print;
            return run_scenario(*args, global);
          }};
}

}  // namespace kvsweep::orchestrator
