// What `run` and `plan` say up front: the sweep's shape, and what every cell does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/predict_target.h"
#include "orchestrator/targets/target.h"
#include "orchestrator/targets/treatment_planner.h"

namespace kvsweep::orchestrator {

// "sweep kubeai-l4: 12 cells (3 strategy x 4 concurrency), 3 deployments, target <target>".
std::string plan_headline(const ScenarioSpec& spec, const std::vector<CellPlan>& cells,
                          const std::string& target);

// "each cell: 100 requests or 60s, whichever ends first; open loop at 800 req/s, turns
// independent; max_tokens 64; cache cold", with the rehearsal's cuts in plain sight under
// --target sim; a field a factor sets reads "by factor".
std::string cell_shape(const ScenarioSpec& spec, bool rehearsal);

// One line per factor: its phase, its levels and what each sets beyond its own field
// ("factor arm (run-time): k8s-service {target.base_url: http://...}, LeastLoad {...}").
std::vector<std::string> factor_lines(const ScenarioSpec& spec);

// The scenario's target (the embedded fleet under --target sim, its prediction under
// --target predict), or its planning side. A scenario the target cannot apply is a usage
// error before anything runs: std::invalid_argument "<scenario>: <why>".
std::unique_ptr<Target> build_target(const ScenarioSpec& spec, const std::string& override_kind,
                                     const Log& log);
std::unique_ptr<TreatmentPlanner> build_planner(const ScenarioSpec& spec,
                                                const std::string& override_kind);
// The predicted fleet of --target predict, typed: its load step and samples are wired into the
// runner's options. Same errors as build_target.
std::unique_ptr<PredictTarget> build_predict_target(const ScenarioSpec& spec,
                                                    double network_latency_s, const Log& log);

}  // namespace kvsweep::orchestrator
