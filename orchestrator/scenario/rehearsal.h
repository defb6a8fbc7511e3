// The scenario as `--target sim` runs it: a cluster sweep rehearsed on the embedded fleet.
#pragma once

#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

// Cuts `load` to target.sim's rehearsal limits (duration, num_requests, max_tokens, and
// conversations: of the dataset and of its stand-in); applying it twice changes nothing.
void cut_for_rehearsal(LoadSpec& load, const SimSpec& sim);

// The scenario with its load section cut (cut_for_rehearsal), everything else unchanged. The
// cells of expand_plan(spec, "sim") are cut the same way.
ScenarioSpec rehearsal_of(ScenarioSpec spec);

}  // namespace kvsweep::orchestrator
