// Closed-loop load: N virtual users, each walking multi-turn conversations over HTTP/SSE.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/conversation.h"
#include "driver/request_record.h"

namespace kvsweep::driver {

struct ClosedLoopOptions {
  std::string base_url;             // "http://127.0.0.1:8000" (no trailing /v1)
  std::string model;
  std::string api_key;              // sent as "Authorization: Bearer" when non-empty; never logged
  int concurrency = 1;              // virtual users, each with at most one request in flight
  int max_tokens = 64;
  bool ignore_eos = true;
  std::int64_t num_requests = 0;    // measured requests to complete; 0 = no bound
  double duration_s = 0;            // measured-phase wall time; 0 = no bound
  std::int64_t warmup_requests = 0; // the first N requests sent are warm-up
  double connect_timeout_s = 10;
  double request_timeout_s = 300;   // whole request
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler: end the run cleanly
};

struct Progress {
  std::int64_t done = 0;            // measured requests finished (ok + failed)
  std::int64_t total = 0;           // num_requests, 0 when bounded by duration
  std::int64_t failed = 0;
  double elapsed_s = 0;
  double requests_per_s = 0;
  double p50_ttft_ms = 0;
};

struct LoadResult {
  std::vector<RequestRecord> records;  // every request, warm-up included, ordered by index
  double epoch_wall_s = 0;             // unix time of the steady-clock epoch of the records
  bool interrupted = false;            // stop flag was raised
};

// Runs until num_requests measured requests completed or duration_s elapsed (whichever comes
// first; at least one bound must be set) and returns every record. Never throws for a failed
// request: failures are records. Throws std::invalid_argument for bad options.
// Each user takes conversations in turn from a shared cursor (wrapping around), and sends
// turn k as the system prompt + messages of turns 0..k-1 (with the dataset's assistant
// replies) + user message k. on_progress is called about once a second from the run thread.
LoadResult run_closed_loop(const ClosedLoopOptions& options,
                           const std::vector<Conversation>& conversations,
                           const std::function<void(const Progress&)>& on_progress = {});

}  // namespace kvsweep::driver
