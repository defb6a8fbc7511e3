// Runs a scenario's plan on a target, cell by cell, storing every cell and request.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "orchestrator/cli/console.h"
#include "orchestrator/cli/log.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

struct RunnerOptions {
  const std::atomic<bool>* stop = nullptr;  // raised by SIGINT/SIGTERM
  // Continue the latest unfinished experiment of this scenario (same text, same target):
  // finished cells are kept, the rest run again from scratch.
  bool resume = false;
  std::string target_override;              // "" or "sim" (--target sim)
  std::string api_key;  // sent as a Bearer token; from the environment, never stored
  Log log = silent_log();       // /metrics scrapes at debug level
};

struct SweepOutcome {
  std::int64_t experiment_id = 0;
  std::string status;  // "done" | "failed" (some cell failed) | "interrupted"
  int cells_done = 0;
  int cells_failed = 0;
  int cells_skipped = 0;  // already done in the experiment resumed
  bool resumed = false;
};

// Per deployment group (cells sharing their deploy-time levels), skipped when every cell is
// already done: apply the treatment when it changes, run the readiness gates, then per cell
// the cache policy (cold / warm pre-pass / as-is), the warm-up (stored, flagged), scrape
// /metrics, the measured phase (scraping every metrics.interval), scrape again, and store the
// cell with its requests, samples and commands in one transaction. A failed cell is recorded
// with its reason and the sweep goes on; a stop request ends it after storing what finished.
SweepOutcome run_sweep(const ScenarioSpec& spec, Target& target, store::Store& store,
                       Console& console, const RunnerOptions& options);

}  // namespace kvsweep::orchestrator
