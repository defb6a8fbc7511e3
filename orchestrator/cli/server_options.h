// What `sim serve` and `proxy` share: the router's health-check options, and serving until
// a signal.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>

#include "sim/router/replica_health.h"

namespace kvsweep::orchestrator {

// Blocks until SIGINT/SIGTERM (the servers run on their own threads meanwhile); kExitOk.
int wait_for_signal();

// --health-interval and --health-failures, the router's probes of its replicas.
void add_health_options(CLI::App* cmd, double* interval_s, sim::HealthOptions* health);

std::chrono::milliseconds to_ms(double seconds);

}  // namespace kvsweep::orchestrator
