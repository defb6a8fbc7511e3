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

#include "common/join.h"
#include "sim/engine/profile.h"
#include "sim/http/http_server.h"
#include "sim/http/replica_server.h"
#include "sim/router/router.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {
namespace {

std::string url(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

// Members are destroyed bottom-up: threads are joined by stop() first, then the servers,
// router and replicas go while the io_context still exists, and the io_context last (its
// destructor drops handlers still queued, which releases the last connections).
struct Fleet::Impl {
  void bind_all();  // builds replicas and router, binds every listener; runs nothing

  FleetOptions options;
  TimingProfile profile;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::vector<std::unique_ptr<ReplicaServer>> replicas;
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
    throw std::invalid_argument("replicas: expected 1 to " + std::to_string(kMaxReplicas) +
                                ", got " + std::to_string(options.replicas));
  }
  std::string profile_error;
  auto profile = find_profile(options.profile, options.profile_dirs, &profile_error);
  if (!profile && !profile_error.empty()) {
    throw std::invalid_argument("profile \"" + options.profile + "\": " + profile_error);
  }
  if (!profile) {
    throw std::invalid_argument("profile: unknown \"" + options.profile +
                                "\"; valid: " + join(profile_names(options.profile_dirs)));
  }
  if (options.faults.size() > static_cast<std::size_t>(options.replicas)) {
    throw std::invalid_argument("faults: " + std::to_string(options.faults.size()) +
                                " entries for " + std::to_string(options.replicas) + " replicas");
  }
  if (options.router_port < 0 || options.router_port > 65535) {
    throw std::invalid_argument("router_port: expected 0 to 65535, got " +
                                std::to_string(options.router_port));
  }
  // Port 0 is ephemeral for every replica; a base port puts replica i on base + i.
  if (options.replica_base_port < 0 ||
      (options.replica_base_port > 0 && options.replica_base_port + options.replicas - 1 > 65535)) {
    throw std::invalid_argument("replica_base_port: " + std::to_string(options.replicas) +
                                " replicas from port " + std::to_string(options.replica_base_port) +
                                " go past 65535");
  }
  if (!make_strategy(options.strategy, options.replicas, options.seed)) {
    throw std::invalid_argument("strategy: unknown \"" + options.strategy +
                                "\"; valid: " + join(strategy_names()));
  }
  if (options.model.empty()) throw std::invalid_argument("model: must not be empty");
  boost::system::error_code ec;
  boost::asio::ip::make_address(options.host, ec);
  if (ec) throw std::invalid_argument("host: not an IP address: \"" + options.host + "\"");
  // The engine's timers post straight to the io_context (engine.h: all calls on its one
  // thread), so a second thread would race engine state; a strand cannot fix that from here.
  if (options.io_threads != 1) {
    throw std::invalid_argument("io_threads: must be 1 (the engine is single-threaded), got " +
                                std::to_string(options.io_threads));
  }
  impl_->options = std::move(options);
  impl_->profile = std::move(*profile);
  if (impl_->options.enable_prefix_caching) {
    impl_->profile.enable_prefix_caching = *impl_->options.enable_prefix_caching;
  }
}

Fleet::~Fleet() { stop(); }

void Fleet::Impl::bind_all() {
  std::vector<RoutedReplica> routed;
  for (int i = 0; i < options.replicas; ++i) {
    replicas.push_back(std::make_unique<ReplicaServer>(
        io, profile,
        ReplicaOptions{i, options.model, options.seed + static_cast<std::uint64_t>(i)}));
    routed.push_back(RoutedReplica{replicas.back().get(), replicas.back().get(), ""});
  }
  RouterOptions router_options;
  router_options.strategy = options.strategy;
  router_options.seed = options.seed;
  router_options.chwbl = options.strategy_params.chwbl;
  router_options.kv_aware = options.strategy_params.kv_aware;
  router_options.session_header = options.session_header;
  router_options.block_size = profile.block_size;
  router_options.kv_events = true;
  router_options.health = options.health;
  router = std::make_unique<Router>(io, std::move(routed), router_options);
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    ReplicaServer& replica = *replicas[i];
    auto server = std::make_unique<HttpServer>(
        io, [r = &replica](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
          r->handle(request, std::move(ex));
        });
    const auto port = static_cast<std::uint16_t>(
        options.replica_base_port == 0 ? 0 : options.replica_base_port + static_cast<int>(i));
    replica_ports.push_back(server->listen(options.host, port));
    replica_servers.push_back(std::move(server));
    replica.set_kv_event_listener([r = router.get(), index = static_cast<int>(i)](
                                      const KvEvent& event) { r->on_kv_event(index, event); });
    // A dead replica refuses connections on its own port; it comes back on the same one.
    replica.set_down_listener([this, i](bool down) {
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
  router_server = std::make_unique<HttpServer>(
      io, [r = router.get()](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
        r->handle(request, std::move(ex));
      });
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
    f.replicas.clear();
    throw;
  }
  f.work.emplace(f.io.get_executor());
  for (int t = 0; t < f.options.io_threads; ++t) {
    f.threads.emplace_back([&io = f.io] {
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
  // Close on the io thread, which owns every socket and engine; wait until it has.
  std::promise<void> closed;
  boost::asio::post(f.io, [&f, &closed] {
    f.router_server->close();
    for (auto& server : f.replica_servers) server->close();
    closed.set_value();
  });
  closed.get_future().wait();
  f.work.reset();
  f.io.stop();
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
