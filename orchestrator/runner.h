// Runs a scenario's plan on a target, cell by cell, storing every cell and request.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "orchestrator/console.h"
#include "orchestrator/scenario_spec.h"
#include "orchestrator/target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

struct RunnerOptions {
  const std::atomic<bool>* stop = nullptr;  // raised by SIGINT/SIGTERM
  double ready_timeout_s = 120;             // per cell, for every readiness gate together
};

struct SweepOutcome {
  std::int64_t experiment_id = 0;
  std::string status;  // "done" | "failed" (some cell failed) | "interrupted"
  int cells_done = 0;
  int cells_failed = 0;
};

// Per cell: apply the treatment, wait until ready, reset the prefix cache (every cell starts
// cold), run the warm-up (its own conversations, stored but flagged), scrape /metrics, run the
// measured phase, scrape again, store. A failed cell is recorded with its reason and the sweep
// goes on; a stop request ends it after storing what finished.
SweepOutcome run_sweep(const ScenarioSpec& spec, Target& target, store::Store& store,
                       Console& console, const RunnerOptions& options);

}  // namespace kvsweep::orchestrator
