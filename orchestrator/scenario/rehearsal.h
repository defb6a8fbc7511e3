// The scenario as `--target sim` runs it: a cluster sweep rehearsed on the embedded fleet.
#pragma once

#include <string>

#include "orchestrator/scenario/prompt_repeats.h"
#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

// Cuts `load` to target.sim's rehearsal limits (duration, num_requests, max_tokens, and the
// conversations of a multi-turn dataset and of its stand-in); applying it twice changes nothing.
void cut_for_rehearsal(LoadSpec& load, const SimSpec& sim);

// What target.sim cuts when the sweep is a rehearsal (`target_override` "sim" of a cluster
// kind): a fix for a repeated prompt then names target.sim's keys. Nothing otherwise.
RehearsalCuts rehearsal_cuts(const ScenarioSpec& spec, const std::string& target_override);

// The scenario with its load section cut (cut_for_rehearsal), everything else unchanged. The
// cells of expand_plan(spec, "sim") are cut the same way.
ScenarioSpec rehearsal_of(ScenarioSpec spec);

}  // namespace kvsweep::orchestrator
