// `kvsweep export`: per cell, a vLLM result JSON and an llm-d Benchmark Report v0.2 JSON.
#include <memory>

#include "orchestrator/cli/console.h"
#include "orchestrator/cli/store_lookup.h"
#include "orchestrator/cli/subcommand.h"
#include "reports/cell_exports.h"

namespace kvsweep::orchestrator {
namespace {

int export_command(const GlobalOptions& global, const std::string& which, const std::string& dir) {
  const store::Store store = open_existing_store(global.db_path);
  const store::ExperimentRow experiment = resolve_experiment(store, which);
  const std::string out_dir =
      dir.empty() ? std::string(kDefaultReportsDir) + "/" + file_stem(experiment.name) + "-export"
                  : dir;
  const auto files = reports::cell_exports(store, experiment.id);
  for (const auto& f : files) write_file(out_dir + "/" + f.name, f.text);
  Console(stderr, Console::PlainProgress::kQuiet, global.verbosity)
      .line(std::to_string(files.size()) + " files written to " + out_dir);
  return kExitOk;
}

}  // namespace

Subcommand register_export(CLI::App& app, const GlobalOptions& global) {
  auto which = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("export",
                                 "per cell: vLLM result JSON and llm-d Benchmark Report v0.2 JSON");
  cmd->add_option("experiment", *which, "experiment id or name (default: the latest)");
  cmd->add_option(
      "-o,--output,-d,--dir", *dir,
      "directory the files go to (default: kvsweep-reports/<experiment>-export; old names "
      "-d, --dir)");
  return {cmd, [which, dir, &global] { return export_command(global, *which, *dir); }};
}

}  // namespace kvsweep::orchestrator
