// A real OpenAI-compatible server (vLLM, llama.cpp) as a router Backend: requests forwarded over
// HTTP.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/backend.h"

namespace kvsweep::sim {

// "http://host:port" split up; only plain http (real servers on one host or a cluster network).
struct UpstreamAddress {
  std::string host;
  std::string port;
  std::string base_path;  // "" or "/prefix" without the trailing slash
};
// nullopt-like: returns false and sets *error for anything but http://host[:port][/path].
bool parse_upstream_url(const std::string& url, UpstreamAddress* out, std::string* error);

// Forwards each request on a fresh connection (Beast client on the router's io_context) and
// streams the response back as it arrives: chunked/SSE replies chunk by chunk, others whole.
// An upstream that cannot be reached is answered 502 in OpenAI's shape. Thread contract: the
// io thread only; the io_context must outlive the upstream and every request it started.
class HttpUpstream final : public Backend {
 public:
  HttpUpstream(boost::asio::io_context& io, UpstreamAddress address);
  ~HttpUpstream() override;

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  // vLLM's POST /reset_prefix_cache, fire and forget (other servers may answer 404).
  void reset_prefix_cache() override;
  // GET /health answers 200 within the timeout.
  void check_health(std::chrono::milliseconds timeout,
                    std::function<void(bool ok, std::string why)> done) override;
  void set_connect_listener(
      std::function<void(bool ok, const std::string& why)> listener) override {
    on_connect_ = std::move(listener);
  }
  std::string address() const override;  // "http://host:port[/base]", without /v1

 private:
  boost::asio::io_context& io_;
  UpstreamAddress address_;
  std::function<void(bool ok, const std::string& why)> on_connect_;
};

}  // namespace kvsweep::sim
