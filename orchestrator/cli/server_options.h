// What `sim serve` and `proxy` share: the router's health-check options, the HTTP servers'
// limits, io threads and admin token, and serving until a signal.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "sim/http/http_server.h"
#include "sim/router/replica_health.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::orchestrator {

// Blocks until SIGINT/SIGTERM (the servers run on their own threads meanwhile); kExitOk.
int wait_for_signal();

// --health-interval and --health-failures, the router's probes of its replicas.
void add_health_options(CLI::App* cmd, double* interval_s, sim::HealthOptions* health);

// --epp-config FILE: an llm-d EndpointPickerConfig (docs/sim.md) the router runs as strategy
// epp.
void add_epp_option(CLI::App* cmd, std::string* path);

// Reads --epp-config into params->epp and settles the strategy (`strategy_option` is the
// command's --strategy): epp when the file is given and --strategy is not (another strategy keeps
// the config for a switch through /admin/strategy). Throws std::invalid_argument naming the file,
// line and field of a config the EPP would refuse, a file it cannot read, or --strategy epp without
// the file.
void apply_epp_option(const std::string& path, const CLI::Option& strategy_option,
                      std::string* strategy, sim::StrategyParams* params);

// What the listeners allow their clients, and how the server runs, as the command line says it.
struct ServerArgs {
  int io_threads = 1;
  std::string admin_token_env;  // the name of the variable holding the token, never the token
  double header_timeout_s = 10;
  double body_timeout_s = 60;
  double idle_timeout_s = 60;
  double write_timeout_s = 30;
  std::size_t max_connections = 16384;
  std::size_t send_queue_kib = 1024;
  std::vector<std::string> allowed_hosts;  // --allowed-host, besides loopback names and --host
};

// --io-threads, --admin-token-env, --header-timeout, --body-timeout, --idle-timeout,
// --write-timeout, --max-connections, --send-queue-kib, --allowed-host.
void add_server_options(CLI::App* cmd, ServerArgs* args);

// The listeners' options from the arguments.
sim::HttpServerOptions http_server_options(const ServerArgs& args);

// The token from the environment variable --admin-token-env names; "" without the option.
// Throws std::invalid_argument naming the variable when it is unset or empty.
std::string admin_token_from_env(const ServerArgs& args);

std::chrono::milliseconds to_ms(double seconds);

}  // namespace kvsweep::orchestrator
