// Closed-loop load: N virtual users walking multi-turn conversations (the sweep runner's entry).
#include "driver/closed_loop.h"

#include "driver/load_run.h"
#include "driver/workload.h"

namespace kvsweep::driver {

LoadResult run_closed_loop(const ClosedLoopOptions& options,
                           const std::vector<Conversation>& conversations,
                           const std::function<void(const Progress&)>& on_progress) {
  LoadOptions load;
  load.base_url = options.base_url;
  load.model = options.model;
  load.api_key = options.api_key;
  load.concurrency = options.concurrency;
  load.max_tokens = options.max_tokens;
  load.ignore_eos = options.ignore_eos;
  load.num_requests = options.num_requests;
  load.duration_s = options.duration_s;
  load.warmup_requests = options.warmup_requests;
  load.connect_timeout_s = options.connect_timeout_s;
  load.request_timeout_s = options.request_timeout_s;
  load.stop = options.stop;
  Workload workload;
  workload.conversations = conversations;
  return run_load(load, workload, on_progress);
}

}  // namespace kvsweep::driver
