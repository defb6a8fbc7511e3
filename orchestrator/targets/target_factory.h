// Builds the target a scenario names, or the embedded fleet standing in for it.
#pragma once

#include <memory>

#include "orchestrator/cli/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator {

// `use_sim`: ignore target.kind and run on the embedded fleet sized by target.sim (the
// `--target sim` rehearsal of a cluster scenario). Throws TargetError when the scenario has a
// factor the chosen target cannot apply. The target logs what it runs (kubectl argv, admin
// requests, gate polls) at debug level on `log`.
std::unique_ptr<Target> make_target(const ScenarioSpec& spec, bool use_sim, Log log = silent_log());

// The scenario as `--target sim` runs it: the load cut to target.sim's rehearsal limits
// (duration, num_requests, max_tokens), everything else unchanged.
ScenarioSpec rehearsal_of(ScenarioSpec spec);

}  // namespace kvsweep::orchestrator
