#include "orchestrator/calibrate/stored_calibration.h"

#include "orchestrator/calibrate/virtual_replay.h"

namespace kvsweep::orchestrator {
namespace {

predict::FitRun fit_run_of(const StoredRun& run) {
  predict::FitRun fit;
  fit.name = "experiment " + std::to_string(run.experiment.id);
  fit.replicas = run.replicas;
  for (const CalibrationCell& cell : run.cells) {
    fit.cells.push_back({cell.label, cell.measured, cell.held_out});
  }
  fit.kv_pool = run.kv_pool;
  fit.kv_pool_note = run.kv_pool_note;
  return fit;
}

}  // namespace

predict::CalibrationResult calibrate(const StoredRun& run, const sim::TimingProfile& start,
                                     const predict::CalibrationOptions& options,
                                     const std::atomic<bool>* stop) {
  VirtualReplay replay(run, stop);
  return predict::calibrate(fit_run_of(run), replay, start, options);
}

sim::TimingProfile calibrated_profile(const StoredRun& run,
                                      const predict::CalibrationResult& result,
                                      const std::string& name) {
  const std::string source = "experiment " + std::to_string(run.experiment.id) + " (" +
                             run.experiment.name + ", " +
                             (run.target_kind.empty() ? std::string("?") : run.target_kind) + ", " +
                             run.experiment.started_at + ")";
  return predict::calibrated_profile(result, name, source);
}

}  // namespace kvsweep::orchestrator
