// `kvsweep migrate`: brings the store to this kvsweep's schema, optionally rewriting it whole.
#include <cstdio>
#include <memory>

#include "orchestrator/cli/console.h"
#include "orchestrator/cli/subcommand.h"
#include "store/store_maintenance.h"

namespace kvsweep::orchestrator {

Subcommand register_migrate(CLI::App& app, const GlobalOptions& global) {
  auto vacuum = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "migrate",
      "bring the store to this kvsweep's schema (every writing command does so on open; "
      "readers such as serve ask for this)");
  cmd->add_flag("--vacuum", *vacuum,
                "then rewrite the file whole (VACUUM): returns free pages to the file system and "
                "switches it to incremental auto-vacuum; needs free disk about "
                "the store's size");
  return {
      cmd, [vacuum, &global] {
        Console console(stderr, Console::PlainProgress::kPeriodic, global.verbosity);
        const store::MigrationResult result = store::migrate_store(
            global.db_path, *vacuum, [&console](const std::string& line) { console.line(line); });
        std::printf("%s: schema version %d%s%s\n", global.db_path.c_str(), result.to_version,
                    result.from_version == result.to_version
                        ? " (already current)"
                        : (" (migrated from " + std::to_string(result.from_version) + ")").c_str(),
                    result.vacuumed ? ", vacuumed" : "");
        return kExitOk;
      }};
}

}  // namespace kvsweep::orchestrator
