// A sweep on the predicted fleet: the runner's load step and server samples come from the
// PredictTarget instead of the driver and a /metrics scrape (`predict`, guided searches,
// `calibrate`, `replay`).
#pragma once

#include "orchestrator/sweep/runner_options.h"
#include "orchestrator/targets/predict_target.h"

namespace kvsweep::orchestrator {

// Sets options.target_override to "predict" and options.load / measured_samples to `target`'s,
// which must outlive every run_sweep given these options.
inline void wire_predict_target(PredictTarget& target, RunnerOptions& options) {
  options.target_override = "predict";
  options.load = [&target](const driver::LoadOptions& o, const driver::Workload& w,
                           const std::function<void(const driver::Progress&)>& progress) {
    return target.run_load(o, w, progress);
  };
  options.measured_samples = [&target] { return target.measured_samples(); };
}

}  // namespace kvsweep::orchestrator
