// Fitting the step-time model's coefficients (sim/engine/profile.h) to a run: its cells replayed
// in virtual time with candidate profiles (a CellReplayer; orchestrator/calibrate/ replays a
// stored run's cells through the predicted sweep), minimising the robust log error of the
// figures it measured (calibration_figures.h). Nothing here knows a store, a scenario or a
// runner.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "predict/calibrate/calibration_figures.h"
#include "sim/engine/profile.h"

namespace kvsweep::predict {

// One cell of the run as the fit reads it.
struct FitCell {
  std::string label;  // "PrefixHash@8", in messages and the result's cells
  CalibrationFigures measured;
  bool held_out = false;  // predicted and scored, never fitted
};

// The run to fit: its cells and what it showed of the fleet.
struct FitRun {
  std::string name;  // "experiment 12", in a refusal
  int replicas = 0;  // the fleet's replicas, 0 when the run did not say
  std::vector<FitCell> cells;
  // The servers' KV pool when the run showed one (it replaces the start profile's), else
  // nullopt and kv_pool_note says why.
  std::optional<ServerKvPool> kv_pool;
  std::string kv_pool_note;
};

// Predicts cells of the run with a candidate profile. Thread contract: the fit's thread only.
class CellReplayer {
 public:
  // The figures of run.cells[i] for each i of `cells`, in that order; nullopt for a cell the
  // prediction did not complete. Throws std::runtime_error when it cannot replay (stopped).
  virtual std::vector<std::optional<CalibrationFigures>> figures(
      const sim::TimingProfile& profile, const std::vector<std::size_t>& cells) = 0;
  virtual int replays() const = 0;  // figures() calls so far

 protected:
  ~CellReplayer() = default;
};

// The coefficients a calibration may fit, by their profile key.
const std::vector<std::string>& coefficient_names();  // base_us, per_prefill_token_us, ...

struct CalibrationOptions {
  // Kept at the start profile's value (--fix NAME): what the run cannot constrain, or what a
  // team knows better than the fit.
  std::vector<std::string> fixed;
  int max_replays = 160;
  // One line per replay of the fit ("replay 12: error 8.4%"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct CoefficientFit {
  std::string name;  // the profile key
  double start = 0;
  double fitted = 0;
  bool free = false;  // fitted; false: kept at start (with `note` saying why)
  // At the fitted point, how far the figures move (RMS of their log change) per unit log
  // change of the coefficient once the other free coefficients compensate: near 0, the run
  // cannot tell it apart.
  std::optional<double> sensitivity;
  std::string note;
};

// One cell's relative errors, predicted / measured - 1, by calibration_figures.h's Figure.
struct CellErrors {
  std::string label;
  bool held_out = false;
  std::array<std::optional<double>, kFigureCount> before;
  std::array<std::optional<double>, kFigureCount> after;
  std::optional<double> kv_hit_measured;
  std::optional<double> kv_hit_after;
};

struct CalibrationResult {
  sim::TimingProfile start;
  sim::TimingProfile fitted;
  std::vector<CoefficientFit> coefficients;  // in coefficient_names() order
  // Where the KV pool (num_gpu_blocks, block_size) came from: "read from the servers'
  // vllm:cache_config_info" (then fitted and the fit's start use it), or why the start
  // profile's was kept.
  std::string kv_pool;
  std::vector<CellErrors> cells;  // run.cells' order
  int replays = 0;
  bool converged = false;
  // Mean |relative error| over every figure of the fitted cells, and of the held-out ones.
  double fitted_error_before = 0;
  double fitted_error_after = 0;
  std::optional<double> held_out_error_before;
  std::optional<double> held_out_error_after;
};

// Thrown when the run cannot constrain a free coefficient: what() names each and why, and
// says how to go on (--fix NAME, or a run that reaches the missing regime).
class CalibrationRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Fits run's non-held-out cells from `start`, with the servers' KV pool in place of start's
// when the run showed it (StoredRun::kv_pool). The free coefficients are base_us,
// per_prefill_token_us, per_decode_token_us, and per_kv_usage_us and per_context_token_us when
// `start` has that term (> 0), less options.fixed. `replay` predicts the run's cells. Checked
// before fitting: a run whose fitted cells never ran two requests at once cannot constrain
// per_decode_token_us (a step's cost per sequence, which sets capacity), refused before any replay;
// and any free coefficient whose sensitivity at the fitted point is below 0.05 cannot be told from
// the others, refused after the fit (both CalibrationRefused). Throws std::invalid_argument for an
// unknown --fix name or nothing left free; std::runtime_error when a replay cannot run.
CalibrationResult calibrate(const FitRun& run, CellReplayer& replay,
                            const sim::TimingProfile& start,
                            const CalibrationOptions& options = {});

// The fitted profile as a user keeps it: start's capacity fields, the fit's coefficients at 4
// significant digits, `name`, and a source line: "calibrated by kvsweep calibrate from " +
// `run_source` + the start profile and the errors.
sim::TimingProfile calibrated_profile(const CalibrationResult& result, const std::string& name,
                                      const std::string& run_source);

}  // namespace kvsweep::predict
