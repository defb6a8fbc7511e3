// How a sweep is run: stop flag, resume, rehearsal, API key, logger, load step.
#pragma once

#include <atomic>
#include <string>

#include "common/log.h"
#include "driver/load_run.h"
#include "orchestrator/sweep/cell_claims.h"
#include "orchestrator/sweep/cell_load.h"

namespace kvsweep::orchestrator {

struct RunnerOptions {
  const std::atomic<bool>* stop = nullptr;  // raised by SIGINT/SIGTERM
  // Continue the latest unfinished experiment of this scenario (same text, same target):
  // finished cells are kept, the rest run again from scratch.
  bool resume = false;
  // A claim on a cell whose heartbeat is older than this belongs to a dead run, and a resume
  // takes it over; a younger one makes the resume refuse (ClaimedByAnotherRun).
  double claim_timeout_s = kDefaultClaimTimeoutS;
  std::string target_override;       // "" or "sim" (--target sim)
  std::string api_key;               // sent as a Bearer token; from the environment, never stored
  Log log = silent_log();            // /metrics scrapes at debug level
  CellLoad load = driver::run_load;  // every load phase of every cell
};

}  // namespace kvsweep::orchestrator
