// One simulated vLLM replica's HTTP surface: OpenAI chat and completions, models, health, metrics.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

#include "sim/engine/engine.h"
#include "sim/http/backend.h"
#include "sim/http/generation.h"
#include "sim/http/http_exchange.h"
#include "sim/http/http_server_stats.h"
#include "sim/http/latency_histogram.h"
#include "sim/http/server_routes.h"

namespace kvsweep::sim {

struct ReplicaOptions {
  int index = 0;                    // sent back as header x-kvsweep-replica
  std::string model = "sim-model";  // the only model served
  std::uint64_t seed = 1;           // engine seed; also seeds the generated text and faults
};

// Owns one engine and answers requests for it: the router uses it in process as a serving
// backend and controls it; the HttpServer calls handle() too.
// Thread contract: the thread of `io` only (both seams' contracts, backend.h); in a fleet with
// several io threads, PinnedReplica (sim/pinned_replica.h) brings calls from the others here.
class ReplicaServer final : public ServingBackend, public ReplicaControl {
 public:
  ReplicaServer(boost::asio::io_context& io, TimingProfile profile, ReplicaOptions options);
  ~ReplicaServer() override;

  // ServingBackend. A replica that is down cuts every exchange it is handed, as a refused
  // connection would; its health probe answers "down".
  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  void read_load(std::chrono::milliseconds timeout,
                 std::function<void(std::optional<BackendLoad>)> done) override;
  void check_health(std::chrono::milliseconds timeout,
                    std::function<void(bool ok, std::string why)> done) override;

  // ReplicaControl. restart() cuts every open request (their clients see a reset), empties
  // the engine and zeroes the metrics. Both settings can be switched.
  bool available() const override { return !faults_.down; }
  void restart() override;
  ReplicaSettings settings() const override;
  bool apply(const ReplicaSettings& next) override;

  // Told when `down` flips, so the fleet can close or reopen this replica's port.
  void set_down_listener(std::function<void(bool down)> listener) {
    down_listener_ = std::move(listener);
  }
  void set_kv_event_listener(KvEventListener listener) {
    engine_.set_kv_event_listener(std::move(listener));
  }
  // The counters of this replica's own HTTP server, added to its /metrics. Set before serving.
  void set_http_stats(std::shared_ptr<const HttpServerStats> stats) {
    http_stats_ = std::move(stats);
  }

  EngineMetrics metrics() const { return engine_.metrics(); }
  const TimingProfile& profile() const { return engine_.profile(); }

 private:
  struct Prepared;  // a parsed, validated request ready for the engine
  void completions(ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange);
  bool inject_error(Exchange& exchange, const HttpHeaders& headers);
  void start(std::shared_ptr<Prepared> prepared, std::shared_ptr<Exchange> exchange);
  bool draw(double probability);
  void set_faults(const FaultOptions& faults);
  void sever_open_requests();

  boost::asio::io_context& io_;
  Engine engine_;
  ReplicaOptions options_;
  LatencyHistograms latencies_;
  FaultOptions faults_;
  std::mt19937_64 fault_rng_;
  std::function<void(bool)> down_listener_;
  // Open requests by engine request id, so a restart can cut them.
  std::unordered_map<std::uint64_t, std::weak_ptr<Exchange>> open_;
  std::uint64_t next_request_id_ = 1;
  std::int64_t started_unix_s_ = 0;
  std::shared_ptr<const HttpServerStats> http_stats_;
  RouteTable routes_;  // vllm_routes() over this replica
};

}  // namespace kvsweep::sim
