// What `sim serve` and `proxy` share: the router's health-check options, the HTTP servers'
// limits, io threads and admin token, and serving until a signal.
#include "orchestrator/cli/server_options.h"

#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "common/error_kinds.h"
#include "common/input_file.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "sim/router/epp_config.h"

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

void add_epp_option(CLI::App* cmd, std::string* path) {
  cmd->add_option("--epp-config", *path,
                  "llm-d EndpointPickerConfig YAML the router runs as strategy epp (its scorers, "
                  "weights and picker; the default strategy then)");
}

void apply_epp_option(const std::string& path, const CLI::Option& strategy_option,
                      std::string* strategy, sim::StrategyParams* params) {
  if (path.empty()) {
    if (*strategy == "epp") {
      throw UsageError("--strategy epp needs --epp-config FILE: the EndpointPickerConfig it runs");
    }
    return;
  }
  // A regular file of bounded size only, as a scenario's epp: file (/dev/zero is refused).
  std::string text;
  try {
    text = read_input_file(path, kMaxEppFileBytes);
  } catch (const InputFileError& e) {
    throw UsageError("--epp-config " + std::string(e.what()));
  }
  std::string error;
  params->epp = sim::parse_epp_config(path, text, &error);
  if (!params->epp) throw UsageError("--epp-config " + path + ": " + error);
  if (std::string why = sim::epp_unmodelled_error(*params->epp); !why.empty()) {
    throw UsageError("--epp-config " + path + ": " + why);
  }
  if (strategy_option.count() == 0) *strategy = "epp";
}

void add_server_options(CLI::App* cmd, ServerArgs* args) {
  cmd->add_option("--io-threads", args->io_threads,
                  "event-loop threads serving the connections (and, for sim serve, the replicas)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  cmd->add_option("--admin-token-env", args->admin_token_env,
                  "environment variable holding the token /admin/* then requires (Authorization: "
                  "Bearer); required with a --host beyond loopback");
  cmd->add_option("--header-timeout", args->header_timeout_s,
                  "seconds a client has to send a request header (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--body-timeout", args->body_timeout_s,
                  "seconds a client has to send a request body after its header (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--idle-timeout", args->idle_timeout_s,
                  "seconds a keep-alive connection may wait for its next request (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--write-timeout", args->write_timeout_s,
                  "seconds a response may make no progress (a client not reading) before the "
                  "connection is closed (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-connections", args->max_connections,
                  "client connections open at once; one more is answered 503")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--send-queue-kib", args->send_queue_kib,
                  "KiB queued for one client beyond which its stream waits for it to read")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--allowed-host", args->allowed_hosts,
                  "a host name the servers answer to besides loopback names and --host (a "
                  "request naming another Host is refused: DNS rebinding); repeatable");
}

sim::HttpServerOptions http_server_options(const ServerArgs& args) {
  sim::HttpServerOptions options;
  options.header_timeout = to_ms(args.header_timeout_s);
  options.body_timeout = to_ms(args.body_timeout_s);
  options.idle_timeout = to_ms(args.idle_timeout_s);
  options.write_timeout = to_ms(args.write_timeout_s);
  options.max_connections = args.max_connections;
  options.send_queue_limit = args.send_queue_kib * 1024;
  options.allowed_hosts = args.allowed_hosts;
  return options;
}

std::string admin_token_from_env(const ServerArgs& args) {
  if (args.admin_token_env.empty()) return "";
  const char* value = std::getenv(args.admin_token_env.c_str());
  if (value == nullptr || *value == '\0') {
    throw UsageError("--admin-token-env " + args.admin_token_env +
                     ": the environment variable is not set or empty");
  }
  return value;
}

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000 + 0.5));
}

}  // namespace kvsweep::orchestrator
