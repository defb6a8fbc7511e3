// The coordinator's side of the shard protocol (driver/shard_run.h): start the shards, wait
// until every one is ready, give them one start instant, collect every shard's records
// (counted and checksummed), release them and merge (docs/driver.md, "Shards").
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/shard_plan.h"
#include "driver/shard_records.h"
#include "orchestrator/targets/shards/shard_launcher.h"

namespace kvsweep::orchestrator {

// A shard failed or did not deliver: the cell fails, naming the shard, before any load is
// sent when it happens before the start.
class ShardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShardCoordination {
  double ready_timeout_s = 120;  // from start() to every shard ready
  double start_lead_s = 1;       // the start instant: this long after the last shard is ready
  // From the start instant to every shard's records; 0: no limit (the run's own bounds end it).
  double run_timeout_s = 0;
  const std::atomic<bool>* stop = nullptr;           // Ctrl-C: cancel the shards, keep nothing
  std::function<void(const std::string&)> progress;  // "3 of 4 shards ready", ...
};

// Runs the plan's options.shard.count shards through `launcher` and returns every shard's
// result, checked (count, checksum, index), in shard order: driver::merge_shards joins them.
// Throws ShardError naming the shard that failed to start, died, or delivered records that do
// not add up; the launcher is stopped (its shards ended) on every way out.
std::vector<driver::ShardResult> run_shards(const driver::ShardPlan& plan, ShardLauncher& launcher,
                                            const ShardCoordination& how);

}  // namespace kvsweep::orchestrator
