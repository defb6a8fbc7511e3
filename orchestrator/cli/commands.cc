// The sweep subcommands: run, runs, plan.
#include "orchestrator/cli/subcommand.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "orchestrator/cli/api_key.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/cli/store_lookup.h"
#include "reports/markdown_report.h"
#include "reports/verdicts.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

struct RunArgs {
  std::string db_path;
  std::string scenario_path;
  std::string reports_dir = "reports";  // --output
  bool print_report = true;
  bool resume = false;
  std::string target_override;  // "" or "sim"
  std::string api_key_env;      // the variable holding the servers' API key, if any
};

struct RunsArgs {
  std::string db_path;
  std::string experiment;  // "" = list experiments; else list that experiment's cells
  bool commands = false;   // also print every command run for each cell, with its output
  int cell = 0;            // with commands: only this cell (1-based ordinal); 0 = every cell
};

// Output kept with a command, indented under it; nothing when it printed nothing.
void print_indented(const char* label, const std::string& text) {
  if (text.empty()) return;
  std::printf("      %s:\n", label);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::printf("        %s\n", text.substr(start, end - start).c_str());
    start = end + 1;
  }
}

// `kvsweep runs EXP --commands`: what the runner ran for each cell (kubectl applies, gate
// polls, cold resets), in order, with exit code, time and output, as stored with the cell.
void print_cell_commands(const store::Store& store, const std::vector<store::CellRow>& cells,
                         int only_cell) {
  for (const auto& c : cells) {
    if (only_cell != 0 && c.ordinal + 1 != only_cell) continue;
    const auto commands = store.commands(c.id);
    std::printf("\ncell %d (%s, concurrency %d, repeat %d): %zu command%s\n", c.ordinal + 1,
                c.strategy.c_str(), c.concurrency, c.repeat + 1, commands.size(),
                commands.size() == 1 ? "" : "s");
    for (const auto& command : commands) {
      const std::string exit_text = command.exit_code < 0
                                        ? std::string("did not exit by itself")
                                        : "exit " + std::to_string(command.exit_code);
      std::printf("  [%s] $ %s\n      %s, %.3f s\n", command.step.c_str(),
                  describe_argv(command.argv).c_str(), exit_text.c_str(), command.seconds);
      print_indented("stdout", command.out);
      print_indented("stderr", command.err);
    }
  }
}

std::string plan_headline(const ScenarioSpec& spec, const std::vector<CellPlan>& cells,
                          const std::string& target) {
  std::string shape;
  for (const auto& f : spec.factors) {
    shape += (shape.empty() ? "" : " x ") + std::to_string(f.levels.size()) + " " + f.name;
  }
  if (spec.repeats > 1) shape += " x " + std::to_string(spec.repeats) + " repeats";
  const int deployments = cells.empty() ? 0 : cells.back().deploy_group + 1;
  return "sweep " + spec.name + ": " + std::to_string(cells.size()) + " cells (" + shape + "), " +
         std::to_string(deployments) + " deployment" + (deployments == 1 ? "" : "s") +
         ", target " + target;
}

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string format_seconds(double s) { return format_number(s) + "s"; }

// What every cell does, so a rehearsal's cuts are in plain sight.
std::string cell_shape(const ScenarioSpec& spec, bool rehearsal) {
  const LoadSpec& l = spec.load;
  std::string text = "each cell: ";
  if (l.num_requests > 0) text += std::to_string(l.num_requests) + " requests";
  if (l.num_requests > 0 && l.duration_s > 0) text += " or ";
  if (l.duration_s > 0) text += format_seconds(l.duration_s);
  if (l.num_requests > 0 && l.duration_s > 0) text += ", whichever ends first";
  if (l.request_rate > 0) text += "; open loop at " + format_number(l.request_rate) + " req/s";
  text += "; max_tokens " + std::to_string(l.max_tokens);
  if (l.max_tokens_cap > 0) text += " (capped at " + std::to_string(l.max_tokens_cap) + ")";
  text += "; cache " + l.cache;
  if (l.warmup_requests > 0) text += "; " + std::to_string(l.warmup_requests) + " warm-up requests";
  const SimSpec& sim = spec.target.sim;
  if (rehearsal && (sim.duration_s > 0 || sim.num_requests > 0 || sim.max_tokens > 0)) {
    text += "  [cut by target.sim for the rehearsal]";
  }
  return text;
}

// Builds the target; a scenario the target cannot apply is an error before anything runs.
std::unique_ptr<Target> build_target(const ScenarioSpec& spec, const std::string& override_kind,
                                     const Log& log) {
  try {
    return make_target(spec, override_kind == "sim", log);
  } catch (const TargetError& e) {
    throw std::invalid_argument(spec.path + ": " + e.what());
  }
}

int run_command(const RunArgs& args, const GlobalOptions& global) {
  ScenarioSpec spec = load_scenario_or_throw(args.scenario_path);
  if (args.target_override == "sim") spec = rehearsal_of(spec);
  const std::string api_key = api_key_from_env(args.api_key_env, "--api-key-env");
  if (const auto dir = std::filesystem::path(args.db_path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir);
  }
  store::Store store = store::Store::open(args.db_path);
  Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
  std::unique_ptr<Target> target = build_target(spec, args.target_override, global.log);
  console.line(plan_headline(spec, expand_plan(spec, args.target_override), target->describe()));
  console.line(cell_shape(spec, args.target_override == "sim"));
  try {
    target->start();
  } catch (const TargetError& e) {
    throw std::runtime_error("starting the target: " + std::string(e.what()));
  }

  SignalGuard signals;
  RunnerOptions options;
  options.stop = &signals.stop_flag();
  options.resume = args.resume;
  options.target_override = args.target_override;
  options.api_key = api_key;
  options.log = global.log;
  const SweepOutcome outcome = run_sweep(spec, *target, store, console, options);

  const reports::ReportModel model = reports::build_report_model(store, outcome.experiment_id);
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
  // The answer again where the terminal ends up, after a report that may have scrolled it away
  // (and the only answer shown with --no-print).
  for (const reports::LevelVerdict& verdict : reports::level_verdicts(model)) {
    console.line("  " + verdict.text);
  }
  if (outcome.status == "interrupted") {
    console.line("to continue: kvsweep --db " + store.path() + " run --resume " +
                 args.scenario_path + (args.target_override.empty() ? "" : " --target sim"));
    return kExitInterrupted;
  }
  return outcome.status == "done" ? kExitOk : kExitFailed;
}

int runs_command(const RunsArgs& args) {
  const store::Store store = open_existing_store(args.db_path);
  if (args.experiment.empty()) {
    // Measured requests and warm-up ones apart: warm-up is excluded from every figure.
    std::printf("%-4s %-28s %-21s %-12s %-7s %-9s %s\n", "id", "name", "started", "status", "cells",
                "requests", "warm-up");
    for (const auto& e : store.experiments()) {
      const auto cells = store.cells(e.id);
      std::size_t done = 0;
      store::RequestCounts requests;
      for (const auto& c : cells) {
        done += c.status == "done";
        const store::RequestCounts counts = store.request_counts(c.id);
        requests.measured += counts.measured;
        requests.warmup += counts.warmup;
      }
      const std::string cell_text = std::to_string(done) + "/" + std::to_string(cells.size());
      std::printf("%-4lld %-28s %-21s %-12s %-7s %-9lld %lld\n", static_cast<long long>(e.id),
                  e.name.c_str(), e.started_at.c_str(), e.status.c_str(), cell_text.c_str(),
                  static_cast<long long>(requests.measured),
                  static_cast<long long>(requests.warmup));
    }
    return kExitOk;
  }
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  const auto cells = store.cells(experiment.id);
  if (args.cell > static_cast<int>(cells.size())) {
    throw std::invalid_argument("--cell " + std::to_string(args.cell) + ": experiment " +
                                std::to_string(experiment.id) + " has " +
                                std::to_string(cells.size()) + " cells");
  }
  std::printf("experiment %lld %s (%s), started %s\n", static_cast<long long>(experiment.id),
              experiment.name.c_str(), experiment.status.c_str(), experiment.started_at.c_str());
  std::printf("%-5s %-14s %-11s %-6s %-12s %-9s %-8s %s\n", "cell", "strategy", "concurrency",
              "repeat", "status", "requests", "warm-up", "error");
  for (const auto& c : cells) {
    const store::RequestCounts counts = store.request_counts(c.id);
    std::printf("%-5d %-14s %-11d %-6d %-12s %-9lld %-8lld %s\n", c.ordinal + 1, c.strategy.c_str(),
                c.concurrency, c.repeat + 1, c.status.c_str(),
                static_cast<long long>(counts.measured), static_cast<long long>(counts.warmup),
                c.error.c_str());
  }
  if (args.commands) print_cell_commands(store, cells, args.cell);
  return kExitOk;
}

// `kvsweep plan`: the cells in order and, at each change of treatment, the exact commands the
// runner would run. Builds the target (to validate and describe) but never starts it.
int plan_command(const std::string& scenario_path, const std::string& override_kind) {
  ScenarioSpec spec = load_scenario_or_throw(scenario_path);
  if (override_kind == "sim") spec = rehearsal_of(spec);
  const auto cells = expand_plan(spec, override_kind);
  std::unique_ptr<Target> target = build_target(spec, override_kind, silent_log());
  std::printf("%s\n%s\n", plan_headline(spec, cells, target->describe()).c_str(),
              cell_shape(spec, override_kind == "sim").c_str());
  std::optional<Treatment> applied;
  for (const auto& c : cells) {
    if (!applied || !(*applied == c.treatment)) {
      std::printf("\n  apply:");
      for (const auto& [factor, level] : c.treatment.levels) {
        std::printf(" %s=%s", factor.c_str(), level.c_str());
      }
      std::printf("%s\n", c.treatment.levels.empty() ? " (nothing to apply)" : "");
      auto commands = target->planned_commands(c.treatment);
      if (applied) {
        for (auto& argv : target->planned_redeploy(*applied, c.treatment)) {
          commands.push_back(std::move(argv));
        }
      }
      for (const auto& argv : commands) std::printf("    $ %s\n", describe_argv(argv).c_str());
      std::printf("    then the readiness gates\n");
      applied = c.treatment;
    }
    std::string extra;
    for (const auto& [factor, level] : c.load_levels) extra += " " + factor + "=" + level;
    std::printf("  %3d  %-28s concurrency=%-5d repeat=%d%s  key=%s\n", c.ordinal + 1,
                c.arm.c_str(), c.concurrency, c.repeat + 1, extra.c_str(), c.key.c_str());
  }
  return kExitOk;
}

// A CLI11 check for a scenario file argument: a mistyped path gets "did you mean".
CLI::Validator scenario_file() {
  return CLI::Validator([](std::string& path) { return missing_scenario_file(path).value_or(""); },
                        "FILE");
}

}  // namespace

Subcommand register_run(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "run a scenario's sweep, store it, write its report");
  cmd->add_option("scenario", args->scenario_path, "scenario YAML file")
      ->required()
      ->check(scenario_file());
  cmd->add_option("-o,--output,--reports-dir", args->reports_dir,
                  "directory the markdown report <name>.md goes to (old name --reports-dir)")
      ->capture_default_str();
  cmd->add_flag("--resume", args->resume,
                "continue the latest unfinished experiment of this scenario: finished cells are "
                "kept, finished deployments are not redone");
  cmd->add_option("--target", args->target_override,
                  "run on another target than the scenario's: sim (the embedded fleet, sized "
                  "by target.sim)")
      ->check(CLI::IsMember({"sim"}));
  cmd->add_option("--api-key-env", args->api_key_env,
                  "name of the environment variable holding the API key sent as a Bearer "
                  "token (the key itself is never stored or printed)");
  auto no_print = std::make_shared<bool>(false);
  cmd->add_flag("--no-print", *no_print, "write the report file but do not print it");
  return {cmd, [args, no_print, &global] {
            args->db_path = global.db_path;
            args->print_report = !*no_print;
            return run_command(*args, global);
          }};
}

Subcommand register_runs(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunsArgs>();
  auto* cmd = app.add_subcommand("runs", "list stored experiments, or one's cells");
  cmd->add_option("experiment", args->experiment, "experiment id or name: list its cells");
  auto* commands = cmd->add_flag(
      "--commands", args->commands,
      "with an experiment: also print every command run for each cell (kubectl applies, "
      "readiness polls, cold resets) with its exit code, time and output");
  cmd->add_option("--cell", args->cell, "with --commands: only this cell (its number)")
      ->check(CLI::PositiveNumber)
      ->needs(commands);
  return {cmd, [args, &global] {
            if (args->commands && args->experiment.empty()) {
              throw std::invalid_argument("--commands: give the experiment whose cells to show");
            }
            args->db_path = global.db_path;
            return runs_command(*args);
          }};
}

Subcommand register_plan(CLI::App& app, const GlobalOptions&) {
  auto scenario = std::make_shared<std::string>();
  auto override_kind = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "plan", "print a scenario's cells in order and the exact commands, run nothing");
  cmd->add_option("scenario", *scenario, "scenario YAML file")->required()->check(scenario_file());
  cmd->add_option("--target", *override_kind, "plan for another target: sim")
      ->check(CLI::IsMember({"sim"}));
  return {cmd, [scenario, override_kind] { return plan_command(*scenario, *override_kind); }};
}

}  // namespace kvsweep::orchestrator
