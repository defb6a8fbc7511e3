// What `sim serve` and `proxy` share: the router's health-check options, and serving until
// a signal.
#include "orchestrator/cli/server_options.h"

#include <thread>

#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/subcommand.h"

namespace kvsweep::orchestrator {

int wait_for_signal() {
  SignalGuard guard;
  while (!guard.stop_flag().load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return kExitOk;
}

void add_health_options(CLI::App* cmd, double* interval_s, sim::HealthOptions* health) {
  cmd->add_option("--health-interval", *interval_s,
                  "seconds between /health probes of each replica (0: no health checks)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--health-failures", health->failure_threshold,
                  "consecutive failed probes or connects that take a replica out of routing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

}  // namespace kvsweep::orchestrator
