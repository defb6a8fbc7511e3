// Calibrating a stored run: its cells as the fit reads them (predict/calibrate/calibration.h),
// each replayed through the predicted sweep (virtual_replay.h).
#pragma once

#include <atomic>
#include <string>

#include "orchestrator/calibrate/stored_run.h"
#include "predict/calibrate/calibration.h"
#include "sim/engine/profile.h"

namespace kvsweep::orchestrator {

// The fit of `run`'s cells from `start` (predict::calibrate, which says what it fits and what it
// refuses), replayed with run's scenario, traffic and fleet; a raised `stop` ends the replays.
predict::CalibrationResult calibrate(const StoredRun& run, const sim::TimingProfile& start,
                                     const predict::CalibrationOptions& options = {},
                                     const std::atomic<bool>* stop = nullptr);

// predict::calibrated_profile, its source naming the experiment ("experiment 12 (name, kubeai,
// 2026-11-30T10:00:00Z)").
sim::TimingProfile calibrated_profile(const StoredRun& run,
                                      const predict::CalibrationResult& result,
                                      const std::string& name);

}  // namespace kvsweep::orchestrator
