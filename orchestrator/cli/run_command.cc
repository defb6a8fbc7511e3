// `kvsweep run`: a scenario's sweep on its target, stored, then its report written and printed.
#include "orchestrator/cli/run_command.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/duration.h"
#include "common/error_kinds.h"
#include "common/join.h"
#include "figures/run_comparison.h"
#include "figures/stored_summaries.h"
#include "orchestrator/cli/api_key.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/sweep_preview.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_factory.h"
#include "reports/level_winners.h"
#include "reports/markdown_report.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

// The line that says how to pick up a sweep that stopped before its end.
std::string continue_hint(const RunArgs& args, const store::RunReader& store) {
  return "to continue: kvsweep --db " + store.path() + " run --resume " + args.scenario_path +
         (args.target_override.empty() ? "" : " --target " + args.target_override);
}

double claim_timeout_s(const std::string& text) {
  const std::optional<double> seconds = parse_duration_s(text);
  if (!seconds || *seconds <= 0) {
    throw UsageError("--claim-timeout: expected a duration > 0 such as 60s or 5m, got \"" + text +
                     "\"");
  }
  return *seconds;
}

// The target to run on, and for a prediction its load step and samples wired into `options`.
std::unique_ptr<Target> target_for(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                   const RunArgs& args, const GlobalOptions& global,
                                   RunnerOptions& options) {
  if (args.target_override != "predict") {
    return build_target(spec, plan, args.target_override, global.log);
  }
  std::unique_ptr<PredictTarget> predicted =
      build_predict_target(spec, plan, args.network_latency_s, global.log);
  // The returned target owns the fleet and outlives the run.
  wire_predict_target(*predicted, options);
  return predicted;
}

// The run against the run of its scenario before it, as `kvsweep compare` does, stored for
// serve's history page (figures/run_comparison.h) and said in one line; "" for a scenario's
// first run. A comparison that fails is a warning: the run's cells are already stored.
std::string comparison_line(store::Store& store, std::int64_t experiment_id) {
  try {
    const auto recorded = figures::record_run_comparison(store, experiment_id);
    if (!recorded) return "";
    const std::string against = "against experiment " + std::to_string(recorded->previous_id) +
                                ", the run before (kvsweep compare " +
                                std::to_string(recorded->previous_id) + " " +
                                std::to_string(experiment_id) + "): ";
    if (!recorded->nothing_compared.empty()) {
      return against + "nothing compared: " + recorded->nothing_compared;
    }
    if (recorded->regressions.empty()) return against + "no regression";
    std::vector<std::string> levels;
    for (const auto& level : recorded->regressions) {
      levels.push_back(level.strategy + " @ " + std::to_string(level.concurrency) + " (" +
                       join(level.metrics) + ")");
    }
    return against + "regression at " + join(levels, "; ");
  } catch (const std::exception& e) {
    return std::string("warning: not compared with the run before: ") + e.what();
  }
}

}  // namespace

std::optional<double> parse_network_latency(const std::string& text) {
  const std::optional<double> seconds = parse_duration_s(text);
  if (!seconds || *seconds < 0) return std::nullopt;
  return seconds;
}

int run_scenario(const RunArgs& args, const GlobalOptions& global) {
  const double claim_timeout = claim_timeout_s(args.claim_timeout);
  ScenarioSpec spec = load_scenario_or_throw(args.scenario_path);
  if (args.target_override == "sim") spec = rehearsal_of(spec);
  if (args.network_latency_s > 0 && args.target_override != "predict") {
    throw UsageError(
        "--network-latency: only a prediction models the network "
        "(--target predict, or kvsweep predict)");
  }
  const std::string api_key = api_key_from_env(args.api_key_env, "--api-key-env");
  if (const auto dir = std::filesystem::path(args.db_path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir);
  }
  store::Store store = store::Store::open(args.db_path);
  Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
  // Cells stored by an older kvsweep get their summaries once, here, so every report after
  // reads them instead of the rows.
  figures::summarize_stored_cells(
      store, [&console](const std::string& line) { console.line("kvsweep: " + line); });
  RunnerOptions options;
  // The run's one expansion of its plan: the target checks it, the headline counts it, the
  // runner runs it.
  const std::vector<CellPlan> plan = expand_plan(spec, args.target_override);
  std::unique_ptr<Target> target = target_for(spec, plan, args, global, options);
  console.line(plan_headline(spec, plan, target->describe()));
  console.line(cell_shape(spec, args.target_override == "sim"));

  SignalGuard signals;
  options.stop = &signals.stop_flag();
  options.resume = args.resume;
  options.target_override = args.target_override;
  options.api_key = api_key;
  options.api_key_env = args.api_key_env;
  options.log = global.log;
  options.claim_timeout_s = claim_timeout;
  SweepOutcome outcome;
  try {
    outcome = run_sweep(spec, plan, *target, store, console, options);
  } catch (const ClaimedByAnotherRun& e) {
    print_error(e.what());
    return kExitClaimed;
  } catch (const SweepStopped& e) {
    // The finished cells are stored; the report is not written, the store may be what failed.
    print_error(e.what());
    console.line(continue_hint(args, store));
    return kExitFailed;
  }

  const figures::ReportModel model = figures::build_report_model(store, outcome.experiment_id);
  const std::string report = reports::render_markdown(model);
  const std::string report_path = args.reports_dir + "/" + file_stem(spec.name) + ".md";
  write_file(report_path, report);
  if (args.print_report) std::fprintf(stdout, "%s", report.c_str());
  std::string summary = "experiment " + std::to_string(outcome.experiment_id) + " " +
                        outcome.status + ": " + std::to_string(outcome.cells_done) +
                        " cells done, " + std::to_string(outcome.cells_failed) + " failed";
  if (outcome.cells_skipped > 0) {
    summary += ", " + std::to_string(outcome.cells_skipped) + " already done before resuming";
  }
  console.line(summary + "; store " + store.path() + ", report " + report_path);
  if (const std::string line = comparison_line(store, outcome.experiment_id); !line.empty()) {
    console.line(line);
  }
  // The answer again where the terminal ends up, after a report that may have scrolled it away
  // (and the only answer shown with --no-print).
  // A search's answer is its capacities; per-level winners would compare an arm's probes.
  if (!model.capacity) {
    for (const reports::LevelWinner& verdict : reports::level_winners(model)) {
      console.line("  " + verdict.text);
    }
  }
  if (model.capacity) {
    for (const std::string& line : figures::capacity_lines(*model.capacity)) console.line(line);
  }
  if (outcome.status == "interrupted") {
    console.line(continue_hint(args, store));
    return kExitInterrupted;
  }
  return outcome.status == "done" ? kExitOk : kExitFailed;
}

void add_run_options(CLI::App* cmd, RunArgs& args, bool* no_print) {
  cmd->add_option("scenario", args.scenario_path, "scenario YAML file")
      ->required()
      ->check(scenario_file());
  cmd->add_option("-o,--output,--reports-dir", args.reports_dir,
                  "directory the markdown report <name>.md goes to (old name --reports-dir)")
      ->capture_default_str();
  cmd->add_flag("--resume", args.resume,
                "continue the latest unfinished experiment of this scenario: finished cells are "
                "kept, finished deployments are not redone");
  cmd->add_option("--claim-timeout", args.claim_timeout,
                  "with --resume: a cell claimed by another run whose heartbeat is older than "
                  "this is taken over (that run is dead); a younger claim makes this run refuse "
                  "with exit status 4")
      ->capture_default_str();
  cmd->add_option("--api-key-env", args.api_key_env,
                  "name of the environment variable holding the API key sent as a Bearer "
                  "token (the key itself is never stored or printed)");
  cmd->add_flag("--no-print", *no_print, "write the report file but do not print it");
}

void add_network_latency_option(CLI::App* cmd, RunArgs& args) {
  cmd->add_option_function<std::string>(
         "--network-latency",
         [&args](const std::string& text) {
           const auto seconds = parse_network_latency(text);
           if (!seconds) {
             throw CLI::ValidationError(
                 "--network-latency",
                 "expected a duration >= 0 (2ms, 0.5ms, 1s), got \"" + text + "\"");
           }
           args.network_latency_s = *seconds;
         },
         "prediction only: one-way latency between client and replica, added to every "
         "request and every byte of its answer (default 0)")
      ->type_name("DURATION");
}

Subcommand register_run(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "run a scenario's sweep, store it, write its report");
  auto no_print = std::make_shared<bool>(false);
  add_run_options(cmd, *args, no_print.get());
  cmd->add_option("--target", args->target_override,
                  "run on another target than the scenario's: sim (the embedded fleet, sized "
                  "by target.sim, cut as target.sim says), predict (the same fleet in virtual "
                  "time, full size, in seconds: kvsweep predict)")
      ->check(CLI::IsMember({"sim", "predict"}));
  add_network_latency_option(cmd, *args);
  return {cmd, [args, no_print, &global] {
            args->db_path = global.db_path;
            args->print_report = !*no_print;
            return run_scenario(*args, global);
          }};
}

}  // namespace kvsweep::orchestrator
