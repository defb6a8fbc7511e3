// A capacity search guided by its own prediction.
#include "orchestrator/sweep/search_guide.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/sweep/predict_wiring.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_factory.h"

namespace kvsweep::orchestrator {

void guide_search(const ScenarioSpec& spec, double network_latency_s, store::Store& store,
                  SweepOutput& output, RunnerOptions& options) {
  if (!spec.search.enabled() || options.target_override == "predict" ||
      spec.search.guide == SearchGuide::kNone) {
    return;
  }
  output.line("guide: each arm's search in virtual time first (search.guide: predict)");
  RunnerOptions predicting;
  predicting.stop = options.stop;
  predicting.log = options.log;
  predicting.claim_timeout_s = options.claim_timeout_s;
  const std::vector<CellPlan> plan = expand_plan(spec, "predict");
  // The target owns the predicted fleet; it outlives the sweep run on it.
  const std::unique_ptr<PredictTarget> target =
      build_predict_target(spec, plan, network_latency_s, options.log);
  wire_predict_target(*target, predicting);
  const SweepOutcome predicted = run_sweep(spec, plan, *target, store, output, predicting);
  for (const ArmCapacity& arm : predicted.capacities) {
    // No passing load predicted: start from the lowest failing one (the bound, at worst).
    const std::optional<double> start =
        arm.result.capacity ? arm.result.capacity : arm.result.first_failing;
    if (start) options.search_guide[arm.key] = *start;
  }
  options.guide_experiment_id = predicted.experiment_id;
  output.line("guide: predicted experiment " + std::to_string(predicted.experiment_id) + " (" +
              predicted.status + ")");
}

}  // namespace kvsweep::orchestrator
