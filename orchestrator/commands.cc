// The sweep subcommands: run, runs, plan.
#include "orchestrator/subcommand.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "orchestrator/console.h"
#include "orchestrator/plan.h"
#include "orchestrator/runner.h"
#include "orchestrator/scenario_loader.h"
#include "orchestrator/signal_guard.h"
#include "orchestrator/sim_target.h"
#include "orchestrator/store_lookup.h"
#include "reports/markdown_report.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

struct RunArgs {
  std::string db_path;
  std::string scenario_path;
  std::string reports_dir = "reports";
  bool print_report = true;
};

struct RunsArgs {
  std::string db_path;
  std::string experiment;  // "" = list experiments; else list that experiment's cells
};

std::optional<ScenarioSpec> load_or_print_errors(const std::string& path) {
  std::vector<ScenarioError> errors;
  auto spec = load_scenario_file(path, &errors);
  for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.text.c_str());
  if (!spec) {
    std::fprintf(stderr, "kvsweep: error: %zu problem%s in %s; nothing was run\n", errors.size(),
                 errors.size() == 1 ? "" : "s", path.c_str());
  }
  return spec;
}

std::string plan_headline(const ScenarioSpec& spec, std::size_t cells, const std::string& target) {
  std::string text = "sweep " + spec.name + ": " + std::to_string(cells) + " cells (" +
                     std::to_string(spec.strategies.size()) + " strategies x " +
                     std::to_string(spec.concurrency.size()) + " concurrencies";
  if (spec.repeats > 1) text += " x " + std::to_string(spec.repeats) + " repeats";
  return text + "), target " + target;
}

int run_command(const RunArgs& args) {
  auto spec = load_or_print_errors(args.scenario_path);
  if (!spec) return kExitFailed;
  if (const auto dir = std::filesystem::path(args.db_path).parent_path(); !dir.empty()) {
    std::filesystem::create_directories(dir);
  }
  store::Store store = store::Store::open(args.db_path);
  Console console(stderr);
  SimTarget target(spec->target, spec->model, spec->seed);
  console.line(plan_headline(*spec, expand_plan(*spec).size(), target.describe()));
  target.start();

  SignalGuard signals;
  RunnerOptions options;
  options.stop = &signals.stop_flag();
  const SweepOutcome outcome = run_sweep(*spec, target, store, console, options);

  const std::string report = reports::render_markdown(store, outcome.experiment_id);
  const std::string report_path = args.reports_dir + "/" + file_stem(spec->name) + ".md";
  write_file(report_path, report);
  if (args.print_report) std::fprintf(stdout, "%s", report.c_str());
  console.line("experiment " + std::to_string(outcome.experiment_id) + " " + outcome.status +
               ": " + std::to_string(outcome.cells_done) + " cells done, " +
               std::to_string(outcome.cells_failed) + " failed; store " + store.path() +
               ", report " + report_path);
  if (outcome.status == "interrupted") return kExitInterrupted;
  return outcome.status == "done" ? kExitOk : kExitFailed;
}

int runs_command(const RunsArgs& args) {
  const store::Store store = open_existing_store(args.db_path);
  if (args.experiment.empty()) {
    std::printf("%-4s %-28s %-21s %-12s %-7s %s\n", "id", "name", "started", "status", "cells",
                "requests");
    for (const auto& e : store.experiments()) {
      const auto cells = store.cells(e.id);
      std::size_t done = 0;
      std::int64_t requests = 0;
      for (const auto& c : cells) {
        done += c.status == "done";
        requests += store.request_count(c.id);
      }
      const std::string cell_text = std::to_string(done) + "/" + std::to_string(cells.size());
      std::printf("%-4lld %-28s %-21s %-12s %-7s %lld\n", static_cast<long long>(e.id),
                  e.name.c_str(), e.started_at.c_str(), e.status.c_str(), cell_text.c_str(),
                  static_cast<long long>(requests));
    }
    return kExitOk;
  }
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  std::printf("experiment %lld %s (%s), started %s\n", static_cast<long long>(experiment.id),
              experiment.name.c_str(), experiment.status.c_str(), experiment.started_at.c_str());
  std::printf("%-5s %-14s %-11s %-6s %-12s %-9s %s\n", "cell", "strategy", "concurrency",
              "repeat", "status", "requests", "error");
  for (const auto& c : store.cells(experiment.id)) {
    std::printf("%-5d %-14s %-11d %-6d %-12s %-9lld %s\n", c.ordinal + 1, c.strategy.c_str(),
                c.concurrency, c.repeat + 1, c.status.c_str(),
                static_cast<long long>(store.request_count(c.id)), c.error.c_str());
  }
  return kExitOk;
}

int plan_command(const std::string& scenario_path) {
  auto spec = load_or_print_errors(scenario_path);
  if (!spec) return kExitFailed;
  const auto cells = expand_plan(*spec);
  std::printf("%s\n", plan_headline(*spec, cells.size(),
                                    "sim x" + std::to_string(spec->target.replicas) + " (" +
                                        spec->target.profile + ")")
                          .c_str());
  for (const auto& c : cells) {
    std::printf("%3d  strategy=%-12s concurrency=%-5d repeat=%d  key=%s\n", c.ordinal + 1,
                c.strategy.c_str(), c.concurrency, c.repeat + 1, c.key.c_str());
  }
  return kExitOk;
}

}  // namespace

Subcommand register_run(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "run a scenario's sweep, store it, write its report");
  cmd->add_option("scenario", args->scenario_path, "scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--reports-dir", args->reports_dir, "where the markdown report goes")
      ->capture_default_str();
  auto no_print = std::make_shared<bool>(false);
  cmd->add_flag("--no-print", *no_print, "write the report file but do not print it");
  return {cmd, [args, no_print, &global] {
            args->db_path = global.db_path;
            args->print_report = !*no_print;
            return run_command(*args);
          }};
}

Subcommand register_runs(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<RunsArgs>();
  auto* cmd = app.add_subcommand("runs", "list stored experiments, or one's cells");
  cmd->add_option("experiment", args->experiment, "experiment id or name: list its cells");
  return {cmd, [args, &global] {
            args->db_path = global.db_path;
            return runs_command(*args);
          }};
}

Subcommand register_plan(CLI::App& app, const GlobalOptions&) {
  auto scenario = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("plan", "print a scenario's cells in order, run nothing");
  cmd->add_option("scenario", *scenario, "scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  return {cmd, [scenario] { return plan_command(*scenario); }};
}

}  // namespace kvsweep::orchestrator
