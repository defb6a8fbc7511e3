// One simulated vLLM replica's HTTP surface: OpenAI chat completions, models, health, metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "sim/backend.h"
#include "sim/engine.h"
#include "sim/http_exchange.h"

namespace kvsweep::sim {

struct ReplicaOptions {
  int index = 0;                    // sent back as header x-kvsweep-replica
  std::string model = "sim-model";  // the only model served
  std::uint64_t seed = 1;           // engine seed; also seeds the generated text
};

// Owns one engine and answers requests for it. In-process callers (the router) use it as a
// Backend; the HttpServer calls handle() too. Thread contract: the io thread only.
class ReplicaServer final : public Backend {
 public:
  ReplicaServer(boost::asio::io_context& io, TimingProfile profile, ReplicaOptions options);
  ~ReplicaServer() override;

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  void reset_prefix_cache() override;

  EngineMetrics metrics() const { return engine_.metrics(); }

 private:
  void chat_completions(const HttpRequest& request, std::shared_ptr<Exchange> exchange);

  Engine engine_;
  ReplicaOptions options_;
  std::uint64_t next_request_id_ = 1;
  std::int64_t started_unix_s_ = 0;
};

}  // namespace kvsweep::sim
