// One simulated vLLM replica's HTTP surface: OpenAI chat and completions, models, health, metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>

#include "sim/backend.h"
#include "sim/engine.h"
#include "sim/generation.h"
#include "sim/http_exchange.h"
#include "sim/latency_histogram.h"

namespace kvsweep::sim {

struct ReplicaOptions {
  int index = 0;                    // sent back as header x-kvsweep-replica
  std::string model = "sim-model";  // the only model served
  std::uint64_t seed = 1;           // engine seed; also seeds the generated text and faults
};

// Owns one engine and answers requests for it. In-process callers (the router) use it as a
// Backend; the HttpServer calls handle() too. Thread contract: the io thread only.
class ReplicaServer final : public Backend {
 public:
  ReplicaServer(boost::asio::io_context& io, TimingProfile profile, ReplicaOptions options);
  ~ReplicaServer() override;

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  void reset_prefix_cache() override;
  // Cuts every open request (their clients see a reset), empties the engine, zeroes metrics.
  void restart() override;
  bool set_prefix_caching(bool enabled) override {
    engine_.set_prefix_caching(enabled);
    return true;
  }
  std::optional<bool> prefix_caching() const override { return engine_.prefix_caching(); }
  bool available() const override { return !faults_.down; }
  bool set_faults(const FaultOptions& faults) override;
  FaultOptions faults() const override { return faults_; }

  // Told when `down` flips, so the fleet can close or reopen this replica's port.
  void set_down_listener(std::function<void(bool down)> listener) {
    down_listener_ = std::move(listener);
  }
  void set_kv_event_listener(KvEventListener listener) {
    engine_.set_kv_event_listener(std::move(listener));
  }

  EngineMetrics metrics() const { return engine_.metrics(); }
  const TimingProfile& profile() const { return engine_.profile(); }

 private:
  struct Prepared;  // a parsed, validated request ready for the engine
  void completions(ApiKind kind, const HttpRequest& request, std::shared_ptr<Exchange> exchange);
  bool inject_error(Exchange& exchange, const HttpHeaders& headers);
  void start(std::shared_ptr<Prepared> prepared, std::shared_ptr<Exchange> exchange);
  bool draw(double probability);

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
};

}  // namespace kvsweep::sim
