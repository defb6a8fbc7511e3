// The reporting subcommands: report (md, html, json, csv), compare, history, export.
#include "orchestrator/cli/report_commands.h"

#include <cstdio>
#include <memory>

#include "orchestrator/cli/console.h"
#include "orchestrator/cli/scenario_lookup.h"
#include "orchestrator/cli/store_lookup.h"
#include "reports/cell_exports.h"
#include "reports/compare.h"
#include "reports/csv_table.h"
#include "reports/dashboard_json.h"
#include "reports/history.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"

namespace kvsweep::orchestrator {
namespace {

struct ReportArgs {
  std::string experiment;    // id or name; "" = the latest
  std::string format = "md";
  std::string out_path;      // --output: a file, nothing on stdout; "-" = stdout only; "" =
                             // md to reports/<name>.md and stdout, others to stdout
};

struct CompareArgs {
  std::string a;
  std::string b;
  std::string format = "table";
  int resamples = 1000;
  std::uint64_t seed = 1;
  std::size_t min_samples = 20;
  double min_change_pct = 5;
};

struct HistoryArgs {
  std::string scenario;  // a scenario file or a stored scenario name
  std::string metric = "ttft_mean_ms";
  int window = 5;
  std::string format = "table";
};

int report_command(const GlobalOptions& global, const ReportArgs& args) {
  const store::Store store = open_existing_store(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  const reports::ReportModel model = reports::build_report_model(store, experiment.id);
  std::string text;
  if (args.format == "md") {
    text = reports::render_markdown(model);
  } else if (args.format == "html") {
    text = reports::render_html(model);
  } else if (args.format == "json") {
    text = reports::dashboard_baseline_json(model).dump(2) + "\n";
  } else {
    text = reports::render_csv(model);
  }
  // A file named by --output gets the report alone. Without --output, markdown keeps its habit
  // of landing in reports/<name>.md and on stdout; the other formats go to stdout alone.
  const bool to_named_file = !args.out_path.empty() && args.out_path != "-";
  const bool to_default_file = args.out_path.empty() && args.format == "md";
  if (to_named_file || to_default_file) {
    const std::string path =
        to_named_file ? args.out_path : "reports/" + file_stem(experiment.name) + ".md";
    write_file(path, text);
    Console(stderr, Console::PlainProgress::kQuiet, global.verbosity)
        .line("report written to " + path);
    if (to_named_file) return kExitOk;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

int compare_command(const std::string& db_path, const CompareArgs& args) {
  const store::Store store = open_existing_store(db_path);
  reports::CompareOptions options;
  options.bootstrap.resamples = args.resamples;
  options.bootstrap.seed = args.seed;
  options.min_samples = args.min_samples;
  options.min_change = args.min_change_pct / 100.0;
  const bool cells = args.a.find(':') != std::string::npos || args.b.find(':') != std::string::npos;
  const reports::CompareResult result =
      cells ? reports::compare_cells(store, resolve_cell(store, args.a), resolve_cell(store, args.b),
                                     options)
            : reports::compare_experiments(store, resolve_experiment(store, args.a).id,
                                           resolve_experiment(store, args.b).id, options);
  const std::string text = args.format == "json"
                               ? reports::compare_json(result, options).dump(2) + "\n"
                               : reports::compare_table(result, options);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!result.nothing_compared.empty()) {
    // The table says it on stdout already; a JSON reader's log should say it too.
    if (args.format == "json") {
      std::fflush(stdout);
      std::fprintf(stderr, "kvsweep: nothing compared: %s\n", result.nothing_compared.c_str());
    }
    return kExitNothingCompared;
  }
  return result.any_regression() ? kExitFailed : kExitOk;
}

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

int export_command(const GlobalOptions& global, const std::string& which, const std::string& dir) {
  const store::Store store = open_existing_store(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, which);
  const std::string out_dir =
      dir.empty() ? "reports/" + file_stem(experiment.name) + "-export" : dir;
  const auto files = reports::cell_exports(store, experiment.id);
  for (const auto& f : files) write_file(out_dir + "/" + f.name, f.text);
  Console(stderr, Console::PlainProgress::kQuiet, global.verbosity)
      .line(std::to_string(files.size()) + " files written to " + out_dir);
  return kExitOk;
}

}  // namespace

Subcommand register_report(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "render an experiment's report (md, html, json, csv)");
  cmd->add_option("experiment", args->experiment, "experiment id or name (default: the latest)");
  cmd->add_option("-f,--format", args->format,
                  "md (default), html (one self-contained file), json (dashboard baseline), "
                  "csv (results table)")
      ->check(CLI::IsMember({"md", "html", "json", "csv"}));
  cmd->add_option("-o,--output,--out", args->out_path,
                  "file the report goes to, and nothing on stdout; '-': stdout only (default: md "
                  "to reports/<experiment>.md and stdout, others to stdout; old name --out)");
  return {cmd, [args, &global] { return report_command(global, *args); }};
}

Subcommand register_compare(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare",
                                 "compare run B with run A per level and metric; exit 1 on a "
                                 "regression, 3 when nothing was compared");
  cmd->footer(
      "Exit status: 0 compared, no regression; 1 a regression (or an error); 3 nothing compared "
      "(no (strategy, concurrency) level in common, a side without finished cells, or too few "
      "samples for every metric; the output says which).");
  cmd->add_option("a", args->a, "experiment id or name, or EXP:CELL")->required();
  cmd->add_option("b", args->b, "experiment id or name, or EXP:CELL")->required();
  cmd->add_option("-f,--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--resamples", args->resamples, "bootstrap resamples")->capture_default_str();
  cmd->add_option("--seed", args->seed, "bootstrap seed")->capture_default_str();
  cmd->add_option("--min-samples", args->min_samples,
                  "fewer requests than this on a side: insufficient data")
      ->capture_default_str();
  cmd->add_option("--min-change", args->min_change_pct,
                  "changes under this many percent are 'no change'")
      ->capture_default_str();
  return {cmd, [args, &global] { return compare_command(global.db_path, *args); }};
}

Subcommand register_history(CLI::App& app, const GlobalOptions& global) {
  auto args = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand(
      "history", "a metric over every stored run of a scenario, against a rolling median");
  cmd->add_option("scenario", args->scenario,
                  "scenario file, or the name its runs are stored under")
      ->required();
  cmd->add_option("--metric", args->metric, "e.g. ttft_mean_ms, ttft_p95_ms, total_token_throughput")
      ->capture_default_str();
  cmd->add_option("--window", args->window, "previous runs in the rolling baseline")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("-f,--format", args->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  return {cmd, [args, &global] { return history_command(global.db_path, *args); }};
}

Subcommand register_export(CLI::App& app, const GlobalOptions& global) {
  auto which = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "export", "per cell: vLLM result JSON and llm-d Benchmark Report v0.2 JSON");
  cmd->add_option("experiment", *which, "experiment id or name (default: the latest)");
  cmd->add_option("-o,--output,-d,--dir", *dir,
                  "directory the files go to (default: reports/<experiment>-export; old names "
                  "-d, --dir)");
  return {cmd, [which, dir, &global] { return export_command(global, *which, *dir); }};
}

}  // namespace kvsweep::orchestrator
