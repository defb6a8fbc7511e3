// The scenario as `--target sim` runs it: a cluster sweep rehearsed on the embedded fleet.
#pragma once

#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

// The load cut to target.sim's rehearsal limits (duration, num_requests, max_tokens),
// everything else unchanged.
ScenarioSpec rehearsal_of(ScenarioSpec spec);

}  // namespace kvsweep::orchestrator
