// A real OpenAI-compatible server (vLLM, llama.cpp) as a router replica: requests forwarded over
// HTTP.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sim/http/backend.h"

namespace kvsweep::sim {

// "http://host:port" split up; only plain http (real servers on one host or a cluster network).
struct UpstreamAddress {
  std::string host;
  std::string port;
  std::string base_path;  // "" or "/prefix" without the trailing slash
};
// Returns false and sets *error for anything but http://host[:port][/path]. The URL is taken in
// normalize_base_url's form (common/base_url.h): a trailing /v1 and slashes are dropped.
bool parse_upstream_url(const std::string& url, UpstreamAddress* out, std::string* error);

// Forwards each request on a fresh connection (Beast client on the router's io_context) and
// streams the response back as it arrives: chunked/SSE replies chunk by chunk, others whole.
// An upstream that cannot be reached is answered 502 in OpenAI's shape.
// Thread contract: the io thread only (backend.h); the io_context must outlive the upstream and
// every request it started.
class HttpUpstream final : public ServingBackend, public ReplicaControl {
 public:
  HttpUpstream(boost::asio::io_context& io, UpstreamAddress address);
  ~HttpUpstream() override;

  // ServingBackend. A probe passes when GET /health answers 200 within the timeout.
  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  // A refused connect (or one that cannot be made: resolve, unreachable) hands the exchange
  // back through `refused` instead of answering 502.
  void handle_routed(const HttpRequest& request, std::shared_ptr<Exchange> exchange,
                     Refused refused) override;
  // GET /metrics: vllm:num_requests_waiting and vllm:kv_cache_usage_perc (or the older
  // vllm:gpu_cache_usage_perc), as the EPP scrapes them.
  void read_load(std::chrono::milliseconds timeout,
                 std::function<void(std::optional<BackendLoad>)> done) override;
  void check_health(std::chrono::milliseconds timeout,
                    std::function<void(bool ok, std::string why)> done) override;

  // ReplicaControl. A real server is never known down before a connect fails, cannot be
  // restarted from here (restart() sends vLLM's POST /reset_prefix_cache, fire and forget;
  // other servers may answer 404) and has no settings to switch.
  bool available() const override { return true; }
  void restart() override;
  ReplicaSettings settings() const override { return {}; }
  bool apply(const ReplicaSettings& next) override;

  // Told whether each connection of a routed request succeeded (a refused connect is the
  // first sign of a dead server). Probes do not report here: their answer says it once.
  void set_connect_listener(std::function<void(bool ok, const std::string& why)> listener) {
    on_connect_ = std::move(listener);
  }
  std::string address() const;  // "http://host:port[/base]", without /v1

 private:
  boost::asio::io_context& io_;
  UpstreamAddress address_;
  std::function<void(bool ok, const std::string& why)> on_connect_;
};

}  // namespace kvsweep::sim
