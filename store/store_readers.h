// What the store answers, without SQLite: narrow read interfaces that store::Store implements
// (store.h), so that code which only reads takes the concern it reads (issue 41). A view that
// reads experiments and cells takes a RunReader, one that reads stored figures a FigureReader,
// one that reads raw rows a RowReader, one that reads more than one a StoreReader. A test can
// hand any of them a fake in memory. Writes stay on Store.
//
// Nobody owns a store through these (each destructor is protected and non-virtual): they are
// borrowed, as `const X&`, for the length of a call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::store {

// Experiments, cells and the bookkeeping of runs: what names a run, what it holds, who runs it.
class RunReader {
 public:
  virtual const std::string& path() const = 0;                 // the store's file, as opened
  virtual std::vector<ExperimentRow> experiments() const = 0;  // oldest first
  virtual std::optional<ExperimentRow> experiment(std::int64_t id) const = 0;
  virtual std::optional<ExperimentRow> latest_experiment() const = 0;
  virtual std::optional<ExperimentRow> experiment_by_name(
      const std::string& name) const = 0;  // latest of that name
  // The latest experiment with this scenario hash whose status is not "done", if any.
  virtual std::optional<ExperimentRow> latest_unfinished(
      const std::string& scenario_hash) const = 0;
  virtual std::vector<CellRow> cells(std::int64_t experiment_id) const = 0;  // by ordinal
  // Cell claims (store/cell_claims.cc): which process runs each cell, by cell ordinal.
  virtual std::vector<CellClaim> claims(std::int64_t experiment_id) const = 0;
  // Retention (store/prunes.cc): the experiment's mark when its raw rows were pruned.
  virtual std::optional<PruneMark> prune_mark(std::int64_t experiment_id) const = 0;
  // At most how many bytes the transaction that ends a run (release_claims of `claims` cells
  // and finish_experiment, the experiment's row being `experiment_bytes` long with its new
  // status) adds to the store's files: its WAL frames and the -shm index's growth. A run keeps
  // that much free beside the store (space_reserve.h) so it can store what stopped it on a full
  // disk. Not counted: the checkpoint that later copies the WAL into the database file; when it
  // finds no room it leaves the WAL as it is, every committed transaction readable there.
  virtual std::int64_t bytes_to_end_a_run(std::int64_t experiment_bytes,
                                          std::int64_t claims) const = 0;

 protected:
  RunReader() = default;
  RunReader(const RunReader&) = default;
  RunReader& operator=(const RunReader&) = default;
  ~RunReader() = default;
};

// Figures stored beside the rows: each cell's load record and summary, a search's arms, run
// comparisons. What a report reads instead of a cell's requests.
class FigureReader {
 public:
  // What load a cell asked for and how the driver kept up (store/cell_loads.cc); nullopt: none.
  virtual std::optional<CellLoadRow> cell_load(std::int64_t cell_id) const = 0;
  // Cell summaries (store/cell_summaries.cc).
  virtual std::optional<CellSummaryRow> cell_summary(std::int64_t cell_id) const = 0;
  // Every summary of the experiment's cells, in one query, by cell ordinal. Without
  // `with_sample` the request sample (most of a summary's bytes) is left unread and empty.
  // (The default binds to the type called through: overrides repeat it.)
  virtual std::vector<CellSummaryRow> cell_summaries(std::int64_t experiment_id,
                                                     bool with_sample = true) const = 0;
  // Done cells with no summary, or one of a format below `format`, whose experiment still has
  // its raw rows: what a writer summarizes on open. Oldest first.
  virtual std::vector<CellRow> cells_to_summarize(int format) const = 0;
  // A searching experiment's arms (store/arm_searches.cc), in plan order.
  virtual std::vector<ArmSearchRow> arm_searches(std::int64_t experiment_id) const = 0;
  // Run comparisons (store/run_comparisons.cc): every stored one of the experiments named
  // `scenario`, by experiment id.
  virtual std::vector<RunComparisonRow> run_comparisons(const std::string& scenario) const = 0;

 protected:
  FigureReader() = default;
  FigureReader(const FigureReader&) = default;
  FigureReader& operator=(const FigureReader&) = default;
  ~FigureReader() = default;
};

// A cell's raw rows: its requests, metric samples, commands and progress snapshots (those a
// pruned experiment no longer has, bar the commands).
class RowReader {
 public:
  virtual std::vector<RequestRow> requests(std::int64_t cell_id) const = 0;  // by index
  // The same rows with only what a latency comparison reads: index, warmup, ok, the times,
  // ttft_ms, e2e_ms and output_tokens (ITLs, texts and the rest left at their defaults), at a
  // fraction of the cost of decoding whole rows.
  virtual std::vector<RequestRow> request_latencies(std::int64_t cell_id) const = 0;
  virtual std::int64_t request_count(std::int64_t cell_id) const = 0;  // warm-up included
  virtual RequestCounts request_counts(
      std::int64_t cell_id) const = 0;  // measured and warm-up apart
  virtual std::vector<MetricSample> metric_samples(std::int64_t cell_id) const = 0;
  virtual std::vector<CommandRow> commands(std::int64_t cell_id) const = 0;  // in the order run
  virtual std::vector<ProgressSnapshot> progress(std::int64_t cell_id) const = 0;  // oldest first

 protected:
  RowReader() = default;
  RowReader(const RowReader&) = default;
  RowReader& operator=(const RowReader&) = default;
  ~RowReader() = default;
};

// Everything the store answers: what a view that reads more than one concern takes.
class StoreReader : public RunReader, public FigureReader, public RowReader {
 protected:
  StoreReader() = default;
  StoreReader(const StoreReader&) = default;
  StoreReader& operator=(const StoreReader&) = default;
  ~StoreReader() = default;
};

}  // namespace kvsweep::store
