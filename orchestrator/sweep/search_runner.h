// Runs a searching sweep (scenario key `search`): every arm's capacity search in turn, each
// probe a cell run by the CellRunner, stored, claimed and resumed like any other.
#pragma once

#include <cstdint>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/sweep/cell_claims.h"
#include "orchestrator/sweep/runner_options.h"
#include "orchestrator/sweep/search_loop.h"
#include "orchestrator/sweep/sweep_output.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

class CellRunner;

struct SearchLoopResult {
  std::vector<ArmCapacity> arms;
  int cells_done = 0;
  int cells_failed = 0;
  int cells_skipped = 0;  // done before a resume: their verdicts replayed
  bool interrupted = false;
};

// Every arm's search in turn. A probe cell the experiment already has done (a resume) is not
// run again: its stored verdict is replayed, so the search continues where it stopped; one
// not done is run again from scratch. Each probe cell is added to the experiment and claimed
// by `me` when the search reaches it. options.search_guide gives an arm's start by its key.
// Without an SLO (a knee search) each arm's lightest load is probed first, as the reference.
SearchLoopResult run_search_loop(const ScenarioSpec& spec, const std::vector<CellPlan>& plan,
                                 store::Store& store, std::int64_t experiment_id,
                                 SweepOutput& output, const RunnerOptions& options,
                                 CellRunner& runner, const store::ClaimOwner& me);

}  // namespace kvsweep::orchestrator
