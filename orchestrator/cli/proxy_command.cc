// `kvsweep proxy`: kvsweep's router in front of real OpenAI-compatible servers, until Ctrl-C.
#include <cstdio>
#include <memory>

#include "orchestrator/cli/server_options.h"
#include "orchestrator/cli/subcommand.h"
#include "sim/proxy.h"

namespace kvsweep::orchestrator {
namespace {

struct ProxyArgs {
  sim::ProxyOptions proxy;
  int ttl_s = 120;
  double health_interval_s = 1;
  double request_timeout_s = 600;
  std::string epp_config;  // --epp-config FILE
  ServerArgs server;
};

}  // namespace

Subcommand register_proxy(CLI::App& app, const GlobalOptions& /*global*/) {
  auto* cmd = app.add_subcommand(
      "proxy", "route requests to real OpenAI-compatible servers with a kvsweep strategy");
  auto args = std::make_shared<ProxyArgs>();
  sim::ProxyOptions& p = args->proxy;
  cmd->add_option("--upstream", p.upstreams, "server URL, e.g. http://127.0.0.1:8001 (repeat)")
      ->required();
  CLI::Option* strategy =
      cmd->add_option("--strategy", p.strategy,
                      "random, round-robin, least-load, prefix-hash, kv-aware, session, epp")
          ->capture_default_str();
  add_epp_option(cmd, &args->epp_config);
  cmd->add_option("--host", p.host, "address to listen on")->capture_default_str();
  cmd->add_option("--port", p.port, "port to listen on (0: any free port)")->capture_default_str();
  cmd->add_option("--kv-ttl", args->ttl_s,
                  "kv-aware without KV events: seconds a routed prefix counts as cached")
      ->capture_default_str();
  add_health_options(cmd, &args->health_interval_s, &p.health);
  cmd->add_option("--request-timeout", args->request_timeout_s,
                  "seconds a routed request may take: one not ended by then is answered 504, or "
                  "its stream cut (0: none; longer than clients' own timeouts)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 7 * 24 * 3600.0));
  add_server_options(cmd, &args->server);
  auto run = [args, strategy]() -> int {
    sim::ProxyOptions options = args->proxy;
    apply_epp_option(args->epp_config, *strategy, &options.strategy, &options.strategy_params);
    options.io_threads = args->server.io_threads;
    options.server = http_server_options(args->server);
    options.admin_token = admin_token_from_env(args->server);
    options.approx_ttl = std::chrono::seconds(args->ttl_s);
    options.health.probe_interval = to_ms(args->health_interval_s);
    options.request_timeout = to_ms(args->request_timeout_s);
    sim::Proxy proxy(options);
    proxy.start();
    const std::string strategy_text =
        options.strategy + (args->epp_config.empty() ? "" : " (" + args->epp_config + ")");
    std::printf("kvsweep proxy: %zu upstreams, strategy %s, %d io thread%s%s\n",
                options.upstreams.size(), strategy_text.c_str(), options.io_threads,
                options.io_threads == 1 ? "" : "s",
                options.admin_token.empty() ? "" : ", /admin/* needs the token");
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
