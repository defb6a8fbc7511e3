// Runs a scenario's plan on a target, cell by cell, storing every cell and request: the sweep
// loop (experiment, resume, deployment groups); sweep/cell_runner.h runs each cell.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/sweep/runner_options.h"
#include "orchestrator/sweep/search_runner.h"
#include "orchestrator/sweep/sweep_output.h"
#include "orchestrator/targets/target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// Thrown by run_sweep when the sweep stopped on an error after its experiment was stored (a
// full disk, a store or target that failed): what() says why, and the experiment's status
// says "failed: <why>" when the store could still take it. `run --resume` continues it.
class SweepStopped : public std::runtime_error {
 public:
  SweepStopped(const std::string& message, std::int64_t experiment_id)
      : std::runtime_error(message), experiment_id_(experiment_id) {}
  std::int64_t experiment_id() const { return experiment_id_; }

 private:
  std::int64_t experiment_id_;
};

struct SweepOutcome {
  std::int64_t experiment_id = 0;
  std::string status;  // "done" | "failed" (some cell failed) | "interrupted"
  int cells_done = 0;
  int cells_failed = 0;
  int cells_skipped = 0;  // already done in the experiment resumed
  bool resumed = false;
  std::vector<ArmCapacity> capacities;  // a searching scenario's arms, as their searches ended
};

// Starts the target (throws std::runtime_error "starting the target: ..." when it cannot
// start, before anything is stored), then per deployment group (cells sharing their
// deploy-time levels), skipped when every cell is already done: apply the treatment when it
// changes, run the readiness gates, then per cell the cache policy (cold / warm pre-pass /
// as-is), the warm-up (stored, flagged), scrape /metrics, the measured phase (scraping every
// metrics.interval), scrape again, and store the cell with its requests, samples and commands
// in one transaction. A failed cell is recorded with its reason and the sweep goes on; a
// treatment whose apply or gates fail (target.readiness.retries more tries) fails the rest of
// its arm unrun ("not run: ..."); a stop request ends the sweep
// after storing what finished. Throws std::invalid_argument for a dataset that cannot load.
//
// Cells are claimed (cell_claims.h): the experiment is opened, its unfinished cells reset
// and claimed by this run in one transaction, and a heartbeat thread keeps the claims alive
// until the sweep ends, when they are released. A resume whose experiment has a live claim of
// another run throws ClaimedByAnotherRun before touching anything; dead claims are taken over.
// A run whose cells were taken over meanwhile throws ClaimedByAnotherRun at its next write
// and leaves the experiment to the new owner. Any other error after the experiment was opened
// marks it "failed: <reason>" ("failed: disk full: ...", cut at 1 KiB) and throws SweepStopped.
// That last write has room even on a full disk: before opening the experiment the run holds
// back room for it beside the store (store::SpaceReserve, Store::bytes_to_end_a_run), given
// back just before it; when the disk lacks that room, std::runtime_error is thrown before
// anything is stored.
//
// A scenario with `search` runs each arm's capacity search instead of the plan's cells
// (sweep/search_loop.h): `plan` then names the arms, one cell each at the searched factor's
// placeholder level, and the probes become the experiment's cells as the searches decide them.
// With search.guide: predict (the default) and a target that is not itself the predictor, each
// arm's search first runs in virtual time, stored as an experiment of its own, and the real
// probes start at its predicted capacity.
//
// `plan` is the run's, expanded once by its caller: expand_plan(spec, options.target_override).
SweepOutcome run_sweep(const ScenarioSpec& spec, const std::vector<CellPlan>& plan, Target& target,
                       store::Store& store, SweepOutput& output, const RunnerOptions& options);

}  // namespace kvsweep::orchestrator
