// One client connection of the HttpServer: requests read under deadlines, the response queue
// and the backpressure it gives the producer.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "sim/http/http_exchange.h"
#include "sim/http/http_server_options.h"
#include "sim/http/http_server_stats.h"

namespace kvsweep::sim {

// What every connection of one server shares; outlives the server while connections remain.
struct ServerShared {
  HttpServerOptions options;
  HttpHandler handler;
  std::shared_ptr<HttpServerStats> stats = std::make_shared<HttpServerStats>();
  std::atomic<int> refusing{0};  // refused connections still being answered
};

// One client connection. Exactly one read is outstanding while it is open: the request parser
// while a request arrives, and between requests and while a response is in progress a plain
// read that notices the next request beginning, or the peer going away (or buffers a pipelined
// request for later). That keeps disconnect detection on streams without a second read racing
// the parser. One timer guards the read phases (header, body, idle), another the writes.
// Thread contract: everything runs on io_, the context its socket belongs to; the Sink methods
// and shut() may be called from any thread and are posted there.
class HttpConnection final : public Exchange::Sink,
                             public std::enable_shared_from_this<HttpConnection> {
 public:
  // A `refused` connection (over max_connections) reads one request and answers it 503.
  HttpConnection(boost::asio::io_context& io, boost::asio::ip::tcp::socket socket,
                 std::shared_ptr<ServerShared> shared, bool refused);
  void start();  // on io
  void send(std::string bytes) override;
  void complete(bool keep_alive) override;
  void reset() override;

  bool backlogged() const override { return queued_.load() > limit(); }

  // Server stop: the client is told nothing more; the handler hears an abort.
  void shut();

 private:
  enum class Phase { kNone, kHeader, kBody, kIdle };  // what the read timer guards

  bool here() const { return io_.get_executor().running_in_this_thread(); }
  std::int64_t limit() const {
    return static_cast<std::int64_t>(shared_->options.send_queue_limit);
  }
  void arm_read_timer(Phase phase, std::chrono::milliseconds timeout);
  void on_read_timer(boost::system::error_code ec);

  // The one read between requests: the next request beginning, or the client going away.
  void wait_for_bytes();
  void on_bytes(boost::system::error_code ec, std::size_t n);
  void read_header();
  void on_header(boost::system::error_code ec);
  void on_body(boost::system::error_code ec);
  void on_read_error(boost::system::error_code ec);
  void on_request();
  void refuse(Exchange& exchange);
  void enqueue(std::string bytes);
  void unqueue(std::int64_t bytes);

  // Writes what is queued, several pieces per call; each completion is progress and restarts
  // the write timeout.
  void write_next();
  void on_write(boost::system::error_code ec, std::size_t n);
  void on_write_timer(boost::system::error_code ec);
  void abort_current();
  void close();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<ServerShared> shared_;
  const bool refused_;
  boost::asio::steady_timer read_timer_;
  boost::asio::steady_timer write_timer_;
  Phase read_phase_ = Phase::kNone;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<Exchange> current_;  // the request being answered, if any
  std::deque<std::string> outbox_;     // front is being written, from front_sent_ on
  std::size_t front_sent_ = 0;
  std::atomic<std::int64_t> queued_{0};    // bytes sent to this sink and not yet written
  std::atomic<bool> drain_wanted_{false};  // queued_ went over the limit since the last notice
  bool writing_ = false;
  bool watching_ = false;
  bool close_after_write_ = false;
  bool closed_ = false;
};

}  // namespace kvsweep::sim
