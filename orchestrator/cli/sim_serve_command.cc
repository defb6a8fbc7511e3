// `kvsweep sim serve`: the simulated fleet standalone, for any client, until Ctrl-C.
#include <cstdio>
#include <memory>

#include "orchestrator/cli/server_options.h"
#include "orchestrator/cli/subcommand.h"
#include "sim/fleet.h"

namespace kvsweep::orchestrator {
namespace {

struct SimServeArgs {
  sim::FleetOptions fleet;
  int port = 8000;
  int replica_base_port = -1;  // -1: port + 1
  double health_interval_s = 1;
  std::string epp_config;  // --epp-config FILE
  ServerArgs server;
};

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
  CLI::Option* strategy =
      serve
          ->add_option("--strategy", f.strategy,
                       "random, round-robin, least-load, prefix-hash, kv-aware, session, epp")
          ->capture_default_str();
  add_epp_option(serve, &args->epp_config);
  serve->add_option("--model", f.model, "served model id")->capture_default_str();
  serve->add_option("--seed", f.seed, "replica i is seeded with seed + i")->capture_default_str();
  serve->add_option("--host", f.host, "address to listen on")->capture_default_str();
  serve->add_option("--port", args->port, "router port (0: any free port)")->capture_default_str();
  serve->add_option("--replica-base-port", args->replica_base_port,
                    "replica i listens on this + i (default: --port + 1; 0: any free ports)");
  add_health_options(serve, &args->health_interval_s, &f.health);
  add_server_options(serve, &args->server);
  auto run = [args, strategy]() -> int {
    sim::FleetOptions options = args->fleet;
    apply_epp_option(args->epp_config, *strategy, &options.strategy, &options.strategy_params);
    options.io_threads = args->server.io_threads;
    options.server = http_server_options(args->server);
    options.admin_token = admin_token_from_env(args->server);
    options.health.probe_interval = to_ms(args->health_interval_s);
    options.router_port = args->port;
    options.replica_base_port = args->replica_base_port >= 0
                                    ? args->replica_base_port
                                    : (args->port == 0 ? 0 : args->port + 1);
    sim::Fleet fleet(options);
    fleet.start();
    const std::string strategy_text =
        options.strategy + (args->epp_config.empty() ? "" : " (" + args->epp_config + ")");
    std::printf("kvsweep sim: %d x %s replicas, strategy %s, %d io thread%s%s\n", options.replicas,
                options.profile.c_str(), strategy_text.c_str(), options.io_threads,
                options.io_threads == 1 ? "" : "s",
                options.admin_token.empty() ? "" : ", /admin/* needs the token");
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

}  // namespace kvsweep::orchestrator
