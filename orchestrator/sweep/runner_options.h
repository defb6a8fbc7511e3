// How a sweep is run: stop flag, resume, rehearsal, API key, logger, load step.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/log.h"
#include "driver/load_run.h"
#include "orchestrator/sweep/cell_claims.h"
#include "orchestrator/sweep/cell_load.h"
#include "store/rows.h"

namespace kvsweep::orchestrator {

struct RunnerOptions {
  const std::atomic<bool>* stop = nullptr;  // raised by SIGINT/SIGTERM
  // Continue the latest unfinished experiment of this scenario (same text, same target):
  // finished cells are kept, the rest run again from scratch.
  bool resume = false;
  // A claim on a cell whose heartbeat is older than this belongs to a dead run, and a resume
  // takes it over; a younger one makes the resume refuse (ClaimedByAnotherRun).
  double claim_timeout_s = kDefaultClaimTimeoutS;
  std::string target_override;  // "", "sim" (--target sim) or "predict" (--target predict)
  std::string api_key;          // sent as a Bearer token; from the environment, never stored
  std::string api_key_env;      // the variable it came from: a cell's shards read it there
  // The kvsweep binary a sharded cell's local shards run (load.shards): "" = this process's
  // own (/proc/self/exe), right for `kvsweep run`; a test names the built binary.
  std::string shard_program;
  Log log = silent_log();            // /metrics scrapes at debug level
  CellLoad load = driver::run_load;  // every load phase of every cell
  // Set when the load step measures the servers itself (--target predict: the simulated
  // replicas' counters before, during and after the phase, in virtual time): called once after
  // each measured phase for its samples, on its epoch, instead of scraping the target's
  // metrics_urls over HTTP. Empty: scrape.
  std::function<std::vector<store::MetricSample>()> measured_samples;
  // A searching scenario guided by the predictor: each arm's predicted capacity by its
  // search key (sweep/search_loop.h), and the predicted experiment they came from.
  std::map<std::string, double> search_guide;
  std::int64_t guide_experiment_id = 0;
};

}  // namespace kvsweep::orchestrator
