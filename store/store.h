// The kvsweep store: one SQLite file (WAL) holding every experiment, cell, request and metric
// sample. The only code in kvsweep that speaks SQL.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/migration_progress.h"
#include "store/rows.h"
#include "store/store_readers.h"

namespace kvsweep::store {

// Thrown by a write made for a run that no longer holds the cell's claim (another run took
// the cell over after this one's heartbeat lapsed): nothing of that write is stored.
class ClaimLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thread contract: one Store per thread; it is movable, not copyable. It reads through the
// narrow interfaces of store_readers.h (where each read is described), which code that only
// reads takes instead of the Store; writes are here alone.
// Errors (cannot open, disk full, schema from a newer kvsweep) throw std::runtime_error whose
// message names the file and SQLite's reason (a store::SqliteError, sqlite_handles.h, when
// SQLite itself failed).
class Store final : public StoreReader {
 public:
  enum class Access {
    kReadWrite,  // creates the file when absent, migrates it, switches it to WAL
    kReadOnly,   // for commands that only read: never writes (see SqliteDb::open_read_only)
  };

  // Checks first, reading only, that the file is a kvsweep store or empty (store_identity.h):
  // another program's database is refused before anything is written to it. Read-write then
  // enables WAL and foreign keys and applies migrations. Read-only opens an existing file; a
  // store of an older schema is migrated first, which needs write access once; a migration that
  // rewrites rows tells `progress` how far it got.
  static Store open(const std::string& path, Access access = Access::kReadWrite,
                    const MigrationProgress& progress = print_migration_progress);
  // Opens an existing store for reading only, beside a sweep that may be writing it (kvsweep
  // serve): never creates, migrates or writes; a statement waits at most busy_timeout_ms on a
  // lock (under WAL a reader rarely waits at all). Throws std::runtime_error when the file is
  // missing, is not a kvsweep store, or has another schema version than this kvsweep's (older:
  // `kvsweep migrate` migrates it, as does any command that writes).
  static Store open_read_only(const std::string& path, int busy_timeout_ms = 500);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;  // owns the SQLite handle
  Store& operator=(const Store&) = delete;

  std::int64_t add_experiment(const ExperimentRow& row);  // returns the new id
  void finish_experiment(std::int64_t experiment_id, const std::string& status,
                         const std::string& finished_at);
  std::int64_t add_cell(const CellRow& row);  // returns the new id
  // By row.id: status, times, error, epoch. With `claimed_by` (a run id), only while that run
  // holds the cell's claim; else throws ClaimLost and changes nothing.
  void update_cell(const CellRow& row, const std::string& claimed_by = "");
  // All rows in one transaction; a failure stores none of them.
  void add_requests(std::int64_t cell_id, const std::vector<RequestRow>& rows);
  void add_metric_samples(std::int64_t cell_id, const std::vector<MetricSample>& samples);
  void add_commands(std::int64_t cell_id, const std::vector<CommandRow>& commands);
  // A finished cell in one transaction: its requests, samples and commands, then its row
  // (status, times, error). A process killed at any point leaves either all of it or none.
  // With `claimed_by` (a run id): only while that run holds the cell's claim, which the same
  // transaction then drops (a finished cell needs none); else throws ClaimLost, storing
  // nothing, so a run that lost its cell never appends to the new owner's.
  void record_cell(const CellRow& row, const std::vector<RequestRow>& requests,
                   const std::vector<MetricSample>& samples,
                   const std::vector<CommandRow>& commands, const std::string& claimed_by = "");
  // What load a cell asked for and how the driver kept up (store/cell_loads.cc), replacing
  // any row the cell had. With `claimed_by`: only while that run holds the cell's claim, else
  // throws ClaimLost. Written beside record_cell, in one transaction with it when the caller
  // wraps both in in_transaction.
  void set_cell_load(const CellLoadRow& row, const std::string& claimed_by = "");
  // A searching experiment's arms (store/arm_searches.cc): one row per arm, replaced as its
  // search moves on.
  void set_arm_search(const ArmSearchRow& row);
  // Cell summaries (store/cell_summaries.cc), replacing any the cell had.
  void set_cell_summary(const CellSummaryRow& row);
  // Retention (store/cell_summaries.cc): removes the experiment's request rows, metric samples
  // and progress snapshots, keeping its cells, loads and summaries, and marks it pruned; one
  // transaction. Throws when a cell of it is done without a summary (nothing would remain).
  void prune_raw_rows(const PruneMark& mark);
  // Run comparisons (store/run_comparisons.cc): the experiment's one replaced.
  void set_run_comparison(const RunComparisonRow& row);
  // Returns free pages to the file system: at once in incremental auto-vacuum, else by one
  // VACUUM (needs free disk about the store's size) that also switches the file to incremental;
  // then empties the write-ahead log into it.
  void vacuum();
  // One progress snapshot of a running cell: a single-row autocommit insert, so the write lock
  // is held for microseconds while readers (kvsweep serve) poll. With `claimed_by` (a run id)
  // only while that run holds the cell's claim, checked in the same statement: a run whose
  // cell was taken over shows nothing in the new owner's progress. Returns whether it stored.
  bool add_progress(const ProgressSnapshot& snapshot, const std::string& claimed_by = "");
  // Forgets what a cell measured (requests, samples, commands, progress) and marks it pending, so a
  // resumed sweep runs it again from scratch.
  void reset_cell(std::int64_t cell_id);
  // A resumed experiment: status "running", finished_at cleared.
  void reopen_experiment(std::int64_t experiment_id);

  // Runs `body` in one write transaction (BEGIN IMMEDIATE: a second process waits for the
  // first to commit), committed when it returns, rolled back when it throws. Store calls in
  // `body` join it. Lets a runner read the claims, take the cells and reset them with no other
  // runner in between.
  void in_transaction(const std::function<void()>& body);

  // Cell claims (store/cell_claims.cc): which process runs each cell (read by claims()).
  // Claims the cells for `owner` with a first heartbeat at now_s, replacing any claim they
  // had: the caller has found those claims dead.
  void claim_cells(const std::vector<std::int64_t>& cell_ids, const ClaimOwner& owner,
                   double now_s);
  // Sets the heartbeat of every claim `run_id` holds; returns how many it holds.
  int beat(const std::string& run_id, double now_s);
  void release_claims(const std::string& run_id);  // every claim `run_id` holds

  // RunReader
  const std::string& path() const override;
  std::vector<ExperimentRow> experiments() const override;
  std::optional<ExperimentRow> experiment(std::int64_t id) const override;
  std::optional<ExperimentRow> latest_experiment() const override;
  std::optional<ExperimentRow> experiment_by_name(const std::string& name) const override;
  std::optional<ExperimentRow> latest_unfinished(const std::string& scenario_hash) const override;
  std::vector<CellRow> cells(std::int64_t experiment_id) const override;
  std::vector<CellClaim> claims(std::int64_t experiment_id) const override;
  std::optional<PruneMark> prune_mark(std::int64_t experiment_id) const override;
  std::int64_t bytes_to_end_a_run(std::int64_t experiment_bytes,
                                  std::int64_t claims) const override;

  // FigureReader
  std::optional<CellLoadRow> cell_load(std::int64_t cell_id) const override;
  std::optional<CellSummaryRow> cell_summary(std::int64_t cell_id) const override;
  std::vector<CellSummaryRow> cell_summaries(std::int64_t experiment_id,
                                             bool with_sample = true) const override;
  std::vector<CellRow> cells_to_summarize(int format) const override;
  std::vector<ArmSearchRow> arm_searches(std::int64_t experiment_id) const override;
  std::vector<RunComparisonRow> run_comparisons(const std::string& scenario) const override;

  // RowReader
  std::vector<RequestRow> requests(std::int64_t cell_id) const override;
  std::vector<RequestRow> request_latencies(std::int64_t cell_id) const override;
  std::int64_t request_count(std::int64_t cell_id) const override;
  RequestCounts request_counts(std::int64_t cell_id) const override;
  std::vector<MetricSample> metric_samples(std::int64_t cell_id) const override;
  std::vector<CommandRow> commands(std::int64_t cell_id) const override;
  std::vector<ProgressSnapshot> progress(std::int64_t cell_id) const override;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsweep::store
