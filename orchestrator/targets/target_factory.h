// Builds the target a scenario names, or the embedded fleet standing in for it.
#pragma once

#include <memory>

#include "common/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"
#include "orchestrator/targets/treatment_planner.h"

namespace kvsweep::orchestrator {

// `use_sim`: ignore target.kind and run on the embedded fleet sized by target.sim (the
// `--target sim` rehearsal of a cluster scenario). Throws TargetError when the scenario has a
// factor the chosen target cannot apply; nothing is started or run. The target logs what it
// runs (kubectl argv, admin requests, gate polls) at debug level on `log`. `spec` must
// outlive the target.
std::unique_ptr<Target> make_target(const ScenarioSpec& spec, bool use_sim, Log log = silent_log());

// The same target's planning side, for `kvsweep plan`: validated alike, never started.
std::unique_ptr<TreatmentPlanner> make_planner(const ScenarioSpec& spec, bool use_sim);

}  // namespace kvsweep::orchestrator
