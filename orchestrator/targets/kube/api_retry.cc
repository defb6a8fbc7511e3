// Trying a kubectl step again when the API server's answer says it may succeed later.
#include "orchestrator/targets/kube/api_retry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "common/duration.h"
#include "orchestrator/targets/kube/kubectl.h"

namespace kvsweep::orchestrator::kube {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void retry_transient(const RetryPolicy& policy, const std::function<void()>& attempt,
                     spdlog::logger& log) {
  const auto start = Clock::now();
  double pause_s = std::max(policy.first_pause_s, 0.01);
  for (int tries = 1;; ++tries) {
    try {
      attempt();
      return;
    } catch (const KubectlError& e) {
      const bool again = e.answer() == ApiAnswer::kConflict || e.answer() == ApiAnswer::kTransient;
      const double elapsed = seconds_since(start);
      if (!again || elapsed + pause_s > policy.budget_s) {
        if (tries == 1) throw;
        throw KubectlError(std::string(e.what()) + " (tried " + std::to_string(tries) +
                               " times in " + format_duration_s(elapsed) + ")",
                           e.answer());
      }
      log.debug("{}; trying again in {}", e.what(), format_duration_s(pause_s));
      std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
      pause_s = std::min(pause_s * 2, std::max(policy.max_pause_s, pause_s));
    }
  }
}

}  // namespace kvsweep::orchestrator::kube
