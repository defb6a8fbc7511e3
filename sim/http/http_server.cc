// Event-driven HTTP/1.1 server (Boost.Beast): one listener, keep-alive connections, streaming.
#include "sim/http/http_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <stdexcept>

#include "sim/http/http_connection.h"

namespace kvsweep::sim {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;
using std::chrono::milliseconds;

constexpr int kMaxRefusing = 64;  // refused connections still being answered
constexpr milliseconds kFirstBackoff{10};
constexpr milliseconds kMaxBackoff{1000};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(net::io_context& io, HttpHandler handler, HttpServerOptions options)
      : io(io), acceptor(io), backoff(io), shared(std::make_shared<ServerShared>()) {
    shared->options = std::move(options);
    shared->handler = std::move(handler);
  }

  void accept() {
    const auto& contexts = shared->options.connection_contexts;
    net::io_context& where = contexts.empty() ? io : *contexts[next_context++ % contexts.size()];
    acceptor.async_accept(where,
                          [self = shared_from_this(), &where](error_code ec, tcp::socket socket) {
                            self->on_accept(ec, std::move(socket), where);
                          });
  }

  void on_accept(error_code ec, tcp::socket socket, net::io_context& where) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
    if (ec == net::error::connection_aborted) return accept();  // the client left first
    if (ec) return pause_accepting(ec);
    if (backoff_delay.count() > 0) {
      spdlog::info("http server {}: accepting again", where_listening);
      backoff_delay = milliseconds(0);
    }
    HttpServerStats& stats = *shared->stats;
    ++stats.connections_total;
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // one SSE chunk per token: no batching
    const bool refused =
        static_cast<std::size_t>(stats.connections_open.load()) >= shared->options.max_connections;
    if (refused) {
      ++stats.connections_refused;
      if (shared->refusing.load() >= kMaxRefusing) {
        socket.close(ignored);  // a flood: no answer, only the close
        return accept();
      }
      ++shared->refusing;
    } else {
      ++stats.connections_open;
    }
    auto connection = std::make_shared<HttpConnection>(where, std::move(socket), shared, refused);
    {
      std::lock_guard lock(mutex);
      // Forget closed connections now and then (amortized: not a scan per accept).
      if (connections.size() >= 2 * live_after_sweep + 64) {
        std::erase_if(connections, [](const auto& weak) { return weak.expired(); });
        live_after_sweep = connections.size();
      }
      connections.push_back(connection);
    }
    if (&where == &io) {
      connection->start();
    } else {
      net::post(where, [connection] { connection->start(); });
    }
    accept();
  }

  // Out of descriptors (or memory): the pending connection stays in the listen backlog and the
  // listener stays readable, so accepting again at once would spin. Wait, then try again.
  void pause_accepting(error_code ec) {
    ++shared->stats->accept_errors;
    if (backoff_delay.count() == 0) {
      spdlog::warn(
          "http server {}: accept failed: {}; {} connections open; pausing accepts (retrying "
          "from 10 ms up to every 1 s)",
          where_listening, ec.message(), shared->stats->connections_open.load());
    }
    backoff_delay =
        backoff_delay.count() == 0 ? kFirstBackoff : std::min(2 * backoff_delay, kMaxBackoff);
    backoff.expires_after(backoff_delay);
    backoff.async_wait([self = shared_from_this()](error_code wait_ec) {
      if (wait_ec || !self->acceptor.is_open()) return;
      self->accept();
    });
  }

  net::io_context& io;
  tcp::acceptor acceptor;
  net::steady_timer backoff;
  milliseconds backoff_delay{0};  // 0: accepting normally
  std::string where_listening;    // "127.0.0.1:8000", for messages
  std::shared_ptr<ServerShared> shared;
  std::size_t next_context = 0;
  std::mutex mutex;  // guards connections: close() and the accepts may run on other threads
  std::vector<std::weak_ptr<HttpConnection>> connections;
  std::size_t live_after_sweep = 0;
};

HttpServer::HttpServer(net::io_context& io, HttpHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->backoff.cancel();
}

std::uint16_t HttpServer::listen(const std::string& host, std::uint16_t port) {
  error_code ec;
  const auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("listen on " + host + ": not an IP address: " + ec.message());
  const tcp::endpoint endpoint{address, port};
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    throw std::runtime_error("listen on " + host + ":" + std::to_string(port) + ": " +
                             ec.message());
  }
  const std::uint16_t bound = acceptor.local_endpoint().port();
  impl_->where_listening = host + ":" + std::to_string(bound);
  impl_->backoff_delay = milliseconds(0);
  impl_->accept();
  return bound;
}

void HttpServer::close() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->backoff.cancel();
  std::vector<std::weak_ptr<HttpConnection>> connections;
  {
    std::lock_guard lock(impl_->mutex);
    connections = std::move(impl_->connections);
    impl_->connections.clear();
    impl_->live_after_sweep = 0;
  }
  for (const auto& weak : connections) {
    if (auto connection = weak.lock()) connection->shut();
  }
}

std::size_t HttpServer::open_connections() const {
  return static_cast<std::size_t>(
      std::max<std::int64_t>(0, impl_->shared->stats->connections_open.load()));
}

std::shared_ptr<const HttpServerStats> HttpServer::stats() const { return impl_->shared->stats; }

}  // namespace kvsweep::sim
