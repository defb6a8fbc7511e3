// The routing decision without HTTP: a strategy, the loads and KV index it reads, their books.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/block_pool.h"
#include "sim/engine/tokenizer.h"
#include "sim/router/kv_index.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

struct RouteDeciderOptions {
  std::string strategy = "round-robin";  // a name from strategy_names()
  std::uint64_t seed = 1;                // seeds "random" and kv-aware sampling
  StrategyParams params;                 // prefix-hash (KubeAI) and kv-aware (Dynamo) knobs
  int block_size = 16;                   // request blocks use the replicas' block size
  // true: the KV index is fed by on_kv_event (the sim's replicas). false: no events exist (real
  // upstreams); every routed request's blocks count as cached on its replica for approx_ttl.
  bool kv_events = true;
  std::chrono::seconds approx_ttl{120};  // Dynamo's approximate-mode TTL
};

// What the decision sees of one request: no HTTP, no bytes of a wire format.
struct RouteRequest {
  // KubeAI's key source: the first user message (chat) or the first prompt (completions).
  std::string_view prefix_key{};
  std::string_view session_id{};  // the "session" strategy's affinity key; empty when absent
  // The prompt's tokens as the replica will see them. Read only when needs_tokens(): a caller
  // may leave it empty otherwise (the request then counts no blocks in the loads).
  std::span<const TokenId> prompt{};
  // The text the EPP hashes (append_epp_chat_message). Read only when needs_prompt_text().
  std::string_view prompt_text{};
};

// One request's routing, from pick() to on_finished(): what it added to the chosen replica's
// loads, so that exactly that is taken away again.
struct RouteDecision {
  int replica = 0;
  bool hashed = false;              // the prompt was hashed: overlap_blocks is the KV index's word
  int overlap_blocks = 0;           // leading prompt blocks the index says `replica` holds
  std::int64_t blocks = 0;          // prompt blocks: active on the replica until the request ends
  std::int64_t prefill_tokens = 0;  // prompt tokens not cached there: pending until first token
  bool prefill_pending = true;      // false once on_first_token() released them
  std::vector<std::uint64_t> block_hashes;  // of the prompt's full blocks (when hashed)
};

// Picks a replica per request by the current strategy from the loads it keeps (in flight,
// active blocks, pending prefill: KubeAI's and Dynamo's counters), the KV index and a mask of
// replicas that may be chosen; the HTTP Router (router.h) and a virtual-time driver both use
// it. No clock of its own: times come in as arguments (the approximate index's TTL).
// Thread contract: one thread only (the router's io thread); not copyable.
class RouteDecider {
 public:
  using Clock = KvIndex::Clock;

  // Throws std::invalid_argument for replicas < 1 or an unknown strategy.
  RouteDecider(int replicas, RouteDeciderOptions options);
  RouteDecider(const RouteDecider&) = delete;
  RouteDecider& operator=(const RouteDecider&) = delete;

  // false (and no change) for an unknown name, or "epp" without params.epp. The strategy starts
  // with empty state (session stickiness, round-robin cursor).
  bool set_strategy(const std::string& name, const StrategyParams& params);
  const std::string& strategy() const { return options_.strategy; }
  // The strategy's own prefix indexes' word on its last pick, and their size (epp; empty and
  // 0 for the others): RoutingStrategy::last_prefix_lookups, prefix_index_entries.
  std::span<const PrefixLookup> last_prefix_lookups() const {
    return strategy_->last_prefix_lookups();
  }
  std::size_t prefix_index_entries() const { return strategy_->prefix_index_entries(); }
  // Whether pick() reads RouteRequest::prompt: the strategy needs blocks, or the approximate
  // index (no KV events) learns from every routed request so that a switch to kv-aware starts
  // from what was routed before.
  bool needs_tokens() const;
  // Whether pick() reads RouteRequest::prompt_text (the EPP's prefix scorer).
  bool needs_prompt_text() const { return strategy_->needs_prompt_text(); }
  // Whether the strategy reads the replicas' scraped loads: the caller then keeps them fresh
  // with set_server_load(), as the EPP scrapes every model server's /metrics.
  bool needs_server_loads() const { return strategy_->needs_server_loads(); }
  void set_server_load(int replica, ServerLoad load) {
    server_loads_[static_cast<std::size_t>(replica)] = load;
  }
  const std::vector<ServerLoad>& server_loads() const { return server_loads_; }

  // The replica for `request`. `routable` has one entry per replica, 1 when it may be chosen
  // (health checks); empty: every replica may be. Changes only the strategy's own state: call
  // on_routed() once the request is really sent.
  RouteDecision pick(const RouteRequest& request, std::span<const std::uint8_t> routable,
                     Clock::time_point now = Clock::now());
  // The request went to decision.replica: counted in flight and in the decisions, its blocks
  // active and its prefill pending; the approximate index records its blocks until now + TTL.
  void on_routed(const RouteDecision& decision, Clock::time_point now = Clock::now());
  // Its first token came back: the prefill it added is done (Dynamo frees it then). Once.
  void on_first_token(RouteDecision& decision);
  // It ended, however it ended (finished, error, client gone): everything it added is taken
  // away, pending prefill included.
  void on_finished(RouteDecision& decision);

  // A KV stored/removed event of replica `replica`'s engine.
  void on_kv_event(int replica, const KvEvent& event) { index_.apply(replica, event); }
  // Replica `replica` reset its prefix cache: the approximate index forgets what it assumed
  // there (an event-fed index hears the removals from the engine itself).
  void on_prefix_cache_reset(int replica);
  // Every replica was restarted: the index empties and the strategy starts afresh.
  void restart();

  int replicas() const { return static_cast<int>(in_flight_.size()); }
  const std::vector<int>& in_flight() const { return in_flight_; }
  const std::vector<std::int64_t>& active_blocks() const { return active_blocks_; }
  const std::vector<std::int64_t>& prefill_tokens() const { return prefill_tokens_; }
  const KvIndex& index() const { return index_; }
  // Strategy name -> requests routed to each replica while it was the strategy.
  const std::map<std::string, std::vector<std::uint64_t>>& decisions() const { return decisions_; }

 private:
  RouteDeciderOptions options_;
  std::unique_ptr<RoutingStrategy> strategy_;
  std::vector<int> in_flight_;
  std::vector<std::int64_t> active_blocks_;
  std::vector<std::int64_t> prefill_tokens_;
  std::vector<ServerLoad> server_loads_;
  KvIndex index_;
  std::map<std::string, std::vector<std::uint64_t>> decisions_;
};

}  // namespace kvsweep::sim
