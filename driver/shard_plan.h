// A shard plan: the whole run (options and workload) as one file every shard of it reads, so
// the schedule is made once, from one seed and one dataset, and dealt out (docs/driver.md,
// "Shards"). The coordinator resolves the dataset; a shard only sends.
#pragma once

#include <string>

#include "driver/load_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

struct ShardPlan {
  // The whole run's options; shard.count is the number of shards and shard.index is ignored
  // (each shard is told its own). api_key is never written: a shard reads it from the
  // environment variable api_key_env, so no key reaches a file, a ConfigMap or a log.
  LoadOptions options;
  std::string api_key_env;
  Workload workload;
};

// JSON text of a plan: {"kvsweep_shard_plan": 1, "options": {...}, "workload": {...}}.
std::string shard_plan_json(const ShardPlan& plan);

// Parses shard_plan_json's text; throws std::invalid_argument "<where>: <field>: <problem>"
// naming the field that is missing or of the wrong type.
ShardPlan parse_shard_plan(const std::string& text, const std::string& where);

}  // namespace kvsweep::driver
