// `kvsweep history`: a metric over every stored run of a scenario, against a rolling median.
#include <cstdio>
#include <memory>

#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "reports/history.h"

namespace kvsweep::orchestrator {
namespace {

struct HistoryArgs {
  std::string scenario;  // a scenario file or a stored scenario name
  std::string metric = "ttft_mean_ms";
  int window = 5;
  std::string format = "table";
};

int history_command(const std::string& db_path, const HistoryArgs& args) {
  const store::Store store = open_existing_store(db_path);
  const std::string name = scenario_name_of(store, args.scenario);
  const auto series = reports::metric_history(store, name, args.metric, args.window);
  const std::string text =
      args.format == "json"
          ? reports::history_json(series, name, args.metric, args.window).dump(2) + "\n"
          : reports::history_table(series, args.metric);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

Subcommand register_history(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand(
      "history", "a metric over every stored run of a scenario, against a rolling median");
  cmd->add_option("scenario", args->scenario,
                  "scenario file, or the name its runs are stored under")
      ->required();
  cmd->add_option("--metric", args->metric,
                  "e.g. ttft_mean_ms, ttft_p95_ms, total_token_throughput")
      ->capture_default_str();
  cmd->add_option("--window", args->window, "previous runs in the rolling baseline")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  cmd->add_option("-f,--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  return {cmd, [args, &global] { return history_command(global.db_path, *args); }};
}

}  // namespace kvsweep::orchestrator
