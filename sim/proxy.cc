// kvsweep proxy: the fleet's router in front of real OpenAI-compatible servers.
#include "sim/proxy.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/http/http_server.h"
#include "sim/http/http_upstream.h"
#include "sim/router/router.h"

namespace kvsweep::sim {

// Destroyed bottom-up after stop(): server, router, upstreams, then the io_context.
struct Proxy::Impl {
  ProxyOptions options;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::vector<std::unique_ptr<HttpUpstream>> upstreams;
  std::unique_ptr<Router> router;
  std::unique_ptr<HttpServer> server;
  std::uint16_t port = 0;
  std::thread thread;
  bool running = false;
};

Proxy::Proxy(ProxyOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.upstreams.empty()) throw std::invalid_argument("upstream: give at least one URL");
  std::vector<RoutedReplica> routed;
  for (const std::string& url : options.upstreams) {
    UpstreamAddress address;
    std::string error;
    if (!parse_upstream_url(url, &address, &error)) throw std::invalid_argument(error);
    impl_->upstreams.push_back(std::make_unique<HttpUpstream>(impl_->io, address));
    HttpUpstream* upstream = impl_->upstreams.back().get();
    routed.push_back(RoutedReplica{upstream, upstream, upstream->address()});
  }
  RouterOptions router;
  router.strategy = options.strategy;
  router.seed = options.seed;
  router.chwbl = options.strategy_params.chwbl;
  router.kv_aware = options.strategy_params.kv_aware;
  router.session_header = options.session_header;
  router.block_size = options.block_size;
  router.kv_events = false;
  router.approx_ttl = options.approx_ttl;
  router.health = options.health;
  // Validates the strategy and the health options.
  impl_->router = std::make_unique<Router>(impl_->io, std::move(routed), router);
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
  p.server = std::make_unique<HttpServer>(
      p.io, [r = p.router.get()](const HttpRequest& request, std::shared_ptr<Exchange> ex) {
        r->handle(request, std::move(ex));
      });
  p.port = p.server->listen(p.options.host, static_cast<std::uint16_t>(p.options.port));
  p.work.emplace(p.io.get_executor());
  p.thread = std::thread([&io = p.io] { io.run(); });
  p.running = true;
}

void Proxy::stop() {
  Impl& p = *impl_;
  if (!p.running) return;
  p.running = false;
  std::promise<void> closed;
  boost::asio::post(p.io, [&p, &closed] {
    p.server->close();
    closed.set_value();
  });
  closed.get_future().wait();
  p.work.reset();
  p.io.stop();
  p.thread.join();
}

std::string Proxy::url() const {
  const std::string& host = impl_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(impl_->port);
}

}  // namespace kvsweep::sim
