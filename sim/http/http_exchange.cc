// One HTTP request/response exchange as handlers see it, independent of the socket behind it.
#include "sim/http/http_exchange.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdio>
#include <sstream>

namespace kvsweep::sim {
namespace http = boost::beast::http;

Exchange::Exchange(std::weak_ptr<Sink> sink, bool keep_alive, boost::asio::io_context* home)
    : sink_(sink), open_sink_(sink.lock()), keep_alive_(keep_alive), home_(home) {}

Exchange::~Exchange() = default;

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() &&
        std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return {};
}

bool Exchange::away() const {
  boost::asio::io_context* home = home_.load();
  return home != nullptr && !home->get_executor().running_in_this_thread();
}

void Exchange::post_home(std::function<void()> call) {
  boost::asio::post(*home_.load(), std::move(call));
}

void Exchange::respond(HttpResponse response) {
  if (away()) {
    return post_home([self = shared_from_this(), response = std::move(response)]() mutable {
      self->respond(std::move(response));
    });
  }
  if (state_ != State::kIdle) return;
  first_byte();
  http::response<http::string_body> message{static_cast<http::status>(response.status), 11};
  message.set(http::field::server, "kvsweep-sim");
  if (!response.content_type.empty()) message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.set(name, value);
  for (const auto& [name, value] : forced_headers_) message.set(name, value);
  message.keep_alive(keep_alive_);
  message.body() = std::move(response.body);
  message.prepare_payload();
  std::ostringstream os;
  os << message;
  if (auto sink = sink_.lock()) sink->send(os.str());
  end(false);
}

void Exchange::begin_stream(int status, std::string_view content_type, const HttpHeaders& headers) {
  if (away()) {
    return post_home([self = shared_from_this(), status, type = std::string(content_type),
                      headers] { self->begin_stream(status, type, headers); });
  }
  if (state_ != State::kIdle) return;
  http::response<http::empty_body> message{static_cast<http::status>(status), 11};
  message.set(http::field::server, "kvsweep-sim");
  message.set(http::field::content_type, std::string(content_type));
  message.set(http::field::cache_control, "no-cache");
  for (const auto& [name, value] : headers) message.set(name, value);
  for (const auto& [name, value] : forced_headers_) message.set(name, value);
  message.keep_alive(keep_alive_);
  message.chunked(true);
  std::ostringstream os;
  os << message.base();
  state_ = State::kStreaming;
  if (auto sink = sink_.lock()) sink->send(os.str());
}

void Exchange::write_chunk(std::string_view data) {
  if (away()) {
    return post_home(
        [self = shared_from_this(), data = std::string(data)] { self->write_chunk(data); });
  }
  if (state_ != State::kStreaming || data.empty()) return;
  first_byte();
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string bytes = size;
  bytes.append(data);
  bytes += "\r\n";
  if (auto sink = sink_.lock()) sink->send(std::move(bytes));
}

void Exchange::finish() {
  if (away()) return post_home([self = shared_from_this()] { self->finish(); });
  if (state_ != State::kStreaming) return;
  if (auto sink = sink_.lock()) sink->send("0\r\n\r\n");
  end(false);
}

void Exchange::abort() {
  if (away()) return post_home([self = shared_from_this()] { self->abort(); });
  if (state_ == State::kEnded) return;
  end(true);
}

void Exchange::sever() {
  if (away()) return post_home([self = shared_from_this()] { self->sever(); });
  if (state_ == State::kEnded) return;
  if (auto sink = sink_.lock()) sink->reset();
  end(true);
}

void Exchange::set_header(std::string name, std::string value) {
  if (away()) {
    return post_home(
        [self = shared_from_this(), name = std::move(name), value = std::move(value)]() mutable {
          self->set_header(std::move(name), std::move(value));
        });
  }
  for (auto& [existing, old] : forced_headers_) {
    if (boost::beast::iequals(existing, name)) {
      old = std::move(value);
      return;
    }
  }
  forced_headers_.emplace_back(std::move(name), std::move(value));
}

void Exchange::on_first_byte(std::function<void()> listener) {
  if (away()) {
    return post_home([self = shared_from_this(), listener = std::move(listener)]() mutable {
      self->on_first_byte(std::move(listener));
    });
  }
  first_byte_listeners_.push_back(std::move(listener));
}

void Exchange::first_byte() {
  if (first_byte_listeners_.empty()) return;
  auto listeners = std::move(first_byte_listeners_);
  first_byte_listeners_.clear();
  for (auto& listener : listeners) listener();
}

void Exchange::on_end(std::function<void(bool aborted)> listener) {
  if (away()) {
    return post_home([self = shared_from_this(), listener = std::move(listener)]() mutable {
      self->on_end(std::move(listener));
    });
  }
  listeners_.push_back(std::move(listener));
}

bool Exchange::backlogged() const {
  auto sink = sink_.lock();
  return sink && sink->backlogged();
}

void Exchange::on_drained(std::function<void()> listener) {
  if (away()) {
    return post_home([self = shared_from_this(), listener = std::move(listener)]() mutable {
      self->on_drained(std::move(listener));
    });
  }
  if (state_ == State::kEnded) return;
  drain_listener_ = std::move(listener);
  // The backlog may have fallen between the producer's check and now: the sink's notice went
  // to nobody, so look again. Posted when there is a home, so a producer is not re-entered.
  if (!backlogged()) {
    if (home_.load() == nullptr) return notify_drained();
    post_home([self = shared_from_this()] { self->notify_drained(); });
  }
}

void Exchange::notify_drained() {
  if (away()) return post_home([self = shared_from_this()] { self->notify_drained(); });
  if (state_ == State::kEnded || !drain_listener_) return;
  auto listener = std::move(drain_listener_);
  drain_listener_ = nullptr;
  listener();
}

void Exchange::end(bool aborted) {
  state_ = State::kEnded;
  // Released last, when this call returns: the sink's complete() or a listener may still use it.
  const std::shared_ptr<Sink> was_open = std::move(open_sink_);
  drain_listener_ = nullptr;  // it may hold the producer, which holds this exchange
  if (!aborted) {
    if (auto sink = sink_.lock()) sink->complete(keep_alive_);
  }
  // Moved out first: a listener may drop the last other reference to this exchange's owner.
  auto listeners = std::move(listeners_);
  listeners_.clear();
  for (auto& listener : listeners) listener(aborted);
}

HttpResponse json_response(int status, std::string body, HttpHeaders headers) {
  return HttpResponse{status, "application/json", std::move(body), std::move(headers)};
}

}  // namespace kvsweep::sim
