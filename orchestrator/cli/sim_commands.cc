// `kvsweep sim serve` (the simulated fleet standalone) and `kvsweep proxy` (its router in front
// of real servers).
#include "orchestrator/cli/sim_commands.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "orchestrator/cli/signal_guard.h"
#include "sim/fleet.h"
#include "sim/proxy.h"

namespace kvsweep::orchestrator {
namespace {

// Runs until SIGINT/SIGTERM; the servers live on their own threads meanwhile.
int wait_for_signal() {
  SignalGuard guard;
  while (!guard.stop_flag().load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return kExitOk;
}

struct SimServeArgs {
  sim::FleetOptions fleet;
  int port = 8000;
  int replica_base_port = -1;  // -1: port + 1
  double health_interval_s = 1;
};

struct ProxyArgs {
  sim::ProxyOptions proxy;
  int ttl_s = 120;
  double health_interval_s = 1;
};

// --health-interval and --health-failures, the router's probes of its replicas.
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

}  // namespace

Subcommand register_sim(CLI::App& app, const GlobalOptions& /*global*/) {
  auto* sim_cmd = app.add_subcommand("sim", "the simulated fleet on its own");
  sim_cmd->require_subcommand(1);
  auto* serve = sim_cmd->add_subcommand(
      "serve", "serve N simulated vLLM replicas behind a router until Ctrl-C");
  auto args = std::make_shared<SimServeArgs>();
  sim::FleetOptions& f = args->fleet;
  serve->add_option("--replicas", f.replicas, "simulated replicas")->capture_default_str();
  serve->add_option("--profile", f.profile, "timing profile (see docs/profiles.md)")
      ->capture_default_str();
  serve->add_option("--profile-dir", f.profile_dirs,
                    "extra directory of profile YAML files (also KVSWEEP_PROFILE_PATH)");
  serve->add_option("--strategy", f.strategy,
                    "random, round-robin, least-load, prefix-hash, kv-aware, session")
      ->capture_default_str();
  serve->add_option("--model", f.model, "served model id")->capture_default_str();
  serve->add_option("--seed", f.seed, "replica i is seeded with seed + i")->capture_default_str();
  serve->add_option("--host", f.host, "address to listen on")->capture_default_str();
  serve->add_option("--port", args->port, "router port (0: any free port)")->capture_default_str();
  serve->add_option("--replica-base-port", args->replica_base_port,
                    "replica i listens on this + i (default: --port + 1; 0: any free ports)");
  add_health_options(serve, &args->health_interval_s, &f.health);
  auto run = [args]() -> int {
    sim::FleetOptions options = args->fleet;
    options.health.probe_interval = to_ms(args->health_interval_s);
    options.router_port = args->port;
    options.replica_base_port =
        args->replica_base_port >= 0 ? args->replica_base_port : (args->port == 0 ? 0 : args->port + 1);
    sim::Fleet fleet(options);
    fleet.start();
    std::printf("kvsweep sim: %d x %s replicas, strategy %s\n", options.replicas,
                options.profile.c_str(), options.strategy.c_str());
    std::printf("router   %s\n", fleet.router_url().c_str());
    const auto replicas = fleet.replica_urls();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      std::printf("replica  %s  (%zu)\n", replicas[i].c_str(), i);
    }
    std::printf("Ctrl-C stops.\n");
    std::fflush(stdout);
    const int status = wait_for_signal();
    fleet.stop();
    return status;
  };
  return Subcommand{serve, run};
}

Subcommand register_proxy(CLI::App& app, const GlobalOptions& /*global*/) {
  auto* cmd = app.add_subcommand(
      "proxy", "route requests to real OpenAI-compatible servers with a kvsweep strategy");
  auto args = std::make_shared<ProxyArgs>();
  sim::ProxyOptions& p = args->proxy;
  cmd->add_option("--upstream", p.upstreams, "server URL, e.g. http://127.0.0.1:8001 (repeat)")
      ->required();
  cmd->add_option("--strategy", p.strategy,
                  "random, round-robin, least-load, prefix-hash, kv-aware, session")
      ->capture_default_str();
  cmd->add_option("--host", p.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", p.port, "port to listen on (0: any free port)")->capture_default_str();
  cmd->add_option("--kv-ttl", args->ttl_s,
                  "kv-aware without KV events: seconds a routed prefix counts as cached")
      ->capture_default_str();
  add_health_options(cmd, &args->health_interval_s, &p.health);
  auto run = [args]() -> int {
    sim::ProxyOptions options = args->proxy;
    options.approx_ttl = std::chrono::seconds(args->ttl_s);
    options.health.probe_interval = to_ms(args->health_interval_s);
    sim::Proxy proxy(options);
    proxy.start();
    std::printf("kvsweep proxy: %zu upstreams, strategy %s\n", options.upstreams.size(),
                options.strategy.c_str());
    std::printf("router   %s\n", proxy.url().c_str());
    // The index each reply names in x-kvsweep-replica and /metrics labels replica="i".
    for (std::size_t i = 0; i < options.upstreams.size(); ++i) {
      std::printf("replica  %s  (%zu)\n", options.upstreams[i].c_str(), i);
    }
    std::printf("Ctrl-C stops.\n");
    std::fflush(stdout);
    const int status = wait_for_signal();
    proxy.stop();
    return status;
  };
  return Subcommand{cmd, run};
}

}  // namespace kvsweep::orchestrator
