// Trying a kubectl step again when the API server's answer says it may succeed later: a 409
// Conflict (read again, apply again), a 5xx, a 429, a timeout, the server unreachable.
#pragma once

#include <functional>
#include <string>

#include "common/log.h"

namespace kvsweep::orchestrator::kube {

struct RetryPolicy {
  double budget_s = 1800;    // no new attempt starts later than this after the first
  double first_pause_s = 2;  // before the second attempt; doubled each time, up to max_pause_s
  double max_pause_s = 30;
};

// Runs `attempt` (one or more kubectl calls, each logged by its Kubectl) until it returns.
// After a KubectlError whose answer is kConflict or kTransient it pauses and runs `attempt`
// again from its start, so an attempt that reads before it writes reads again; any other
// error, or one whose next attempt would start past the budget, is thrown again, its message
// ending "(tried N times in T s)" when there was more than one try. Each retry is logged at
// debug level on `log`.
void retry_transient(const RetryPolicy& policy, const std::function<void()>& attempt,
                     spdlog::logger& log);

}  // namespace kvsweep::orchestrator::kube
