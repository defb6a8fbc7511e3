// The embedded simulated fleet: N vLLM-like replicas behind a router, served over loopback HTTP.
#include "sim/fleet.h"

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/error_kinds.h"
#include "common/join.h"
#include "sim/engine/profile.h"
#include "sim/http/admin_auth.h"
#include "sim/http/http_server.h"
#include "sim/http/replica_server.h"
#include "sim/http/site_guard.h"
#include "sim/pinned_replica.h"
#include "sim/router/router.h"
#include "sim/router/routing_strategy.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {
namespace {

std::string url(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

// Members are destroyed bottom-up: threads are joined by stop() first, then the servers,
// router and replicas go while the io_contexts still exist, and the io_contexts last (their
// destructors drop handlers still queued, which releases the last connections).
// One io_context per thread: each is a strand by itself, so a replica (engine, generations,
// its own port) needs no lock, and a connection's handlers never run concurrently.
struct Fleet::Impl {
  void bind_all();  // builds replicas and router, binds every listener; runs nothing
  boost::asio::io_context& io_of_replica(std::size_t i) { return *ios[i % ios.size()]; }
  boost::asio::io_context& router_io() { return *ios.front(); }

  FleetOptions options;
  TimingProfile profile;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios;
  std::vector<WorkGuard> work;
  std::vector<std::unique_ptr<ReplicaServer>> replicas;
  std::vector<std::unique_ptr<PinnedReplica>> pinned;
  std::unique_ptr<Router> router;
  std::vector<std::unique_ptr<HttpServer>> replica_servers;
  std::unique_ptr<HttpServer> router_server;
  std::vector<std::uint16_t> replica_ports;
  std::uint16_t router_port = 0;
  std::vector<std::thread> threads;
  bool running = false;
};

Fleet::Fleet(FleetOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.replicas < 1 || options.replicas > kMaxReplicas) {
    throw UsageError("replicas: expected 1 to " + std::to_string(kMaxReplicas) + ", got " +
                     std::to_string(options.replicas));
  }
  std::string profile_error;
  auto profile = find_profile(options.profile, options.profile_dirs, &profile_error);
  if (!profile && !profile_error.empty()) {
    throw UsageError("profile \"" + options.profile + "\": " + profile_error);
  }
  if (!profile) {
    throw UsageError("profile: unknown \"" + options.profile +
                     "\"; valid: " + join(profile_names(options.profile_dirs)));
  }
  if (options.faults.size() > static_cast<std::size_t>(options.replicas)) {
    throw UsageError("faults: " + std::to_string(options.faults.size()) + " entries for " +
                     std::to_string(options.replicas) + " replicas");
  }
  if (options.router_port < 0 || options.router_port > 65535) {
    throw UsageError("router_port: expected 0 to 65535, got " +
                     std::to_string(options.router_port));
  }
  // Port 0 is ephemeral for every replica; a base port puts replica i on base + i.
  if (options.replica_base_port < 0 ||
      (options.replica_base_port > 0 && options.replica_base_port + options.replicas - 1 > 65535)) {
    throw UsageError("replica_base_port: " + std::to_string(options.replicas) +
                     " replicas from port " + std::to_string(options.replica_base_port) +
                     " go past 65535");
  }
  if (!make_strategy(options.strategy, options.replicas, options.seed, options.strategy_params)) {
    throw UsageError("strategy: unknown \"" + options.strategy +
                     "\"; valid: " + join(strategy_names()));
  }
  if (options.model.empty()) throw UsageError("model: must not be empty");
  boost::system::error_code ec;
  boost::asio::ip::make_address(options.host, ec);
  if (ec) throw UsageError("host: not an IP address: \"" + options.host + "\"");
  if (options.io_threads < 1 || options.io_threads > 256) {
    throw UsageError("io_threads: must be 1..256, got " + std::to_string(options.io_threads));
  }
  require_admin_token(options.host, options.admin_token);
  impl_->options = std::move(options);
  for (int t = 0; t < impl_->options.io_threads; ++t) {
    impl_->ios.push_back(std::make_unique<boost::asio::io_context>(1));
  }
  impl_->profile = std::move(*profile);
  if (impl_->options.enable_prefix_caching) {
    impl_->profile.enable_prefix_caching = *impl_->options.enable_prefix_caching;
  }
}

Fleet::~Fleet() { stop(); }

void Fleet::Impl::bind_all() {
  std::vector<RoutedReplica> routed;
  for (int i = 0; i < options.replicas; ++i) {
    const auto index = static_cast<std::size_t>(i);
    replicas.push_back(std::make_unique<ReplicaServer>(
        io_of_replica(index), profile,
        ReplicaOptions{i, options.model, options.seed + static_cast<std::uint64_t>(i)}));
    pinned.push_back(
        std::make_unique<PinnedReplica>(*replicas.back(), io_of_replica(index), router_io()));
    routed.push_back(RoutedReplica{pinned.back().get(), pinned.back().get(), ""});
  }
  RouterOptions router_options;
  router_options.strategy = options.strategy;
  router_options.seed = options.seed;
  router_options.chwbl = options.strategy_params.chwbl;
  router_options.kv_aware = options.strategy_params.kv_aware;
  router_options.epp = options.strategy_params.epp;
  router_options.session_header = options.session_header;
  router_options.block_size = profile.block_size;
  router_options.kv_events = true;
  router_options.health = options.health;
  router_options.admin_token = options.admin_token;
  router = std::make_unique<Router>(router_io(), std::move(routed), router_options);
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    ReplicaServer& replica = *replicas[i];
    // A replica's own port serves on its own thread: its connections never hop.
    HttpServerOptions server_options = options.server;
    server_options.connection_contexts.clear();
    auto server = std::make_unique<HttpServer>(
        io_of_replica(i),
        site_guarded(
            [r = &replica](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
              r->handle(request, std::move(ex));
            },
            SiteNames{options.host, options.server.allowed_hosts}),
        server_options);
    replica.set_http_stats(server->stats());
    const auto port = static_cast<std::uint16_t>(
        options.replica_base_port == 0 ? 0 : options.replica_base_port + static_cast<int>(i));
    replica_ports.push_back(server->listen(options.host, port));
    replica_servers.push_back(std::move(server));
    replica.set_kv_event_listener([r = router.get(), index = static_cast<int>(i)](
                                      const KvEvent& event) { r->on_kv_event(index, event); });
    // A dead replica refuses connections on its own port; it comes back on the same one. Runs
    // on the replica's thread, where its server lives.
    replica.set_down_listener([this, i](bool down) {
      pinned[i]->set_available(!down);
      if (down) {
        replica_servers[i]->close();
        return;
      }
      try {
        replica_servers[i]->listen(options.host, replica_ports[i]);
      } catch (const std::exception& e) {
        spdlog::warn("sim fleet: replica {} could not come back: {}", i, e.what());
      }
    });
    if (i < options.faults.size()) replica.apply(ReplicaSettings{std::nullopt, options.faults[i]});
  }
  // The router's connections take turns over every thread; the decision is shared.
  HttpServerOptions router_server_options = options.server;
  router_server_options.connection_contexts.clear();
  for (auto& io : ios) router_server_options.connection_contexts.push_back(io.get());
  router_server = std::make_unique<HttpServer>(
      router_io(),
      site_guarded(
          [r = router.get()](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
            r->handle(request, std::move(ex));
          },
          SiteNames{options.host, options.server.allowed_hosts}),
      router_server_options);
  router->set_http_stats(router_server->stats());
  router_port =
      router_server->listen(options.host, static_cast<std::uint16_t>(options.router_port));
}

void Fleet::start() {
  Impl& f = *impl_;
  if (f.running || f.router) throw std::logic_error("Fleet::start: already started");
  try {
    f.bind_all();
  } catch (...) {
    // Nothing ran yet: drop what was built so the destructor has nothing to stop.
    f.router_server.reset();
    f.replica_servers.clear();
    f.replica_ports.clear();
    f.router.reset();
    f.pinned.clear();
    f.replicas.clear();
    throw;
  }
  for (auto& io : f.ios) {
    f.work.push_back(boost::asio::make_work_guard(*io));
    f.threads.emplace_back([&io = *io] {
      for (;;) {
        try {
          io.run();
          return;
        } catch (const std::exception& e) {
          // A handler bug must not take the fleet down mid-sweep; say so and keep serving.
          spdlog::warn("sim fleet: io handler threw: {}", e.what());
        }
      }
    });
  }
  f.running = true;
}

void Fleet::stop() {
  Impl& f = *impl_;
  if (!f.running) return;
  f.running = false;
  // Close each listener on its own thread and wait until every one has; close() posts the shut
  // of each connection to the connection's thread, so a second round, queued behind those,
  // waits until every socket is closed.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::promise<void>> done(f.ios.size());
    for (std::size_t t = 0; t < f.ios.size(); ++t) {
      boost::asio::post(*f.ios[t], [&f, &done, t, round] {
        if (round == 0 && t == 0) f.router_server->close();
        for (std::size_t i = t; round == 0 && i < f.replica_servers.size(); i += f.ios.size()) {
          f.replica_servers[i]->close();
        }
        done[t].set_value();
      });
    }
    for (auto& promise : done) promise.get_future().wait();
  }
  f.work.clear();
  for (auto& io : f.ios) io->stop();
  for (auto& thread : f.threads) thread.join();
  f.threads.clear();
}

std::string Fleet::router_url() const { return url(impl_->options.host, impl_->router_port); }

std::vector<std::string> Fleet::replica_urls() const {
  std::vector<std::string> urls;
  for (std::uint16_t port : impl_->replica_ports) urls.push_back(url(impl_->options.host, port));
  return urls;
}

}  // namespace kvsweep::sim
