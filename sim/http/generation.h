// One completion request in flight on a replica: its choices, SSE or JSON output, latencies.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "sim/http/http_exchange.h"
#include "sim/http/latency_histogram.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {

// One HTTP request (chat, or completions with one or more prompts: one choice each) from
// submission to its last byte. Each choice is one engine request; tokens are written as the
// engine's updates arrive, in vLLM's chunk shapes. Thread contract: the io thread only.
class Generation {
 public:
  using Clock = std::chrono::steady_clock;

  struct Options {
    ApiKind kind = ApiKind::kChat;
    CompletionId id;
    bool stream = false;
    bool include_usage = false;
    bool continuous_usage = false;
    HttpHeaders headers;        // sent with the reply (x-kvsweep-replica)
    int cut_after_tokens = -1;  // >= 0: sever the connection after that many tokens (a fault)
  };

  // `latencies` must outlive the generation or be replaced by a fresh object through rebind
  // (a replica restart); it is owned by the replica.
  Generation(Options options, std::shared_ptr<Exchange> exchange, LatencyHistograms* latencies);

  // Adds a choice whose tokens are generated_piece(piece_seed, i); returns its index.
  int add_choice(std::uint64_t engine_id, std::uint64_t piece_seed);
  // Starts the SSE stream (streaming only); call after the choices are added.
  void begin();
  // An engine update for choice `index`.
  void on_update(int index, const TokenUpdate& update);

  const std::vector<std::uint64_t>& engine_ids() const { return engine_ids_; }
  bool done() const { return remaining_ == 0; }
  void rebind(LatencyHistograms* latencies) { latencies_ = latencies; }

 private:
  struct Choice {
    std::uint64_t piece_seed = 0;
    std::string text;
    std::string finish_reason;
    int prompt_tokens = 0;
    int cached_tokens = 0;
    int output_tokens = 0;
    Clock::time_point last_token;
    bool finished = false;
  };
  Usage usage() const;

  Options options_;
  std::shared_ptr<Exchange> exchange_;
  LatencyHistograms* latencies_;
  std::vector<Choice> choices_;
  std::vector<std::uint64_t> engine_ids_;
  Clock::time_point arrival_ = Clock::now();
  int remaining_ = 0;
  int tokens_sent_ = 0;
};

}  // namespace kvsweep::sim
