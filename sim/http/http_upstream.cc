// A real OpenAI-compatible server (vLLM, llama.cpp) as a router replica: requests forwarded over
// HTTP.
#include "sim/http/http_upstream.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "common/base_url.h"
#include "common/prometheus_text.h"
#include "sim/http/collect_response.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {
namespace {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

// Headers a client sends that the upstream should see; hop-by-hop ones are the proxy's own.
bool forwarded(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != "host" && lower != "connection" && lower != "content-length" &&
         lower != "transfer-encoding" && lower != "keep-alive";
}

using ConnectListener = std::function<void(bool ok, const std::string& why)>;

// A whole (not chunked) reply is kept until its end; beyond this the upstream is answered 502
// rather than held in memory. Streams are relayed piece by piece and bounded by backpressure.
constexpr std::size_t kMaxWholeReplyBytes = std::size_t{64} << 20;

// One forwarded request: connect, write, then read the header and the body piece by piece.
// `on_connect` (may be empty) hears whether the connection could be made.
class Forward : public std::enable_shared_from_this<Forward> {
 public:
  // Runs on `io`, which must be the exchange's home (or the exchange has none).
  Forward(net::io_context& io, const UpstreamAddress& address, std::shared_ptr<Exchange> exchange,
          ConnectListener on_connect, ServingBackend::Refused refused = nullptr)
      : resolver_(io),
        socket_(io),
        address_(address),
        exchange_(std::move(exchange)),
        on_connect_(std::move(on_connect)),
        refused_(std::move(refused)) {
    parser_.body_limit(std::uint64_t{1} << 32);  // long non-streamed replies are fine
  }

  void start(const HttpRequest& request) {
    message_.method_string(request.method);
    message_.target(address_.base_path + request.target);
    message_.version(11);
    for (const auto& [name, value] : request.headers) {
      if (forwarded(name)) message_.set(name, value);
    }
    message_.set(http::field::host, address_.host + ":" + address_.port);
    message_.keep_alive(false);
    message_.body() = request.body;
    message_.prepare_payload();
    // The client going away cancels the upstream request too, and so does an exchange the
    // router answered itself (its request timeout): nothing more is relayed.
    exchange_->on_end([weak = weak_from_this()](bool) {
      if (auto self = weak.lock()) self->close();
    });
    resolver_.async_resolve(
        address_.host, address_.port,
        [self = shared_from_this()](error_code ec, tcp::resolver::results_type r) {
          if (ec) return self->connect_failed("resolve: " + ec.message());
          net::async_connect(self->socket_, r, [self](error_code ec2, const tcp::endpoint&) {
            if (ec2) return self->connect_failed(ec2.message());
            if (self->on_connect_) self->on_connect_(true, "");
            self->write();
          });
        });
  }

 private:
  void write() {
    http::async_write(socket_, message_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->fail("write: " + ec.message());
      http::async_read_header(self->socket_, self->buffer_, self->parser_,
                              [self](error_code ec2, std::size_t) { self->on_header(ec2); });
    });
  }

  void on_header(error_code ec) {
    if (ec) return fail("read: " + ec.message());
    const auto& head = parser_.get();
    status_ = static_cast<int>(head.result_int());
    content_type_ = std::string(head[http::field::content_type]);
    streaming_ = parser_.chunked();
    // End-to-end headers (x-kvsweep-replica, x-request-id...) reach the client either way.
    for (const auto& field : head) {
      const std::string name(field.name_string());
      if (forwarded(name) && field.name() != http::field::content_type) {
        headers_.emplace_back(name, std::string(field.value()));
      }
    }
    if (streaming_) exchange_->begin_stream(status_, content_type_, headers_);
    read_some();
  }

  void read_some() {
    parser_.get().body().data = chunk_;
    parser_.get().body().size = sizeof chunk_;
    http::async_read_some(
        socket_, buffer_, parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_body(ec); });
  }

  void on_body(error_code ec) {
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t got = sizeof chunk_ - parser_.get().body().size;
    if (ec) {
      // A cut mid-stream is passed on as a cut: the client sees the stream end abruptly.
      if (streaming_) return exchange_->sever();
      return fail("read: " + ec.message());
    }
    if (got > 0) {
      if (streaming_) {
        exchange_->write_chunk(std::string_view(chunk_, got));
      } else if (body_.size() + got > kMaxWholeReplyBytes) {
        return fail("reply larger than " + std::to_string(kMaxWholeReplyBytes >> 20) +
                    " MiB without chunked encoding");
      } else {
        body_.append(chunk_, got);
      }
    }
    if (parser_.is_done()) {
      if (streaming_) {
        exchange_->finish();
      } else {
        exchange_->respond(
            HttpResponse{status_, content_type_, std::move(body_), std::move(headers_)});
      }
      close();
      return;
    }
    // A client that reads slower than the upstream sends: stop reading the upstream until the
    // client's queue drains, so TCP flow control holds the upstream back instead of our memory.
    if (streaming_ && exchange_->backlogged()) {
      return exchange_->on_drained([self = shared_from_this()] { self->read_some(); });
    }
    read_some();
  }

  void connect_failed(const std::string& why) {
    // A client that left already aborted the exchange and closed the socket: not the server's
    // fault.
    if (on_connect_ && !exchange_->ended()) on_connect_(false, why);
    // Nothing was sent: the router may send the request elsewhere.
    if (refused_ && !exchange_->ended()) {
      close();
      return refused_(std::move(exchange_), why);
    }
    fail(why);
  }

  void fail(const std::string& why) {
    close();
    exchange_->respond(json_response(
        502,
        error_body(ApiError{502, "BadGateway",
                            "upstream " + address_.host + ":" + address_.port + ": " + why, ""})));
  }

  void close() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::resolver resolver_;
  tcp::socket socket_;
  UpstreamAddress address_;
  std::shared_ptr<Exchange> exchange_;
  ConnectListener on_connect_;
  ServingBackend::Refused refused_;
  http::request<http::string_body> message_;
  boost::beast::flat_buffer buffer_;
  http::response_parser<http::buffer_body> parser_;
  char chunk_[16384];
  std::string body_;
  HttpHeaders headers_;
  std::string content_type_;
  int status_ = 0;
  bool streaming_ = false;
};

}  // namespace

bool parse_upstream_url(const std::string& url, UpstreamAddress* out, std::string* error) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    *error = "upstream \"" + url + "\": only http:// URLs are supported";
    return false;
  }
  const std::string rest = normalize_base_url(url).substr(scheme.size());
  const std::size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  UpstreamAddress address;
  address.port = "80";
  if (!authority.empty() && authority.front() == '[') {  // [v6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) {
      *error = "upstream \"" + url + "\": unterminated [";
      return false;
    }
    address.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      address.port = authority.substr(close + 2);
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string::npos) {
    address.host = authority.substr(0, colon);
    address.port = authority.substr(colon + 1);
  } else {
    address.host = authority;
  }
  if (address.host.empty() || address.port.empty()) {
    *error = "upstream \"" + url + "\": expected http://host[:port]";
    return false;
  }
  address.base_path = path;
  *out = address;
  return true;
}

HttpUpstream::HttpUpstream(net::io_context& io, UpstreamAddress address)
    : io_(io), address_(std::move(address)) {}

HttpUpstream::~HttpUpstream() = default;

void HttpUpstream::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  // On the client connection's own thread: the relay never hops between threads.
  net::io_context& io = exchange->home() ? *exchange->home() : io_;
  std::make_shared<Forward>(io, address_, std::move(exchange), on_connect_)->start(request);
}

void HttpUpstream::handle_routed(const HttpRequest& request, std::shared_ptr<Exchange> exchange,
                                 Refused refused) {
  net::io_context& io = exchange->home() ? *exchange->home() : io_;
  std::make_shared<Forward>(io, address_, std::move(exchange), on_connect_, std::move(refused))
      ->start(request);
}

void HttpUpstream::check_health(std::chrono::milliseconds timeout,
                                std::function<void(bool ok, std::string why)> done) {
  // Not reported to the connect listener: the probe's own answer says it once.
  collect_response(
      io_, HttpRequest{"GET", "/health", "", {}}, timeout,
      [this](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
        std::make_shared<Forward>(io_, address_, std::move(exchange), nullptr)->start(request);
      },
      [done = std::move(done)](const CollectedResponse& response) {
        const bool ok = response.error.empty() && response.status == 200;
        done(ok, ok ? "" : describe_collected(response));
      });
}

void HttpUpstream::read_load(std::chrono::milliseconds timeout,
                             std::function<void(std::optional<BackendLoad>)> done) {
  collect_response(
      io_, HttpRequest{"GET", "/metrics", "", {}}, timeout,
      [this](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
        std::make_shared<Forward>(io_, address_, std::move(exchange), nullptr)->start(request);
      },
      [done = std::move(done)](const CollectedResponse& response) {
        if (!response.error.empty() || response.status != 200) return done(std::nullopt);
        const auto samples = parse_prometheus_text(response.body);
        const auto waiting = sum_metric(samples, "vllm:num_requests_waiting");
        auto usage = sum_metric(samples, "vllm:kv_cache_usage_perc");
        if (!usage) usage = sum_metric(samples, "vllm:gpu_cache_usage_perc");
        if (!waiting && !usage) return done(std::nullopt);
        done(BackendLoad{static_cast<int>(waiting.value_or(0)), usage.value_or(0)});
      });
}

std::string HttpUpstream::address() const {
  const bool v6 = address_.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + address_.host + "]" : address_.host) + ":" + address_.port +
         address_.base_path;
}

bool HttpUpstream::apply(const ReplicaSettings& next) {
  return !next.prefix_caching && !next.faults;
}

void HttpUpstream::restart() {
  // Nobody waits for the answer: a sink that drops the bytes.
  struct Discard final : Exchange::Sink {
    void send(std::string) override {}
    void complete(bool) override {}
  };
  // Posted: the admin request that asks for it may run on any of the proxy's threads.
  net::post(io_, [this] {
    auto sink = std::make_shared<Discard>();
    auto exchange = std::make_shared<Exchange>(sink, false, &io_);
    exchange->on_end([sink](bool) {});  // keeps the sink alive until the exchange ends
    handle(HttpRequest{"POST", "/reset_prefix_cache", "", {}}, std::move(exchange));
  });
}

}  // namespace kvsweep::sim
