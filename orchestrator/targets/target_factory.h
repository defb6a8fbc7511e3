// Builds the target a scenario names, or the embedded fleet standing in for it.
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

// `use_sim`: ignore target.kind and run on the embedded fleet sized by target.sim (the
// `--target sim` rehearsal of a cluster scenario). `plan`: the run's cells as the run expanded
// them (expand_plan(spec, use_sim ? "sim" : "")), handed on so that a run expands its plan
// once; a target checks the treatments it will be asked to apply there. Throws TargetError
// when the scenario has a factor the chosen target cannot apply; nothing is started or run.
// The target logs what it runs (kubectl argv, admin requests, gate polls) at debug level on
// `log`. `spec` must outlive the target; `plan` is read during the call only.
std::unique_ptr<Target> make_target(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                    bool use_sim, Log log = silent_log());

// The same target's planning side, for `kvsweep plan`: validated alike, never started.
std::unique_ptr<TreatmentPlanner> make_planner(const ScenarioSpec& spec,
                                               const std::vector<CellPlan>& plan, bool use_sim);

// What `run`, `predict` and `plan` build for `--target <override_kind>` ("": the scenario's
// own target, "sim": the embedded fleet in its place, "predict": that fleet in virtual time),
// with `plan` = expand_plan(spec, override_kind). A scenario the target cannot apply is a
// usage error before anything runs: std::invalid_argument "<scenario>: <why>".
std::unique_ptr<Target> build_target(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                     const std::string& override_kind, const Log& log);
std::unique_ptr<TreatmentPlanner> build_planner(const ScenarioSpec& spec,
                                                const std::vector<CellPlan>& plan,
                                                const std::string& override_kind);
// The predicted fleet of --target predict, typed: its load step and samples are wired into the
// runner's options. Same errors as build_target.
std::unique_ptr<PredictTarget> build_predict_target(const ScenarioSpec& spec,
                                                    const std::vector<CellPlan>& plan,
                                                    double network_latency_s, const Log& log);

}  // namespace kvsweep::orchestrator
