// `kvsweep runs`: the stored experiments, or one's cells, with the commands run for each.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "figures/cell_metrics.h"
#include "figures/cell_summary.h"
#include "figures/validity_json.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/targets/child_process.h"
#include "store/store.h"

namespace kvsweep::orchestrator {
namespace {

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
void print_cell_commands(const store::RowReader& store, const std::vector<store::CellRow>& cells,
                         int only_cell) {
  for (const auto& c : cells) {
    if (only_cell != 0 && c.ordinal + 1 != only_cell) continue;
    const auto commands = store.commands(c.id);
    std::printf("\ncell %d (%s, concurrency %d, repeat %d): %zu command%s\n", c.ordinal + 1,
                c.arm.c_str(), c.concurrency, c.repeat + 1, commands.size(),
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
    throw UsageError("--cell " + std::to_string(args.cell) + ": experiment " +
                     std::to_string(experiment.id) + " has " + std::to_string(cells.size()) +
                     " cells");
  }
  std::printf("experiment %lld %s (%s), started %s\n", static_cast<long long>(experiment.id),
              experiment.name.c_str(), experiment.status.c_str(), experiment.started_at.c_str());
  std::printf("%-5s %-14s %-11s %-6s %-12s %-9s %-8s %-24s %s\n", "cell", "strategy", "concurrency",
              "repeat", "status", "requests", "warm-up", "verdict", "error");
  const ValidityRules rules = figures::validity_rules_of(experiment);
  std::vector<std::string> unreadable;
  for (const auto& c : cells) {
    const store::RequestCounts counts = store.request_counts(c.id);
    // A finished cell's verdict (figures/validity.h); "-" for cells that measured nothing.
    std::string verdict = "-";
    const auto summary = c.status == "done" ? store.cell_summary(c.id) : std::nullopt;
    if (c.status == "done" && (counts.measured > 0 || summary)) {
      const auto load = store.cell_load(c.id);
      const auto judged = [&] {
        return summary ? figures::stored_summary(experiment, c, *summary,
                                                 figures::SummaryDetail::kFigures)
                             .metrics.validity
                       : figures::compute_cell_metrics(store.requests(c.id),
                                                       store.metric_samples(c.id), {}, load, rules)
                             .validity;
      };
      try {
        verdict = load ? figures::verdict_name(judged().verdict) : "not judged";
      } catch (const figures::CorruptSummary& e) {
        // One unreadable summary costs that cell's verdict, not the listing of the others.
        verdict = "summary unreadable";
        unreadable.push_back(e.what());
      }
    }
    std::printf("%-5d %-14s %-11d %-6d %-12s %-9lld %-8lld %-24s %s\n", c.ordinal + 1,
                c.arm.c_str(), c.concurrency, c.repeat + 1, c.status.c_str(),
                static_cast<long long>(counts.measured), static_cast<long long>(counts.warmup),
                verdict.c_str(), c.error.c_str());
  }
  for (const std::string& why : unreadable) {
    std::fprintf(stderr, "kvsweep: warning: %s\n", why.c_str());
  }
  if (args.commands) print_cell_commands(store, cells, args.cell);
  return kExitOk;
}

}  // namespace

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
              throw UsageError("--commands: give the experiment whose cells to show");
            }
            args->db_path = global.db_path;
            return runs_command(*args);
          }};
}

}  // namespace kvsweep::orchestrator
