// Storing what a cell measured: its requests on one epoch, samples and commands, in one
// transaction. `kvsweep run` stores every cell through it, `kvsweep load` its one cell.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/validity_rules.h"
#include "driver/load_options.h"
#include "driver/workload.h"
#include "figures/cell_metrics.h"
#include "orchestrator/targets/target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// What one cell measured and ran, before it is stored.
struct CellMeasurement {
  std::vector<driver::LoadResult> prepasses;  // cache: warm, load.warm_passes of them; else none
  driver::LoadResult warmup;                  // load.warmup; empty otherwise
  driver::LoadResult measured;
  std::vector<store::MetricSample> samples;  // on the measured phase's epoch
  std::vector<std::string> scrape_errors;
  CommandLogs commands;  // what the target ran for the cell, oldest first
  // What load the measured phase asked for and how the driver kept up; stored with the cell
  // (Store::set_cell_load) when set.
  std::optional<store::CellLoadRow> load;
};

// The load record of a measured phase run with `options` over `workload` (cell_id left 0).
store::CellLoadRow cell_load_row(const driver::LoadOptions& options,
                                 const driver::Workload& workload, const driver::DriverSelf& self);

// A new experiment row: started now, running, with this kvsweep's version and the host name.
store::ExperimentRow new_experiment_row(const std::string& name, const std::string& scenario_path,
                                        const std::string& scenario_text,
                                        const std::string& scenario_hash,
                                        const store::ExperimentSetup& setup);

// Sets cell.epoch_wall_s to the measured phase's epoch (else the warm-up's, else the
// pre-pass's) and stores `cell` as the caller set its status, error and times, with every
// phase's requests on that epoch (earlier phases land before 0, indexes unique within the
// cell), the samples and the commands, all in one transaction: a process killed meanwhile
// leaves all of it or none. With `claimed_by` (a run id) only while that run holds the cell's
// claim (else store::ClaimLost, nothing stored). A done cell's summary (figures/cell_summary.h,
// judged by `rules`) is computed from those rows and stored in the same transaction.
struct RecordedCell {
  std::vector<store::RequestRow> rows;  // the request rows stored
  // A done cell's figures as its summary holds them (no raw samples), so the caller need not
  // compute them again; nullopt for a cell that is not done.
  std::optional<figures::CellMetrics> metrics;
};
RecordedCell record_cell(store::Store& store, store::CellRow& cell,
                         const CellMeasurement& measurement, const ValidityRules& rules,
                         const std::string& claimed_by = "");

}  // namespace kvsweep::orchestrator
