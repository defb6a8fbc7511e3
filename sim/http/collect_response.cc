// One request to a backend whose whole answer is kept for the router itself (fan-out, probes).
#include "sim/http/collect_response.h"

#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/utf8_prefix.h"

namespace kvsweep::sim {
namespace {

namespace http = boost::beast::http;

// Keeps every byte the exchange hands on; the response is parsed once it is complete.
class KeepingSink final : public Exchange::Sink {
 public:
  void send(std::string bytes) override { bytes_ += bytes; }
  void complete(bool) override { completed_ = true; }
  void reset() override { reset_ = true; }

  CollectedResponse result() const {
    CollectedResponse out;
    if (!completed_) {
      out.error = reset_ ? "connection reset" : "no complete response";
      return out;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{1} << 26);
    boost::beast::error_code ec;
    parser.eager(true);
    std::size_t used = 0;
    while (!ec && !parser.is_done() && used < bytes_.size()) {
      const std::size_t n =
          parser.put(boost::asio::buffer(bytes_.data() + used, bytes_.size() - used), ec);
      if (n == 0) break;
      used += n;
    }
    if (!ec && !parser.is_done()) parser.put_eof(ec);
    if (ec || !parser.is_done()) {
      out.error = "unreadable response: " + (ec ? ec.message() : std::string("truncated"));
      return out;
    }
    out.status = static_cast<int>(parser.get().result_int());
    out.body = parser.get().body();
    return out;
  }

 private:
  std::string bytes_;
  bool completed_ = false;
  bool reset_ = false;
};

// The answer and the timeout may come on different threads (a backend on its own io thread):
// the first wins, and `done` always runs on the collector's io thread.
struct Pending {
  explicit Pending(boost::asio::io_context& io) : io(io) {}
  boost::asio::io_context& io;
  std::function<void(CollectedResponse)> done;
  std::atomic<bool> finished{false};
};

void finish(const std::shared_ptr<Pending>& pending, CollectedResponse response) {
  if (pending->finished.exchange(true)) return;
  if (pending->io.get_executor().running_in_this_thread())
    return pending->done(std::move(response));
  boost::asio::post(pending->io, [pending, response = std::move(response)]() mutable {
    pending->done(std::move(response));
  });
}

}  // namespace

void collect_response(boost::asio::io_context& io, const HttpRequest& request,
                      std::chrono::milliseconds timeout, const SendRequest& send,
                      std::function<void(CollectedResponse)> done) {
  auto sink = std::make_shared<KeepingSink>();
  auto exchange = std::make_shared<Exchange>(sink, false, &io);
  auto pending = std::make_shared<Pending>(io);
  pending->done = std::move(done);
  auto timer = std::make_shared<boost::asio::steady_timer>(io, timeout);
  // The listener keeps the sink alive until the exchange ends, however it ends.
  exchange->on_end([sink, pending, timer](bool) {
    timer->cancel();
    finish(pending, sink->result());
  });
  // The handler owns the timer too, so a backend that drops the exchange without ending it
  // still gets its answer: the timeout.
  timer->async_wait([timer, weak = std::weak_ptr<Exchange>(exchange), pending,
                     timeout](const boost::system::error_code& ec) {
    if (ec) return;
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %.1f s", timeout.count() / 1000.0);
    finish(pending, CollectedResponse{0, "", text});
    if (auto exchange = weak.lock()) exchange->abort();
  });
  send(request, std::move(exchange));
}

std::string describe_collected(const CollectedResponse& response) {
  if (!response.error.empty()) return response.error;
  std::string text = "HTTP " + std::to_string(response.status);
  std::string body = response.body;
  // An OpenAI-shaped error says it in its message; anything else is shown as sent.
  const auto parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object() &&
      parsed["error"].contains("message") && parsed["error"]["message"].is_string()) {
    body = parsed["error"]["message"].get<std::string>();
  }
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  if (body.size() > 200) body = std::string(utf8_prefix(body, 200)) + "...";
  return body.empty() ? text : text + ": " + body;
}

}  // namespace kvsweep::sim
