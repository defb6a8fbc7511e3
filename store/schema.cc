// The store's schema and its migrations, versioned by PRAGMA user_version.
#include "store/schema.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "store/schema14_setups.h"
#include "store/schema7_requests.h"
#include "store/store_identity.h"

namespace kvsweep::store {
namespace {

// kMigrations[i] takes a file from version i to i + 1. Column names carry their units
// (ttft_ms, sent_s) so that users querying with the sqlite3 CLI need no other documentation.
// `request_index` rather than `index`: INDEX is an SQL keyword and would need quoting.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE experiments (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  scenario_path TEXT NOT NULL DEFAULT '',
  scenario_text TEXT NOT NULL DEFAULT '',
  scenario_hash TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT '',
  kvsweep_version TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  setup_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX experiments_name ON experiments(name);
CREATE TABLE cells (
  id INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  key TEXT NOT NULL,
  strategy TEXT NOT NULL DEFAULT '',
  concurrency INTEGER NOT NULL DEFAULT 0,
  repeat INTEGER NOT NULL DEFAULT 0,
  factors_json TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  epoch_wall_s REAL NOT NULL DEFAULT 0
);
CREATE INDEX cells_experiment ON cells(experiment_id);
CREATE UNIQUE INDEX cells_experiment_key ON cells(experiment_id, key);
CREATE TABLE requests (
  id INTEGER PRIMARY KEY,
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  request_index INTEGER NOT NULL,
  worker INTEGER NOT NULL DEFAULT 0,
  conversation INTEGER NOT NULL DEFAULT 0,
  turn INTEGER NOT NULL DEFAULT 0,
  warmup INTEGER NOT NULL DEFAULT 0,
  ok INTEGER NOT NULL DEFAULT 0,
  error_kind TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  http_status INTEGER NOT NULL DEFAULT 0,
  scheduled_s REAL NOT NULL DEFAULT -1,
  sent_s REAL NOT NULL DEFAULT 0,
  first_token_s REAL NOT NULL DEFAULT -1,
  last_token_s REAL NOT NULL DEFAULT -1,
  ttft_ms REAL NOT NULL DEFAULT 0,
  e2e_ms REAL NOT NULL DEFAULT 0,
  tpot_ms REAL NOT NULL DEFAULT 0,
  itl_ms TEXT NOT NULL DEFAULT '[]',
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT -1,
  tokens_estimated INTEGER NOT NULL DEFAULT 0,
  replica TEXT NOT NULL DEFAULT ''
);
CREATE INDEX requests_cell ON requests(cell_id);
CREATE TABLE metric_samples (
  id INTEGER PRIMARY KEY,
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  phase TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT '',
  name TEXT NOT NULL,
  labels_json TEXT NOT NULL DEFAULT '{}',
  value REAL NOT NULL,
  t_s REAL NOT NULL DEFAULT 0
);
CREATE INDEX metric_samples_cell ON metric_samples(cell_id);
)sql",
    // 2: the external commands (kubectl) run for each cell, with their output.
    R"sql(
CREATE TABLE cell_commands (
  id INTEGER PRIMARY KEY,
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  step TEXT NOT NULL,
  argv_json TEXT NOT NULL,
  exit_code INTEGER NOT NULL,
  seconds REAL NOT NULL,
  stdout TEXT NOT NULL,
  stderr TEXT NOT NULL
);
CREATE INDEX cell_commands_cell ON cell_commands(cell_id);
)sql",
    // 3: when each request ended, failures included (-1: an older row, end unknown); and an
    // unknown prompt token count is -1 rather than 0. Older kvsweep stored 0 when the server
    // sent no usage; a real prompt is never 0 tokens (the chat template alone has some).
    R"sql(
ALTER TABLE requests ADD COLUMN ended_s REAL NOT NULL DEFAULT -1;
UPDATE requests SET prompt_tokens = -1 WHERE prompt_tokens = 0;
)sql",
    // 4: progress snapshots of running cells, one row about every second of a load phase, for
    // `kvsweep serve` in another process. Small rows in their own table: the cell's
    // one-transaction record is unchanged, and a reader never waits on a cell's big write.
    R"sql(
CREATE TABLE cell_progress (
  id INTEGER PRIMARY KEY,
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  phase TEXT NOT NULL,
  wall_s REAL NOT NULL,
  elapsed_s REAL NOT NULL,
  done INTEGER NOT NULL,
  total INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  requests_per_s REAL NOT NULL,
  ttft_p50_ms REAL NOT NULL,
  ttft_p95_ms REAL NOT NULL,
  metrics_urls_json TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX cell_progress_cell ON cell_progress(cell_id);
)sql",
    // 5: which process runs a cell. One claim per cell: its owner (a random run id, the host,
    // the pid and the pid namespace, which tells apart containers that share a host name) and
    // the owner's heartbeat in unix seconds. A claim whose heartbeat lapsed, or whose owner is
    // a dead process on this host, is dead and may be taken over. A finished cell has no claim.
    R"sql(
CREATE TABLE cell_claims (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  pid_namespace TEXT NOT NULL DEFAULT '',
  claimed_at TEXT NOT NULL,
  heartbeat_s REAL NOT NULL
);
CREATE INDEX cell_claims_run ON cell_claims(run_id);
)sql",
    // 6: the arm a cell belongs to, and the experiment's baseline arm, in columns of their
    // own. A cell's "strategy" always held its arm label (named arms, "prefix_caching=off"),
    // so the column is renamed; the baseline moves out of the setup JSON, older rows keeping
    // the value they had there.
    R"sql(
ALTER TABLE cells RENAME COLUMN strategy TO arm;
ALTER TABLE experiments ADD COLUMN baseline TEXT NOT NULL DEFAULT '';
UPDATE experiments SET baseline = json_extract(setup_json, '$.baseline')
  WHERE json_valid(setup_json) AND json_type(setup_json, '$.baseline') = 'text';
)sql",
    // 7: requests rewritten compact by schema7_requests.cc (no SQL here: the rows are
    // converted in C++, see migrate_to below).
    "",
    // 8: what load each cell asked for (loop, rate, cap, users) and the driver's own figures
    // (CPU, send delay, spans), for the achieved-load figures and each cell's verdict. A row
    // is written with the cell's record; cells stored before have none (nothing to judge the
    // driver by: their verdict says so).
    R"sql(
CREATE TABLE cell_loads (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id) ON DELETE CASCADE,
  open_loop INTEGER NOT NULL,
  request_rate REAL NOT NULL,
  max_concurrency INTEGER NOT NULL,
  users INTEGER NOT NULL,
  driver_measured INTEGER NOT NULL,
  driver_threads INTEGER NOT NULL,
  driver_cores INTEGER NOT NULL,
  driver_wall_s REAL NOT NULL,
  driver_cpu_s REAL NOT NULL,
  send_delay_count INTEGER NOT NULL,
  send_delay_p50_ms REAL NOT NULL,
  send_delay_p99_ms REAL NOT NULL,
  send_delay_max_ms REAL NOT NULL,
  ready_span_s REAL NOT NULL,
  sent_span_s REAL NOT NULL,
  stopped_over_capacity INTEGER NOT NULL,
  stop_reason TEXT NOT NULL
);
)sql",
    // 8 -> 9: each done cell's figures computed once (figures/cell_summary.h), and which
    // experiments had their raw rows pruned. Summaries of cells stored before are written by
    // the first command that opens the store for writing (it needs reports/ to compute them).
    R"sql(
CREATE TABLE cell_summaries (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id) ON DELETE CASCADE,
  format INTEGER NOT NULL,
  figures TEXT NOT NULL,
  distributions BLOB NOT NULL,
  sample BLOB NOT NULL
);
CREATE TABLE experiment_prunes (
  experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
  pruned_at TEXT NOT NULL,
  policy TEXT NOT NULL
);
)sql",
    // 9 -> 10: each finished run compared with the run of its scenario before it, when it
    // ended (figures/run_comparison.h). Runs stored before have none; serve's history page
    // compares the newest of them itself.
    R"sql(
CREATE TABLE run_comparisons (
  experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
  previous_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  computed_at TEXT NOT NULL,
  options TEXT NOT NULL,
  regressions TEXT NOT NULL
);
)sql",
    // 10 -> 11: a sharded cell's shards (load.shards): what each sent and its driver's own
    // figures. Cells stored before ran as one process and have none.
    R"sql(
CREATE TABLE cell_shards (
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  shard INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  measured INTEGER NOT NULL,
  failed INTEGER NOT NULL,
  start_skew_ms REAL NOT NULL,
  clock_offset_ms REAL NOT NULL,
  request_rate REAL NOT NULL,
  max_concurrency INTEGER NOT NULL,
  users INTEGER NOT NULL,
  driver_threads INTEGER NOT NULL,
  driver_cores INTEGER NOT NULL,
  driver_wall_s REAL NOT NULL,
  driver_cpu_s REAL NOT NULL,
  send_delay_count INTEGER NOT NULL,
  send_delay_p50_ms REAL NOT NULL,
  send_delay_p99_ms REAL NOT NULL,
  send_delay_max_ms REAL NOT NULL,
  ready_span_s REAL NOT NULL,
  sent_span_s REAL NOT NULL,
  PRIMARY KEY (cell_id, shard)
);
)sql",
    // 11 -> 12: a searching experiment's arms (scenario key `search`): each arm's capacity
    // search as it ended. Experiments stored before searched nothing and have none.
    R"sql(
CREATE TABLE arm_searches (
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  arm_key TEXT NOT NULL,
  position INTEGER NOT NULL,
  arm TEXT NOT NULL,
  concurrency INTEGER NOT NULL,
  factor TEXT NOT NULL,
  guide REAL,
  capacity REAL,
  first_failing REAL,
  why TEXT NOT NULL,
  probes TEXT NOT NULL,
  capacity_cell_id INTEGER NOT NULL,
  PRIMARY KEY (experiment_id, arm_key)
);
)sql",
    // 12 -> 13: each request's dataset fingerprint (driver::turn_fingerprint), so a replay can
    // prove it regenerated the run's prompts. Rows stored before have 0: not recorded.
    R"sql(
ALTER TABLE requests ADD COLUMN prompt_hash INTEGER NOT NULL DEFAULT 0;
)sql",
    // 13 -> 14: every experiment's setup rewritten in the one shape store/experiment_setup.h
    // writes (schema14_setups.cc: decoded and encoded in C++, no SQL here).
    "",
};

}  // namespace

int schema_version(const SqliteDb& db) {
  SqliteStatement statement = db.prepare("PRAGMA user_version");
  statement.step();
  return static_cast<int>(statement.column_int64(0));
}

void check_not_newer(const SqliteDb& db) {
  const int version = schema_version(db);
  if (version > kSchemaVersion) {
    throw std::runtime_error(db.path() + ": store has schema version " + std::to_string(version) +
                             ", written by a newer kvsweep; this kvsweep reads up to version " +
                             std::to_string(kSchemaVersion) + ". Upgrade kvsweep to read it.");
  }
}

void print_migration_progress(const std::string& line) {
  std::fprintf(stderr, "kvsweep: %s\n", line.c_str());
}

void migrate(const SqliteDb& db, const MigrationProgress& progress) {
  migrate_to(db, kSchemaVersion, progress);
}

void migrate_to(const SqliteDb& db, int target, const MigrationProgress& progress) {
  if (target < 0 || target > kSchemaVersion) {
    throw std::invalid_argument("migrate_to: no schema version " + std::to_string(target));
  }
  // Read the version inside the write transaction, so two processes opening a new file at
  // once cannot both create the tables.
  Transaction transaction(db);
  check_not_newer(db);
  const int version = schema_version(db);
  // Only a current store is stamped: tests build files as older kvsweeps wrote them, unstamped.
  const bool stamp = target == kSchemaVersion && [&db] {
    // Finalized here: an open statement would keep DROP TABLE in a migration from running.
    SqliteStatement id = db.prepare("PRAGMA application_id");
    id.step();
    return id.column_int64(0) != kApplicationId;
  }();
  if (version >= target && !stamp) return;  // nothing written: the rollback is a no-op
  // A new file is created, not migrated: nothing to tell anyone.
  const bool tell = progress && version > 0 && version < target;
  if (tell) {
    progress(db.path() + ": migrating from schema version " + std::to_string(version) + " to " +
             std::to_string(target));
  }
  for (int v = version; v < target; ++v) {
    db.exec(kMigrations[static_cast<std::size_t>(v)]);
    if (v == 6) rewrite_requests_compact(db, tell ? progress : MigrationProgress{});
    if (v == 13) rewrite_setups(db);
  }
  // PRAGMA takes no bound parameters; the values are our own integer constants.
  if (version < target) db.exec("PRAGMA user_version = " + std::to_string(target));
  if (stamp) db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  transaction.commit();
  if (tell) progress(db.path() + ": migrated to schema version " + std::to_string(target));
}

}  // namespace kvsweep::store
