// The predictor's guidance of a capacity search (search.guide: predict, the default): every
// arm's search first runs in virtual time, stored as its own predicted experiment, and each
// arm's real probes then start at its predicted capacity.
#pragma once

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/sweep/runner_options.h"
#include "orchestrator/sweep/sweep_output.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// Runs the scenario's predicted search into `store` and sets options.search_guide (each arm's
// starting load) and options.guide_experiment_id for the real sweep. Does nothing for a
// scenario that does not search, for search.guide: none, and when the sweep is itself a
// prediction (options.target_override "predict"). `network_latency_s` is the predicted fleet's
// one-way latency (run --network-latency). Throws what run_sweep throws.
void guide_search(const ScenarioSpec& spec, double network_latency_s, store::Store& store,
                  SweepOutput& output, RunnerOptions& options);

}  // namespace kvsweep::orchestrator
