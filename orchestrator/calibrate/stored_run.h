// A stored run as a calibration reads it: its scenario, and each done cell's measured figures
// beside the cell as the predicted fleet would run it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "figures/cell_metrics.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "predict/calibrate/calibration_figures.h"
#include "store/rows.h"
#include "store/store_readers.h"

namespace kvsweep::orchestrator {

struct CalibrationCell {
  // expand_plan(spec, "predict")'s cell of the same levels and repeat ("sim"'s, with
  // target.sim's cuts, for a rehearsal)
  CellPlan plan;
  std::int64_t cell_id = 0;  // the run's stored cell
  std::string label;         // "PrefixHash@8", "#2" appended for a repeat
  predict::CalibrationFigures measured;
  bool held_out = false;  // --holdout: predicted and scored, never fitted
};

struct StoredRun {
  store::ExperimentRow experiment;
  ScenarioSpec spec;
  // The run's target as its setup recorded it: the kind it ran on ("sim", "predict",
  // "kubeai", ...), its replicas (0 when the scenario did not say), and whether it was a
  // rehearsal (the embedded fleet standing in for a cluster target, with target.sim's cuts).
  std::string target_kind;
  int replicas = 0;
  bool rehearsal = false;
  std::vector<CalibrationCell> cells;  // in plan order
  std::vector<std::string> skipped;    // "random@8: failed: ..." each cell left out and why
  // Read from the first done cell's samples when every server there showed the same pool;
  // otherwise nullopt and kv_pool_note says why.
  std::optional<predict::ServerKvPool> kv_pool;
  std::string kv_pool_note;
};

// The figures of every summarized cell of an experiment, by stored cell id (summaries decoded
// without their distributions): what the run measured, or what a replay predicted.
std::map<std::int64_t, figures::CellMetrics> cell_figures(const store::FigureReader& store,
                                                          std::int64_t experiment_id);

// A cell's figures as a calibration compares them, from its summary's metrics.
predict::CalibrationFigures figures_of(const figures::CellMetrics& metrics);

// One --holdout FACTOR=LEVEL: the cells at that level are held out.
using Holdout = std::pair<std::string, std::string>;

// Reads experiment `experiment_id`: its scenario text parsed again, and every done cell with
// its summary's figures. Left out, each with its reason in `skipped`: cells not done, cells
// with no successful request, and client-bound cells (their figures are the client's limits,
// not the servers'). Throws std::invalid_argument with the reason: no such experiment, a
// scenario that no longer parses (its profile not found: set KVSWEEP_PROFILE_PATH as for the
// run), a capacity search (its probes are not a grid: not yet), a
// --holdout naming no cell, or no cell left to fit.
StoredRun load_stored_run(const store::StoreReader& store, std::int64_t experiment_id,
                          const std::vector<Holdout>& holdout = {});

}  // namespace kvsweep::orchestrator
