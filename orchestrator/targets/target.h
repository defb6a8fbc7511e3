// Where the model servers are and how a treatment is applied to them: the seam the runner
// sees, after mlcommons loadgen's SystemUnderTest. The runner never learns kubectl exists.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/scenario/treatment.h"
#include "orchestrator/targets/command_log.h"
#include "orchestrator/targets/shards/shard_placement.h"

namespace kvsweep::orchestrator {

// Where the load goes and where the servers' metrics are.
struct Endpoints {
  std::string base_url;                   // what the load driver talks to (no trailing /v1)
  std::vector<std::string> metrics_urls;  // every replica's /metrics
};

// Thread contract: one thread (the runner's) calls every method, never two at once, in this
// order: start() once; then, per deployment, apply() and wait_ready(); per cell, make_cold()
// when the cell starts cold, endpoints() and, once its load is done, cell_finished(). Each
// call blocks until done (a readiness gate waits up to its own time limit) and returns the
// commands it ran, oldest first; on failure it throws TargetError carrying them.
class Target {
 public:
  virtual ~Target() = default;

  virtual std::string describe() const = 0;  // "dynamo dgd/llama-70b in ns dynamo (4 workers)"

  // Connects or brings the servers up; touches no deployment.
  virtual CommandLogs start() = 0;

  // Applies the whole treatment, not a diff against the previous one.
  virtual CommandLogs apply(const Treatment& t) = 0;

  // The layered readiness gates after an apply, each with its own time limit: resource status,
  // Ready pod count (failing at once on ImagePullBackOff, CrashLoopBackOff, ...), /v1/models
  // lists the model, a 1-token completion answers. Throws TargetError whose message starts
  // "readiness gate <name>: " and says why.
  virtual CommandLogs wait_ready() = 0;

  // Makes every replica's prefix cache cold for the next cell (target.cold_method).
  virtual CommandLogs make_cold() = 0;

  // Where the load goes now; never throws.
  virtual Endpoints endpoints() const = 0;

  // What the target saw during the cell that changes what it measured: kvsweep's router
  // taking a replica out of routing or putting it back (one "health" log, one line per
  // event). Never throws: a failed query is itself a log. Most kinds see nothing.
  virtual CommandLogs cell_finished() { return {}; }

  // Where a sharded cell's shards run (load.shards; docs/driver.md, "Load shards"): nullptr,
  // the default, runs them as local processes; a Kubernetes target places them in an Indexed
  // Job in its namespace, with its kubectl (its calls join the cell's commands).
  virtual ShardPlacement* shard_placement() { return nullptr; }
};

}  // namespace kvsweep::orchestrator
