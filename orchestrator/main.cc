// kvsweep's entry point: parses the command line and dispatches to a subcommand.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "orchestrator/commands.h"

namespace orch = kvsweep::orchestrator;

int main(int argc, char** argv) {
  CLI::App app{"kvsweep: sweeps LLM-serving routing experiments and reports them"};
  app.set_version_flag("--version", KVSWEEP_VERSION);
  app.require_subcommand(1);
  std::string db_path = "kvsweep.db";
  bool verbose = false;
  app.add_option("--db", db_path, "SQLite store of every experiment")->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "debug logging on stderr");

  orch::RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run a scenario's sweep, store it, write its report");
  run_cmd->add_option("scenario", run.scenario_path, "scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  run_cmd->add_option("--reports-dir", run.reports_dir, "where the markdown report goes")
      ->capture_default_str();
  bool no_print = false;
  run_cmd->add_flag("--no-print", no_print, "write the report file but do not print it");

  orch::ReportArgs report;
  auto* report_cmd = app.add_subcommand("report", "render an experiment's markdown report");
  report_cmd->add_option("experiment", report.experiment,
                         "experiment id or name (default: the latest)");
  report_cmd->add_option("-o,--out", report.out_path,
                         "output file (default: reports/<experiment>.md; '-' prints only)");

  orch::RunsArgs runs;
  auto* runs_cmd = app.add_subcommand("runs", "list stored experiments, or one's cells");
  runs_cmd->add_option("experiment", runs.experiment, "experiment id or name: list its cells");

  orch::PlanArgs plan;
  auto* plan_cmd = app.add_subcommand("plan", "print a scenario's cells in order, run nothing");
  plan_cmd->add_option("scenario", plan.scenario_path, "scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
  run.db_path = report.db_path = runs.db_path = db_path;
  run.print_report = !no_print;

  try {
    if (*run_cmd) return orch::run_command(run);
    if (*report_cmd) return orch::report_command(report);
    if (*runs_cmd) return orch::runs_command(runs);
    if (*plan_cmd) return orch::plan_command(plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvsweep: error: %s\n", e.what());
    return orch::kExitFailed;
  }
  return orch::kExitFailed;
}
