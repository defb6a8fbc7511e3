// Where each routed request's prompt could have hit the prefix cache: on the replica chosen,
// on the replica holding most of it, or nowhere any more because its blocks were evicted.
// `kvsweep replay` splits a KV hit rate with it (docs/predict.md, "Replay").
#pragma once

#include <cstdint>
#include <span>
#include <unordered_set>
#include <vector>

#include "sim/engine/tokenizer.h"
#include "sim/router/kv_index.h"

namespace kvsweep::predict {

// Counts of full prompt blocks over routed requests. For each request: its leading blocks
// cached on the replica chosen (what it hits), on the replica that held the most of them (what
// routing could have had), and computed anywhere in the fleet before it since the caches were
// last reset (what it could have hit had nothing been evicted). chosen <= best <= computed.
struct RoutingOpportunity {
  std::int64_t requests = 0;
  std::int64_t prompt_blocks = 0;
  std::int64_t chosen_cached = 0;
  std::int64_t best_cached = 0;
  std::int64_t computed_before = 0;

  RoutingOpportunity operator-(const RoutingOpportunity& earlier) const {
    return {requests - earlier.requests, prompt_blocks - earlier.prompt_blocks,
            chosen_cached - earlier.chosen_cached, best_cached - earlier.best_cached,
            computed_before - earlier.computed_before};
  }
};

// Thread contract: the fleet's thread only.
class RoutingOpportunityTracker {
 public:
  // A request whose prompt is `prompt` was routed to `chosen`; `index` is the router's view of
  // every replica's cache (fed by the replicas' KV events) at that instant.
  void note(std::span<const sim::TokenId> prompt, int block_size, int chosen,
            const sim::KvIndex& index, sim::KvIndex::Clock::time_point now);
  // Every cache was reset (a cold cell, a restart): what was computed before is gone by policy,
  // not by eviction.
  void forget_computed() { computed_.clear(); }
  const RoutingOpportunity& totals() const { return totals_; }

 private:
  RoutingOpportunity totals_;
  std::unordered_set<std::uint64_t> computed_;
  std::vector<std::uint64_t> hashes_;  // scratch, kept to reuse its storage
  std::vector<int> overlaps_;
};

}  // namespace kvsweep::predict
