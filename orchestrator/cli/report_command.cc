// `kvsweep report`: an experiment rendered from the store alone (md, html, json, csv).
#include <cstdio>
#include <memory>

#include "orchestrator/cli/console.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "reports/csv_table.h"
#include "reports/dashboard_json.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"

namespace kvsweep::orchestrator {
namespace {

struct ReportArgs {
  std::string experiment;  // id or name; "" = the latest
  std::string format = "md";
  bool exact = false;    // --exact: every figure recomputed from the raw rows
  std::string out_path;  // --output: a file, nothing on stdout; "-" = stdout only; "" =
                         // md to reports/<name>.md and stdout, others to stdout
};

int report_command(const GlobalOptions& global, const ReportArgs& args) {
  const store::Store store = open_existing_store(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, args.experiment);
  const figures::ReportModel model = figures::build_report_model(
      store, experiment.id,
      args.exact ? figures::FigureSource::kRawRows : figures::FigureSource::kSummaries);
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
        to_named_file ? args.out_path
                      : std::string(kDefaultReportsDir) + "/" + file_stem(experiment.name) + ".md";
    write_file(path, text);
    Console(stderr, Console::PlainProgress::kQuiet, global.verbosity)
        .line("report written to " + path);
    if (to_named_file) return kExitOk;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
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
  cmd->add_option(
      "-o,--output,--out", args->out_path,
      "file the report goes to, and nothing on stdout; '-': stdout only (default: md "
      "to kvsweep-reports/<experiment>.md and stdout, others to stdout; old name --out)");
  cmd->add_flag("--exact", args->exact,
                "recompute every figure from the raw request rows instead of reading the cells' "
                "summaries (the same figures, computed when each cell ended); refused once the "
                "experiment is pruned");
  return {cmd, [args, &global] { return report_command(global, *args); }};
}

}  // namespace kvsweep::orchestrator
