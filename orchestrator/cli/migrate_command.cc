// `kvsweep migrate`: brings the store to this kvsweep's schema, optionally rewriting it whole.
#include <cstdio>
#include <memory>

#include "figures/run_comparison.h"
#include "figures/stored_summaries.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/cli/subcommand.h"
#include "store/store.h"
#include "store/store_maintenance.h"

namespace kvsweep::orchestrator {

Subcommand register_migrate(CLI::App& app, const GlobalOptions& global) {
  auto vacuum = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "migrate",
      "bring the store to this kvsweep's schema, summarize the cells an older kvsweep stored "
      "(kvsweep run does both on open; readers such as serve ask for this) and compare each "
      "run an older kvsweep stored with the run before it (for serve's history page)");
  cmd->add_flag("--vacuum", *vacuum,
                "then rewrite the file whole (VACUUM): returns free pages to the file system and "
                "switches it to incremental auto-vacuum; needs free disk about "
                "the store's size");
  return {
      cmd, [vacuum, &global] {
        Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
        const auto tell = [&console](const std::string& line) { console.line(line); };
        const store::MigrationResult result = store::migrate_store(global.db_path, false, tell);
        // The cells an older kvsweep stored get their summaries, before any rewrite.
        store::Store store = store::Store::open(global.db_path);
        const std::int64_t summarized = figures::summarize_stored_cells(store, tell);
        // Each ended run against the run before it, for serve's history page.
        const std::int64_t compared = figures::compare_stored_runs(store, tell);
        if (*vacuum) {
          tell(global.db_path + ": rewriting the file (VACUUM)");
          store.vacuum();
        }
        std::printf(
            "%s: schema version %d%s%s%s%s\n", global.db_path.c_str(), result.to_version,
            result.from_version == result.to_version
                ? " (already current)"
                : (" (migrated from " + std::to_string(result.from_version) + ")").c_str(),
            summarized > 0 ? (", " + std::to_string(summarized) + " cells summarized").c_str() : "",
            compared > 0
                ? (", " + std::to_string(compared) + " runs compared with the run before").c_str()
                : "",
            *vacuum ? ", vacuumed" : "");
        return kExitOk;
      }};
}

}  // namespace kvsweep::orchestrator
