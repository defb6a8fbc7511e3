// Closed-loop load: N virtual users walking multi-turn conversations (the sweep runner's entry).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "driver/conversation.h"
#include "driver/load_options.h"

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

// run_load (load_run.h) with a closed-loop LoadOptions built from these and the conversations
// as the workload; kept so callers that only need a closed loop stay small.
LoadResult run_closed_loop(const ClosedLoopOptions& options,
                           const std::vector<Conversation>& conversations,
                           const std::function<void(const Progress&)>& on_progress = {});

}  // namespace kvsweep::driver
