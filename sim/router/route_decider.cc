// The routing decision without HTTP: a strategy, the loads and KV index it reads, their books.
#include "sim/router/route_decider.h"

#include <algorithm>
#include <stdexcept>

#include "common/error_kinds.h"
#include "sim/engine/block_hash.h"
#include "sim/router/strategy_factory.h"

namespace kvsweep::sim {

RouteDecider::RouteDecider(int replicas, RouteDeciderOptions options)
    : options_(std::move(options)),
      in_flight_(static_cast<std::size_t>(std::max(replicas, 0)), 0),
      active_blocks_(in_flight_.size(), 0),
      prefill_tokens_(in_flight_.size(), 0),
      server_loads_(in_flight_.size()),
      index_(std::max(replicas, 0)) {
  if (replicas < 1) throw UsageError("replicas: the router needs at least one");
  if (options_.strategy == "epp" && !options_.params.epp) {
    throw UsageError("strategy: epp needs an EndpointPickerConfig");
  }
  if (!set_strategy(options_.strategy, options_.params)) {
    throw UsageError("strategy: " + unknown_strategy_message(options_.strategy));
  }
}

bool RouteDecider::set_strategy(const std::string& name, const StrategyParams& params) {
  auto strategy = make_strategy(name, replicas(), options_.seed, params);
  if (!strategy) return false;
  strategy_ = std::move(strategy);
  options_.strategy = name;
  options_.params = params;
  return true;
}

bool RouteDecider::needs_tokens() const { return strategy_->needs_blocks() || !options_.kv_events; }

RouteDecision RouteDecider::pick(const RouteRequest& request,
                                 std::span<const std::uint8_t> routable, Clock::time_point now) {
  RouteDecision decision;
  std::vector<int> overlaps;
  const bool hashed = needs_tokens();
  const std::span<const TokenId> prompt = hashed ? request.prompt : std::span<const TokenId>{};
  if (hashed) {
    extend_block_hashes(prompt, options_.block_size, &decision.block_hashes);
    index_.overlaps(decision.block_hashes, &overlaps, now);
  }
  RouteQuery query{request.prefix_key, in_flight_, routable};
  query.session_id = request.session_id;
  query.overlap_blocks = overlaps;
  query.prompt_tokens = static_cast<int>(prompt.size());
  query.block_size = options_.block_size;
  query.active_blocks = active_blocks_;
  query.prefill_tokens = prefill_tokens_;
  query.index_sizes = index_.sizes();
  if (strategy_->needs_prompt_text()) query.prompt_text = request.prompt_text;
  query.server_loads = server_loads_;
  decision.replica = strategy_->pick(query);
  decision.hashed = hashed;
  const auto chosen = static_cast<std::size_t>(decision.replica);
  decision.overlap_blocks = overlaps.empty() ? 0 : overlaps[chosen];
  const std::int64_t block_size = options_.block_size;
  decision.blocks = (query.prompt_tokens + block_size - 1) / block_size;
  decision.prefill_tokens = std::max<std::int64_t>(
      0, query.prompt_tokens - std::int64_t{decision.overlap_blocks} * block_size);
  return decision;
}

void RouteDecider::on_routed(const RouteDecision& decision, Clock::time_point now) {
  const auto r = static_cast<std::size_t>(decision.replica);
  auto& counts = decisions_[options_.strategy];
  counts.resize(in_flight_.size());
  ++counts[r];
  ++in_flight_[r];
  active_blocks_[r] += decision.blocks;
  prefill_tokens_[r] += decision.prefill_pending ? decision.prefill_tokens : 0;
  if (!options_.kv_events && decision.hashed) {
    index_.record(decision.replica, decision.block_hashes, options_.approx_ttl, now);
  }
}

void RouteDecider::on_first_token(RouteDecision& decision) {
  if (!decision.prefill_pending) return;
  decision.prefill_pending = false;
  prefill_tokens_[static_cast<std::size_t>(decision.replica)] -= decision.prefill_tokens;
}

void RouteDecider::on_finished(RouteDecision& decision) {
  const auto r = static_cast<std::size_t>(decision.replica);
  --in_flight_[r];
  active_blocks_[r] -= decision.blocks;
  on_first_token(decision);
}

void RouteDecider::on_prefix_cache_reset(int replica) {
  if (!options_.kv_events) index_.clear(replica);
}

void RouteDecider::restart() {
  index_.clear();
  set_strategy(options_.strategy, options_.params);
}

}  // namespace kvsweep::sim
