// `kvsweep compare`: run B against run A per level and metric, with a verdict and an exit
// status a nightly job can gate on.
#include <cstdio>
#include <memory>

#include "driver/load_options.h"
#include "figures/compare.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/scenario/scenario_reads.h"

namespace kvsweep::orchestrator {
namespace {

struct CompareArgs {
  std::string a;
  std::string b;
  std::string format = "table";
  int resamples = 1000;
  std::uint64_t seed = 1;
  std::size_t min_samples = 20;
  std::size_t min_tail = 10;
  double min_change_pct = 5;
  double min_change_ms = 1;
  bool strict = false;  // exit 3 when a compared cell is not valid
};

int compare_command(const std::string& db_path, const CompareArgs& args) {
  const store::Store store = open_existing_store(db_path);
  figures::CompareOptions options;
  options.bootstrap.resamples = args.resamples;
  options.bootstrap.seed = args.seed;
  options.min_samples = args.min_samples;
  options.min_tail_samples = args.min_tail;
  options.min_change = args.min_change_pct / 100.0;
  options.min_change_ms = args.min_change_ms;
  const bool cells = args.a.find(':') != std::string::npos || args.b.find(':') != std::string::npos;
  const figures::CompareResult result =
      cells ? figures::compare_cells(store, resolve_cell(store, args.a),
                                     resolve_cell(store, args.b), options)
            : figures::compare_experiments(store, resolve_experiment(store, args.a).id,
                                           resolve_experiment(store, args.b).id, options);
  const std::string text = args.format == "json"
                               ? figures::compare_json(result, options).dump(2) + "\n"
                               : figures::compare_table(result, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!result.nothing_compared.empty()) {
    // The table says it on stdout already; a JSON reader's log should say it too.
    if (args.format == "json") {
      std::fflush(stdout);
      std::fprintf(stderr, "kvsweep: nothing compared: %s\n", result.nothing_compared.c_str());
    }
    return kExitNothingCompared;
  }
  if (result.any_regression()) return kExitFailed;
  // --strict: a nightly gate must not pass on cells that did not measure what they were asked.
  if (args.strict && result.any_invalid()) {
    std::fflush(stdout);
    std::fprintf(stderr, "kvsweep: --strict: a compared cell is not valid (see the notes)\n");
    return kExitNothingCompared;
  }
  return kExitOk;
}

}  // namespace

Subcommand register_compare(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare",
                                 "compare run B with run A per level and metric; exit 1 on a "
                                 "regression, 3 when nothing was compared");
  cmd->footer(
      "Exit status: 0 compared, no regression; 1 a regression (or an error); 3 nothing compared "
      "(no (strategy, concurrency) level in common, a side without finished cells, or too few "
      "samples for every metric; the output says which), or with --strict a compared cell that "
      "is not valid (no regression found).");
  cmd->add_option("a", args->a, "experiment id or name, or EXP:CELL")->required();
  cmd->add_option("b", args->b, "experiment id or name, or EXP:CELL")->required();
  cmd->add_flag("--strict", args->strict,
                "exit 3 when any compared cell is not valid (client-bound, short of its "
                "concurrency, over capacity: docs/metrics.md)");
  cmd->add_option("-f,--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--resamples", args->resamples, "bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::Range(100, kMaxResamples));
  cmd->add_option("--seed", args->seed, "bootstrap seed")->capture_default_str();
  cmd->add_option("--min-samples", args->min_samples,
                  "fewer requests than this on a side: insufficient data")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, static_cast<std::size_t>(driver::kMaxRequests)));
  cmd->add_option("--min-tail", args->min_tail,
                  "a percentile needs this many requests beyond it on a side (200 for a p95), "
                  "else insufficient data")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  cmd->add_option("--min-change", args->min_change_pct,
                  "changes under this many percent are 'no change' (every metric)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_option("--min-change-ms", args->min_change_ms,
                  "latency changes under this many milliseconds are 'no change'")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600000.0));
  return {cmd, [args, &global] { return compare_command(global.db_path, *args); }};
}

}  // namespace kvsweep::orchestrator
