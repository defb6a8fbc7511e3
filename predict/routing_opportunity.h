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

// Counts of full prompt blocks over routed requests, at each request's routing decision: its
// leading blocks cached on the replica chosen (what it hits), on the replica that held the most
// of them (what routing could have had), and stored anywhere in the fleet before (KV stored
// events since the caches were last reset: what it could have hit had nothing been evicted).
// chosen <= best <= computed. A block still being computed for an earlier request when this
// one arrives is not yet stored: it counts in none of them (the engine may still hit it if the
// request waits in the queue, so a hit share below the engine's KV hit rate points at identical
// prompts arriving together).
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
  // A replica's engine stored (made hittable) a block: the fleet has computed it.
  void on_stored(std::uint64_t block_hash) { computed_.insert(block_hash); }
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
