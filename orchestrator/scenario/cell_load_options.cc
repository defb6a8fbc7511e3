// What the load driver is asked to do in each phase of a cell, from the cell's typed plan.
#include "orchestrator/scenario/cell_load_options.h"

namespace kvsweep::orchestrator {

driver::LoadOptions cell_load_options(const CellPlan& cell, const std::string& model,
                                      CellPhase phase, Arrivals arrivals) {
  const LoadSpec& l = cell.load;
  driver::LoadOptions o;
  o.model = model;
  o.endpoint = l.endpoint == "completions" ? driver::LoadOptions::Endpoint::kCompletions
                                           : driver::LoadOptions::Endpoint::kChat;
  o.stream = l.stream;
  o.max_tokens = l.max_tokens;
  o.max_tokens_cap = l.max_tokens_cap;
  o.ignore_eos = l.ignore_eos;
  o.temperature = l.temperature;
  o.seed = cell.seed;  // the same arrival schedule for every arm: a fair comparison
  o.request_timeout_s = l.timeout_s;
  o.max_event_bytes = static_cast<std::size_t>(l.max_event_bytes);
  o.threads = l.threads;
  o.new_connection_per_request = l.new_connection_per_request;
  o.think_time_s = l.think_time_s;
  if (phase == CellPhase::kWarmup) {
    o.concurrency = cell.concurrency;
    o.num_requests = l.warmup_requests;
    return o;
  }
  // A trace's own times: open loop with no rate (driver::is_open_loop), the level as the cap.
  const bool timed = arrivals == Arrivals::kWorkloadTimed && l.request_rate <= 0;
  if (l.request_rate > 0 || timed) {
    o.request_rate = l.request_rate;
    o.burstiness = l.burstiness;
    o.max_concurrency = cell.concurrency;
    o.turns = l.turns;
    o.stop_when_over_capacity = l.stop_when_over_capacity && phase == CellPhase::kMeasured;
  } else {
    o.concurrency = cell.concurrency;
  }
  o.num_requests = l.num_requests;
  o.duration_s = l.duration_s;
  // Only the measured phase is split: a warm-up or pre-pass measures nothing.
  if (phase == CellPhase::kMeasured) o.shard.count = l.shards;
  return o;
}

}  // namespace kvsweep::orchestrator
