// The kvsweep store: one SQLite file (WAL) holding every experiment, cell, request and metric
// sample. The only code in kvsweep that speaks SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::store {

// Thread contract: one Store per thread; it is movable, not copyable.
// Errors (cannot open, disk full, schema from a newer kvsweep) throw std::runtime_error whose
// message names the file and SQLite's reason.
class Store {
 public:
  // Opens or creates the file, applies migrations, enables WAL and foreign keys.
  static Store open(const std::string& path);
  // Opens an existing store for reading only, beside a sweep that may be writing it (kvsweep
  // serve): never creates, migrates or writes; a statement waits at most busy_timeout_ms on a
  // lock (under WAL a reader rarely waits at all). Throws std::runtime_error when the file is
  // missing, is not a store, or has another schema version than this kvsweep's (older: any
  // writing kvsweep command, e.g. `kvsweep runs`, migrates it).
  static Store open_read_only(const std::string& path, int busy_timeout_ms = 500);
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;

  const std::string& path() const;

  std::int64_t add_experiment(const ExperimentRow& row);  // returns the new id
  void finish_experiment(std::int64_t experiment_id, const std::string& status,
                         const std::string& finished_at);
  std::int64_t add_cell(const CellRow& row);  // returns the new id
  void update_cell(const CellRow& row);       // by row.id: status, times, error, epoch
  // All rows in one transaction; a failure stores none of them.
  void add_requests(std::int64_t cell_id, const std::vector<RequestRow>& rows);
  void add_metric_samples(std::int64_t cell_id, const std::vector<MetricSample>& samples);
  void add_commands(std::int64_t cell_id, const std::vector<CommandRow>& commands);
  // A finished cell in one transaction: its requests, samples and commands, then its row
  // (status, times, error). A process killed at any point leaves either all of it or none.
  void record_cell(const CellRow& row, const std::vector<RequestRow>& requests,
                   const std::vector<MetricSample>& samples,
                   const std::vector<CommandRow>& commands);
  // One progress snapshot of a running cell: a single-row autocommit insert, so the write lock
  // is held for microseconds while readers (kvsweep serve) poll.
  void add_progress(const ProgressSnapshot& snapshot);
  // Forgets what a cell measured (requests, samples, commands, progress) and marks it pending, so a
  // resumed sweep runs it again from scratch.
  void reset_cell(std::int64_t cell_id);
  // A resumed experiment: status "running", finished_at cleared.
  void reopen_experiment(std::int64_t experiment_id);
  // The latest experiment with this scenario hash whose status is not "done", if any.
  std::optional<ExperimentRow> latest_unfinished(const std::string& scenario_hash) const;

  std::vector<ExperimentRow> experiments() const;  // oldest first
  std::optional<ExperimentRow> experiment(std::int64_t id) const;
  std::optional<ExperimentRow> latest_experiment() const;
  std::optional<ExperimentRow> experiment_by_name(
      const std::string& name) const;                            // latest of that name
  std::vector<CellRow> cells(std::int64_t experiment_id) const;  // by ordinal
  std::vector<RequestRow> requests(std::int64_t cell_id) const;  // by index
  std::vector<MetricSample> metric_samples(std::int64_t cell_id) const;
  std::int64_t request_count(std::int64_t cell_id) const;              // warm-up included
  RequestCounts request_counts(std::int64_t cell_id) const;            // measured and warm-up apart
  std::vector<CommandRow> commands(std::int64_t cell_id) const;        // in the order run
  std::vector<ProgressSnapshot> progress(std::int64_t cell_id) const;  // oldest first

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvsweep::store
