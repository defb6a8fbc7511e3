// One client connection of the HttpServer: requests read under deadlines, the response queue
// and the backpressure it gives the producer.
#include "sim/http/http_connection.h"

#include <boost/asio/post.hpp>
#include <vector>

#include "sim/http/openai_api.h"

namespace kvsweep::sim {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using std::chrono::milliseconds;

constexpr std::uint64_t kMaxBodyBytes = 64ull << 20;  // long multi-turn prompts fit
constexpr std::uint64_t kRefusedBodyBytes = 1 << 20;  // read only to answer 503 cleanly
constexpr std::size_t kMaxBufferedBytes = 1 << 20;    // pipelined input held during a response
constexpr std::size_t kMaxGather = 64;                // queued pieces per write system call

}  // namespace

HttpConnection::HttpConnection(net::io_context& io, tcp::socket socket,
                               std::shared_ptr<ServerShared> shared, bool refused)
    : io_(io),
      socket_(std::move(socket)),
      shared_(std::move(shared)),
      refused_(refused),
      read_timer_(io),
      write_timer_(io) {}

void HttpConnection::start() {
  // A new connection owes its request at once: the header deadline runs from the accept.
  arm_read_timer(Phase::kHeader, shared_->options.header_timeout);
  wait_for_bytes();
}

void HttpConnection::send(std::string bytes) {
  const auto size = static_cast<std::int64_t>(bytes.size());
  // Counted before the hop, so a producer on another thread sees its own bytes at once.
  shared_->stats->send_queue_bytes += size;
  if ((queued_ += size) > limit()) drain_wanted_ = true;
  if (!here()) {
    net::post(io_, [self = shared_from_this(), bytes = std::move(bytes)]() mutable {
      self->enqueue(std::move(bytes));
    });
    return;
  }
  enqueue(std::move(bytes));
}

void HttpConnection::complete(bool keep_alive) {
  if (!here()) {
    net::post(io_, [self = shared_from_this(), keep_alive] { self->complete(keep_alive); });
    return;
  }
  current_.reset();
  if (closed_) return;
  if (!keep_alive) {
    close_after_write_ = true;
    if (!writing_) close();
    return;
  }
  // A pipelined request already arrived: parse it now. Otherwise wait for the next one.
  if (buffer_.size() > 0 && !watching_) return read_header();
  arm_read_timer(Phase::kIdle, shared_->options.idle_timeout);
  if (!watching_) wait_for_bytes();
}

void HttpConnection::reset() {
  if (!here()) {
    net::post(io_, [self = shared_from_this()] { self->reset(); });
    return;
  }
  // SO_LINGER 0: close() sends RST, what a killed process's socket does.
  error_code ignored;
  socket_.set_option(net::socket_base::linger(true, 0), ignored);
  close();
}

void HttpConnection::shut() {
  if (!here()) {
    net::post(io_, [self = shared_from_this()] { self->shut(); });
    return;
  }
  abort_current();
  close();
}

void HttpConnection::arm_read_timer(Phase phase, milliseconds timeout) {
  read_phase_ = timeout.count() > 0 ? phase : Phase::kNone;
  if (read_phase_ == Phase::kNone) {
    read_timer_.cancel();
    return;
  }
  read_timer_.expires_after(timeout);
  read_timer_.async_wait([self = shared_from_this()](error_code ec) { self->on_read_timer(ec); });
}

void HttpConnection::on_read_timer(error_code ec) {
  if (ec || closed_ || read_phase_ == Phase::kNone) return;
  if (read_timer_.expiry() > std::chrono::steady_clock::now()) return;  // re-armed since
  HttpServerStats& stats = *shared_->stats;
  switch (read_phase_) {
    case Phase::kHeader:
      ++stats.header_timeouts;
      break;
    case Phase::kBody:
      ++stats.body_timeouts;
      break;
    case Phase::kIdle:
      ++stats.idle_timeouts;
      break;
    case Phase::kNone:
      break;
  }
  close();
}

void HttpConnection::wait_for_bytes() {
  watching_ = true;
  socket_.async_read_some(
      buffer_.prepare(4096),
      [self = shared_from_this()](error_code ec, std::size_t n) { self->on_bytes(ec, n); });
}

void HttpConnection::on_bytes(error_code ec, std::size_t n) {
  watching_ = false;
  if (ec) {
    abort_current();
    close();
    return;
  }
  buffer_.commit(n);
  if (closed_) return;
  if (!current_) return read_header();  // the next request has begun arriving
  if (buffer_.size() > kMaxBufferedBytes) {
    abort_current();
    close();
  }
  // Otherwise a pipelined request waits in buffer_ until complete() parses it.
}

void HttpConnection::read_header() {
  parser_.emplace();
  parser_->body_limit(refused_ ? kRefusedBodyBytes : kMaxBodyBytes);
  // A fresh connection keeps the deadline from its accept; a later request gets its own from
  // its first byte.
  if (read_phase_ != Phase::kHeader) {
    arm_read_timer(Phase::kHeader, shared_->options.header_timeout);
  }
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec, std::size_t) { self->on_header(ec); });
}

void HttpConnection::on_header(error_code ec) {
  if (ec) return on_read_error(ec);
  if (parser_->is_done()) return on_request();
  arm_read_timer(Phase::kBody, shared_->options.body_timeout);
  http::async_read(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec2, std::size_t) { self->on_body(ec2); });
}

void HttpConnection::on_body(error_code ec) {
  if (ec) return on_read_error(ec);
  on_request();
}

void HttpConnection::on_read_error(error_code ec) {
  arm_read_timer(Phase::kNone, milliseconds(0));
  if (closed_) return;
  // A malformed request gets a 400 and the connection closes (a refused one its 503 all the
  // same); eof is a normal close.
  if (ec != http::error::end_of_stream && ec != net::error::operation_aborted &&
      ec.category() == error_code(http::error::bad_method).category()) {
    auto exchange = std::make_shared<Exchange>(weak_from_this(), false, &io_);
    if (refused_) return refuse(*exchange);
    exchange->respond(HttpResponse{400, "text/plain", "bad request: " + ec.message() + "\n", {}});
    return;
  }
  close();
}

void HttpConnection::on_request() {
  arm_read_timer(Phase::kNone, milliseconds(0));
  http::request<http::string_body> message = parser_->release();
  parser_.reset();
  HttpRequest request{std::string(message.method_string()),
                      std::string(message.target()),
                      std::move(message.body()),
                      {}};
  for (const auto& field : message) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  auto exchange =
      std::make_shared<Exchange>(weak_from_this(), message.keep_alive() && !refused_, &io_);
  current_ = exchange;
  // Bytes already buffered are a pipelined request: complete() parses it. Otherwise watch
  // the socket so a client leaving mid-response is noticed at once.
  if (buffer_.size() == 0) wait_for_bytes();
  if (refused_) return refuse(*exchange);
  shared_->handler(request, exchange);
}

void HttpConnection::refuse(Exchange& exchange) {
  exchange.respond(
      json_response(503,
                    error_body(ApiError{503, "ServiceUnavailableError",
                                        "too many connections: this server holds at most " +
                                            std::to_string(shared_->options.max_connections) +
                                            " at once; retry later",
                                        ""}),
                    {{"Retry-After", "1"}}));
}

void HttpConnection::enqueue(std::string bytes) {
  if (closed_) return unqueue(static_cast<std::int64_t>(bytes.size()));
  shared_->stats->note_queue(queued_.load());
  outbox_.push_back(std::move(bytes));
  if (!writing_) write_next();
}

void HttpConnection::unqueue(std::int64_t bytes) {
  queued_ -= bytes;
  shared_->stats->send_queue_bytes -= bytes;
}

void HttpConnection::write_next() {
  writing_ = true;
  std::vector<net::const_buffer> pieces;
  for (std::size_t i = 0; i < outbox_.size() && i < kMaxGather; ++i) {
    pieces.push_back(net::buffer(outbox_[i]) + (i == 0 ? front_sent_ : 0));
  }
  if (shared_->options.write_timeout.count() > 0) {
    write_timer_.expires_after(shared_->options.write_timeout);
    write_timer_.async_wait(
        [self = shared_from_this()](error_code ec) { self->on_write_timer(ec); });
  }
  socket_.async_write_some(
      pieces, [self = shared_from_this()](error_code ec, std::size_t n) { self->on_write(ec, n); });
}

void HttpConnection::on_write(error_code ec, std::size_t n) {
  if (closed_) return;  // close() already gave the queue back
  if (ec) {
    abort_current();
    close();
    return;
  }
  unqueue(static_cast<std::int64_t>(n));
  while (n > 0) {
    const std::size_t left = outbox_.front().size() - front_sent_;
    if (n < left) {
      front_sent_ += n;
      break;
    }
    n -= left;
    outbox_.pop_front();
    front_sent_ = 0;
  }
  // A paused producer resumes once half the limit has drained, not at every byte.
  if (drain_wanted_.load() && queued_.load() <= limit() / 2) {
    drain_wanted_ = false;
    if (current_) current_->notify_drained();
  }
  if (!outbox_.empty()) return write_next();
  writing_ = false;
  write_timer_.cancel();
  if (close_after_write_) close();
}

void HttpConnection::on_write_timer(error_code ec) {
  if (ec || closed_ || !writing_) return;
  if (write_timer_.expiry() > std::chrono::steady_clock::now()) return;  // progress since
  ++shared_->stats->write_timeouts;
  abort_current();
  close();
}

void HttpConnection::abort_current() {
  if (auto exchange = std::move(current_)) exchange->abort();
}

void HttpConnection::close() {
  if (closed_) return;
  closed_ = true;
  if (refused_) {
    --shared_->refusing;
  } else {
    --shared_->stats->connections_open;
  }
  read_timer_.cancel();
  write_timer_.cancel();
  // outbox_ is kept: a write in flight still points into it. Its bytes stop counting.
  std::int64_t pending = -static_cast<std::int64_t>(front_sent_);
  for (const std::string& piece : outbox_) pending += static_cast<std::int64_t>(piece.size());
  unqueue(pending);
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace kvsweep::sim
