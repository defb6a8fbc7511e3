// `kvsweep backup DEST`: a consistent copy of the store, safe beside a running sweep and serve.
#include <cstdio>
#include <memory>
#include <string>

#include "orchestrator/cli/subcommand.h"
#include "store/backup.h"

namespace kvsweep::orchestrator {

Subcommand register_backup(CLI::App& app, const GlobalOptions& global) {
  auto dest = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "backup",
      "copy the store to DEST with SQLite's online backup: consistent while a sweep writes and "
      "serve reads; DEST is replaced only by a whole, checked copy");
  cmd->add_option("dest", *dest,
                  "the file to write: a new path, or a kvsweep store to replace (never the "
                  "store itself, its -wal or -shm, a directory or a device)")
      ->required();
  cmd->add_flag("--force", *force,
                "replace DEST even when it is an existing file that is not a kvsweep store");
  return {cmd, [dest, force, &global] {
            const store::BackupResult result = store::backup_store(global.db_path, *dest, *force);
            std::printf("%s: backed up to %s (schema version %d, %lld experiment%s, %.1f MB)\n",
                        global.db_path.c_str(), dest->c_str(), result.schema_version,
                        static_cast<long long>(result.experiments),
                        result.experiments == 1 ? "" : "s",
                        static_cast<double>(result.bytes) / 1e6);
            return kExitOk;
          }};
}

}  // namespace kvsweep::orchestrator
