// What the load driver is asked to do in each phase of a cell, from the cell's typed plan: the
// one mapping, shared by the runner and whatever predicts a cell without running it.
#pragma once

#include <string>

#include "driver/load_options.h"
#include "orchestrator/scenario/plan.h"

namespace kvsweep::orchestrator {

// kPrepass: a warm cell's unmeasured replay of the measured workload; kWarmup: the warm-up
// requests; kMeasured: what the cell is for.
enum class CellPhase { kPrepass, kWarmup, kMeasured };

// The driver options of `phase` of `cell`: the request fields (endpoint, stream, max_tokens and
// the rehearsal's cap, ignore_eos, temperature), the schedule's seed, the transport (threads,
// a connection per request), the request timeout, and the shape. Warm-up is a closed loop of
// `concurrency` users sending load.warmup_requests; the pre-pass and the measured phase run open
// loop at load.request_rate with the concurrency as the in-flight cap (turn order and think
// time as load says), or a closed loop of `concurrency` users, bounded by num_requests and
// duration. A workload with its own arrival times (a Mooncake trace; not its generated
// stand-in) and no load.request_rate runs open loop on those times, with the concurrency as
// the in-flight cap, in the pre-pass and the measured phase. The caller adds where and how to
// send: base_url, api_key, stop, the callbacks.
enum class Arrivals { kFromLoad, kWorkloadTimed };
driver::LoadOptions cell_load_options(const CellPlan& cell, const std::string& model,
                                      CellPhase phase, Arrivals arrivals);

}  // namespace kvsweep::orchestrator
