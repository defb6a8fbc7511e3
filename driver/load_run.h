// run_load: one load run (closed or open loop) over a Workload, on one socket-action thread.
#pragma once

#include <functional>

#include "driver/load_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// Runs until the bounds are met, the schedule or trace is exhausted, or the stop flag is
// raised, and returns every record. Failures are records (never exceptions); throws
// std::invalid_argument for bad options, naming the field. on_progress is called about once a
// second from the run thread.
//
// Closed loop: each user takes conversations in turn from a shared cursor (wrapping around)
// and sends turn k as the system prompt + turns 0..k-1 + user message k; a failed turn ends
// its conversation. Histories carry the dataset's replies, or the server's own when the
// conversation has replies_from_server.
//
// Open loop: request i is a single-turn draw in turn-major order: turn 0 of conversations
// 0, 1, ..., then turn 1 of every conversation that has one, and so on, wrapping around; the
// history is the dataset's (there is no earlier reply to wait for). So a conversation's next
// turn comes a whole lap later, as a returning user would. Trace replay (Workload::arrival_s)
// sends turn 0 of conversation i at arrival_s[i]. Without a trace, the schedule is gamma gaps
// (arrival_schedule.h): when the request count is known up front (num_requests with at most
// warmup_requests, no duration or time/conversation warm-up) it is rescaled to end at N/rate
// as vLLM does; otherwise (duration-bounded runs) gaps are drawn one by one with no rescale,
// and the run ends with the last arrival scheduled before first measured arrival + duration_s.
LoadResult run_load(const LoadOptions& options, const Workload& workload,
                    const std::function<void(const Progress&)>& on_progress = {});

}  // namespace kvsweep::driver
