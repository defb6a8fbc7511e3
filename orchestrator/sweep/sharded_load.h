// A cell's load split into shards (docs/driver.md, "Shards"): the plan, the run through a
// launcher, the merged result, and each shard's row (judged by figures::judge_shard).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/validity_rules.h"
#include "driver/load_options.h"
#include "driver/workload.h"
#include "orchestrator/targets/shards/shard_launcher.h"
#include "store/rows.h"

namespace kvsweep::orchestrator {

struct ShardedLoad {
  driver::LoadResult result;                // the whole run, as run_load would return it
  std::vector<store::CellShardRow> shards;  // in shard order (cell_id left 0)
};

// Runs `options` (options.shard.count > 1) as shards through `launcher`; the API key is
// never written: each shard reads `api_key_env`. Throws ShardError (shard_coordinator.h)
// naming a shard that failed.
ShardedLoad run_sharded_load(const driver::LoadOptions& options, const std::string& api_key_env,
                             const driver::Workload& workload, ShardLauncher& launcher,
                             const std::atomic<bool>* stop,
                             const std::function<void(const std::string&)>& progress);

// "shard 1: 150 requests (150 measured, 0 failed), 74.8 req/s sent for 75.0 scheduled, send
// delay p99 0.21 ms, start skew 0.3 ms, CPU 0.12 s: valid".
std::string shard_line(const store::CellShardRow& shard, const ValidityRules& rules = {});

}  // namespace kvsweep::orchestrator
