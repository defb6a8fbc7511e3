// Retention: an experiment's raw rows removed, its summaries kept (the experiment_prunes
// table); the space returned; which experiments are older than a cutoff.
#include "store/prunes.h"

#include <stdexcept>
#include <string>

#include "store/sqlite_handles.h"
#include "store/store_impl.h"

namespace kvsweep::store {

void Store::prune_raw_rows(const PruneMark& mark) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  {
    SqliteStatement unsummarized = db.prepare(
        "SELECT COUNT(*) FROM cells WHERE experiment_id = ? AND status = 'done' "
        "AND id NOT IN (SELECT cell_id FROM cell_summaries)");
    unsummarized.bind_int64(1, mark.experiment_id);
    unsummarized.step();
    if (const std::int64_t n = unsummarized.column_int64(0); n > 0) {
      throw std::runtime_error(path() + ": experiment " + std::to_string(mark.experiment_id) +
                               " has " + std::to_string(n) +
                               " done cells without a summary; pruning would lose their figures "
                               "(any command that writes the store summarizes them first)");
    }
  }
  for (const char* sql :
       {"DELETE FROM requests WHERE cell_id IN (SELECT id FROM cells WHERE experiment_id = ?)",
        "DELETE FROM metric_samples WHERE cell_id IN "
        "(SELECT id FROM cells WHERE experiment_id = ?)",
        "DELETE FROM cell_progress WHERE cell_id IN "
        "(SELECT id FROM cells WHERE experiment_id = ?)"}) {
    SqliteStatement s = db.prepare(sql);
    s.bind_int64(1, mark.experiment_id);
    s.step();
  }
  SqliteStatement s = db.prepare(
      "INSERT OR REPLACE INTO experiment_prunes (experiment_id, pruned_at, policy) "
      "VALUES (?,?,?)");
  s.bind_int64(1, mark.experiment_id);
  s.bind_text(2, mark.pruned_at);
  s.bind_text(3, mark.policy);
  s.step();
  transaction.commit();
}

std::optional<PruneMark> Store::prune_mark(std::int64_t experiment_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT experiment_id, pruned_at, policy FROM experiment_prunes WHERE experiment_id = ?");
  s.bind_int64(1, experiment_id);
  if (!s.step()) return std::nullopt;
  PruneMark mark;
  mark.experiment_id = s.column_int64(0);
  mark.pruned_at = s.column_text(1);
  mark.policy = s.column_text(2);
  return mark;
}

void Store::vacuum() {
  const SqliteDb& db = impl_->db;
  // Finalized at once: VACUUM refuses to run beside an open statement.
  const bool incremental = [&db] {
    SqliteStatement mode = db.prepare("PRAGMA auto_vacuum");
    mode.step();
    return mode.column_int64(0) == 2;
  }();
  // Incremental: the free pages go back at once. Otherwise one full rewrite, which also
  // switches the file to incremental so the next prune's space returns cheaply.
  if (incremental) {
    db.exec("PRAGMA incremental_vacuum");
  } else {
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    db.exec("VACUUM");
  }
  // Under WAL the smaller file exists once the log is copied back; TRUNCATE also empties the
  // log, so the space is the file system's again now, not at the next checkpoint.
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

std::vector<std::int64_t> experiments_started_before(const std::string& path, double unix_s) {
  constexpr double kUnixEpochJulianDay = 2440587.5;
  const SqliteDb db = SqliteDb::open_read_only(path);
  SqliteStatement s =
      db.prepare("SELECT id FROM experiments WHERE julianday(started_at) < ? ORDER BY id");
  s.bind_double(1, kUnixEpochJulianDay + unix_s / 86400.0);
  std::vector<std::int64_t> ids;
  while (s.step()) ids.push_back(s.column_int64(0));
  return ids;
}

}  // namespace kvsweep::store
