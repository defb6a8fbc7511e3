// kvsweep proxy: the fleet's router in front of real OpenAI-compatible servers.
#include "sim/proxy.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/error_kinds.h"
#include "sim/http/admin_auth.h"
#include "sim/http/http_server.h"
#include "sim/http/http_upstream.h"
#include "sim/http/site_guard.h"
#include "sim/router/router.h"

namespace kvsweep::sim {

using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

// Destroyed bottom-up after stop(): server, router, upstreams, then the io_contexts. The first
// io_context is the router's home (probes, fan-outs, admin); one thread runs each.
struct Proxy::Impl {
  boost::asio::io_context& home() { return *ios.front(); }

  ProxyOptions options;
  std::vector<std::unique_ptr<boost::asio::io_context>> ios;
  std::vector<WorkGuard> work;
  std::vector<std::unique_ptr<HttpUpstream>> upstreams;
  std::unique_ptr<Router> router;
  std::unique_ptr<HttpServer> server;
  std::uint16_t port = 0;
  std::vector<std::thread> threads;
  bool running = false;
};

Proxy::Proxy(ProxyOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.upstreams.empty()) throw UsageError("upstream: give at least one URL");
  if (options.io_threads < 1 || options.io_threads > 256) {
    throw UsageError("io_threads: must be 1..256, got " + std::to_string(options.io_threads));
  }
  require_admin_token(options.host, options.admin_token);
  for (int t = 0; t < options.io_threads; ++t) {
    impl_->ios.push_back(std::make_unique<boost::asio::io_context>(1));
  }
  std::vector<RoutedReplica> routed;
  for (const std::string& url : options.upstreams) {
    UpstreamAddress address;
    std::string error;
    if (!parse_upstream_url(url, &address, &error)) throw UsageError(error);
    impl_->upstreams.push_back(std::make_unique<HttpUpstream>(impl_->home(), address));
    HttpUpstream* upstream = impl_->upstreams.back().get();
    routed.push_back(RoutedReplica{upstream, upstream, upstream->address()});
  }
  RouterOptions router;
  router.strategy = options.strategy;
  router.seed = options.seed;
  router.chwbl = options.strategy_params.chwbl;
  router.kv_aware = options.strategy_params.kv_aware;
  router.epp = options.strategy_params.epp;
  router.session_header = options.session_header;
  router.block_size = options.block_size;
  router.kv_events = false;
  router.approx_ttl = options.approx_ttl;
  router.health = options.health;
  router.request_timeout = options.request_timeout;
  router.admin_token = options.admin_token;
  // Validates the strategy and the health options.
  impl_->router = std::make_unique<Router>(impl_->home(), std::move(routed), router);
  // A refused connect of a routed request counts towards taking its upstream out.
  for (std::size_t i = 0; i < impl_->upstreams.size(); ++i) {
    impl_->upstreams[i]->set_connect_listener(
        [r = impl_->router.get(), i](bool ok, const std::string& why) {
          r->on_connect(static_cast<int>(i), ok, why);
        });
  }
  impl_->options = std::move(options);
}

Proxy::~Proxy() { stop(); }

void Proxy::start() {
  Impl& p = *impl_;
  if (p.running) throw std::logic_error("Proxy::start: already started");
  HttpServerOptions server_options = p.options.server;
  server_options.connection_contexts.clear();
  for (auto& io : p.ios) server_options.connection_contexts.push_back(io.get());
  p.server = std::make_unique<HttpServer>(
      p.home(),
      site_guarded(
          [r = p.router.get()](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
            r->handle(request, std::move(ex));
          },
          SiteNames{p.options.host, p.options.server.allowed_hosts}),
      server_options);
  p.router->set_http_stats(p.server->stats());
  p.port = p.server->listen(p.options.host, static_cast<std::uint16_t>(p.options.port));
  for (auto& io : p.ios) {
    p.work.push_back(boost::asio::make_work_guard(*io));
    p.threads.emplace_back([&io = *io] { io.run(); });
  }
  p.running = true;
}

void Proxy::stop() {
  Impl& p = *impl_;
  if (!p.running) return;
  p.running = false;
  // Close the listener (which posts the shut of each connection to its thread), then wait
  // behind those shuts on every thread before stopping.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::promise<void>> done(p.ios.size());
    for (std::size_t t = 0; t < p.ios.size(); ++t) {
      boost::asio::post(*p.ios[t], [&p, &done, t, round] {
        if (round == 0 && t == 0) p.server->close();
        done[t].set_value();
      });
    }
    for (auto& promise : done) promise.get_future().wait();
  }
  p.work.clear();
  for (auto& io : p.ios) io->stop();
  for (auto& thread : p.threads) thread.join();
  p.threads.clear();
}

std::string Proxy::url() const {
  const std::string& host = impl_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(impl_->port);
}

}  // namespace kvsweep::sim
