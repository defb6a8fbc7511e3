// Event-driven HTTP/1.1 server (Boost.Beast): one listener, keep-alive connections, streaming.
#include "sim/http/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <optional>
#include <stdexcept>

namespace kvsweep::sim {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

constexpr std::uint64_t kMaxBodyBytes = 64ull << 20;  // long multi-turn prompts fit
constexpr std::size_t kMaxBufferedBytes = 1 << 20;    // pipelined input held during a response

// One client connection. Exactly one read is outstanding while it is open: the request parser
// between requests, and while a response is in progress a plain read that only notices the
// peer going away (or buffers a pipelined request for later). That keeps disconnect detection
// on streams without a second read racing the parser.
class Connection final : public Exchange::Sink, public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<const HttpHandler> handler)
      : socket_(std::move(socket)), handler_(std::move(handler)) {}

  void start() { read_request(); }

  void send(std::string bytes) override {
    if (closed_) return;
    outbox_.push_back(std::move(bytes));
    if (!writing_) write_next();
  }

  void complete(bool keep_alive) override {
    current_.reset();
    if (!keep_alive) {
      close_after_write_ = true;
      if (!writing_) close();
    } else if (!watching_ && !closed_) {
      read_request();  // a pipelined request stopped the watch; parse it now
    }
  }

  void reset() override {
    // SO_LINGER 0: close() sends RST, what a killed process's socket does.
    error_code ignored;
    socket_.set_option(net::socket_base::linger(true, 0), ignored);
    close();
  }

  // Server stop: the client is told nothing more; the handler hears an abort.
  void shut() {
    abort_current();
    close();
  }

 private:
  void read_request() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_request(error_code ec) {
    if (ec) {
      // A malformed request gets a 400 and the connection closes; eof is a normal close.
      if (ec != http::error::end_of_stream && ec != net::error::operation_aborted && !closed_ &&
          ec.category() == error_code(http::error::bad_method).category()) {
        auto exchange = std::make_shared<Exchange>(weak_from_this(), false);
        exchange->respond(
            HttpResponse{400, "text/plain", "bad request: " + ec.message() + "\n", {}});
        return;
      }
      close();
      return;
    }
    http::request<http::string_body> message = parser_->release();
    parser_.reset();
    HttpRequest request{std::string(message.method_string()),
                        std::string(message.target()),
                        std::move(message.body()),
                        {}};
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    auto exchange = std::make_shared<Exchange>(weak_from_this(), message.keep_alive());
    current_ = exchange;
    // Bytes already buffered are a pipelined request: complete() parses it. Otherwise watch
    // the socket so a client leaving mid-response is noticed at once.
    if (buffer_.size() == 0) watch();
    (*handler_)(request, exchange);
  }

  void watch() {
    watching_ = true;
    socket_.async_read_some(
        buffer_.prepare(4096),
        [self = shared_from_this()](error_code ec, std::size_t n) { self->on_watch(ec, n); });
  }

  void on_watch(error_code ec, std::size_t n) {
    watching_ = false;
    if (ec) {
      abort_current();
      close();
      return;
    }
    buffer_.commit(n);
    if (!current_) {
      read_request();  // the next request has begun arriving
    } else if (buffer_.size() > kMaxBufferedBytes) {
      abort_current();
      close();
    }
    // Otherwise a pipelined request waits in buffer_ until complete() parses it.
  }

  void write_next() {
    writing_ = true;
    net::async_write(
        socket_, net::buffer(outbox_.front()),
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(error_code ec) {
    writing_ = false;
    if (closed_) return;  // the outbox may still hold bytes; nobody will read them
    if (ec) {
      abort_current();
      close();
      return;
    }
    outbox_.pop_front();
    if (!outbox_.empty()) {
      write_next();
    } else if (close_after_write_) {
      close();
    }
  }

  void abort_current() {
    if (auto exchange = std::move(current_)) exchange->abort();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    // outbox_ is kept: a write in flight still points into its front string.
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  std::shared_ptr<const HttpHandler> handler_;
  boost::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<Exchange> current_;  // the request being answered, if any
  std::deque<std::string> outbox_;     // front is being written
  bool writing_ = false;
  bool watching_ = false;
  bool close_after_write_ = false;
  bool closed_ = false;
};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(net::io_context& io, HttpHandler h)
      : acceptor(io), handler(std::make_shared<const HttpHandler>(std::move(h))) {}

  void accept() {
    acceptor.async_accept([self = shared_from_this()](error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == net::error::operation_aborted || !self->acceptor.is_open()) return;
        self->accept();  // e.g. out of file descriptors: keep serving the open ones
        return;
      }
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // one SSE chunk per token: no batching
      auto connection = std::make_shared<Connection>(std::move(socket), self->handler);
      std::erase_if(self->connections, [](const auto& weak) { return weak.expired(); });
      self->connections.push_back(connection);
      connection->start();
      self->accept();
    });
  }

  tcp::acceptor acceptor;
  std::shared_ptr<const HttpHandler> handler;
  std::vector<std::weak_ptr<Connection>> connections;
};

HttpServer::HttpServer(net::io_context& io, HttpHandler handler)
    : impl_(std::make_shared<Impl>(io, std::move(handler))) {}

HttpServer::~HttpServer() {
  error_code ignored;
  impl_->acceptor.close(ignored);
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
  impl_->accept();
  return acceptor.local_endpoint().port();
}

void HttpServer::close() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  auto connections = std::move(impl_->connections);
  impl_->connections.clear();
  for (const auto& weak : connections) {
    if (auto connection = weak.lock()) connection->shut();
  }
}

std::size_t HttpServer::open_connections() const {
  std::size_t open = 0;
  for (const auto& weak : impl_->connections) open += weak.expired() ? 0 : 1;
  return open;
}

}  // namespace kvsweep::sim
