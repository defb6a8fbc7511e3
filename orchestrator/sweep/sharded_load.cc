// A cell's load as shards: plan, run, merge, one row per shard.
#include "orchestrator/sweep/sharded_load.h"

#include "common/error_kinds.h"
#include "driver/shard_merge.h"
#include "driver/shard_plan.h"
#include "figures/units.h"
#include "figures/validity.h"
#include "orchestrator/targets/shards/shard_coordinator.h"

namespace kvsweep::orchestrator {
namespace {

// Shard k's row: what it was asked for (its part of the cap or of the users, and of the
// rate), what it sent, its driver's figures.
store::CellShardRow shard_row(const driver::LoadOptions& options, const driver::Workload& workload,
                              const driver::ShardFigures& f) {
  const int n = options.shard.count;
  store::CellShardRow row;
  row.shard = f.index;
  row.requests = f.requests;
  row.measured = f.measured;
  row.failed = f.failed;
  row.start_skew_ms = f.start_skew_ms;
  row.clock_offset_ms = f.clock_offset_ms;
  if (driver::is_open_loop(options, workload)) {
    row.request_rate = options.request_rate / n;
    row.max_concurrency = (options.max_concurrency + n - 1) / n;
  } else {
    row.users = (options.concurrency - f.index + n - 1) / n;
  }
  const driver::DriverSelf& d = f.driver;
  row.driver_threads = d.threads;
  row.driver_cores = d.cores;
  row.driver_wall_s = d.wall_s;
  row.driver_cpu_s = d.cpu_s;
  row.send_delay_count = d.send_delay_count;
  row.send_delay_p50_ms = d.send_delay_p50_ms;
  row.send_delay_p99_ms = d.send_delay_p99_ms;
  row.send_delay_max_ms = d.send_delay_max_ms;
  row.ready_span_s = d.ready_span_s;
  row.sent_span_s = d.sent_span_s;
  return row;
}

}  // namespace

ShardedLoad run_sharded_load(const driver::LoadOptions& options, const std::string& api_key_env,
                             const driver::Workload& workload, ShardLauncher& launcher,
                             const std::atomic<bool>* stop,
                             const std::function<void(const std::string&)>& progress) {
  driver::ShardPlan plan;
  plan.options = options;
  plan.options.api_key.clear();  // a shard reads it from api_key_env, never from the plan
  plan.options.stop = nullptr;
  plan.options.on_measured_underway = nullptr;
  plan.api_key_env = api_key_env;
  plan.workload = workload;
  ShardCoordination how;
  how.stop = stop;
  how.progress = progress;
  driver::MergedShards merged;
  try {
    merged = driver::merge_shards(run_shards(plan, launcher, how));
  } catch (const CorruptData& e) {  // the shards' records do not add up
    throw ShardError(e.what());
  }
  ShardedLoad sharded;
  for (const driver::ShardFigures& f : merged.shards) {
    sharded.shards.push_back(shard_row(options, workload, f));
  }
  sharded.result = std::move(merged.result);
  return sharded;
}

std::string shard_line(const store::CellShardRow& shard, const ValidityRules& rules) {
  const figures::CellValidity v = figures::judge_shard(shard, rules);
  std::string line = "shard " + std::to_string(shard.shard) + ": " +
                     std::to_string(shard.requests) + " requests (" +
                     std::to_string(shard.measured) + " measured, " + std::to_string(shard.failed) +
                     " failed)";
  if (v.send_rate) {
    line += ", " + figures::format_rate(*v.send_rate) + " req/s sent";
    if (v.scheduled_rate) line += " for " + figures::format_rate(*v.scheduled_rate) + " due";
  }
  if (shard.send_delay_count > 0) {
    line += ", send delay p99 " + figures::format_ms(shard.send_delay_p99_ms) + " ms";
  }
  line += ", start skew " + figures::format_fixed(shard.start_skew_ms, 1) + " ms";
  if (shard.clock_offset_ms != 0) {
    line += ", clock offset " + figures::format_fixed(shard.clock_offset_ms, 1) + " ms";
  }
  line +=
      ", CPU " + figures::format_fixed(shard.driver_cpu_s, 2) + " s: " + figures::verdict_line(v);
  return line;
}

}  // namespace kvsweep::orchestrator
