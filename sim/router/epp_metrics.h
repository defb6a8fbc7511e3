// llm-d's endpoint picker's own /metrics, as kvsweep's router publishes them while its
// strategy is epp: scheduling latency and the prefix index's hit ratio, hit bytes and size.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "sim/http/latency_histogram.h"
#include "sim/router/routing_strategy.h"

namespace kvsweep::sim {

// The EPP's series under the pinned release's names (Gateway API Inference Extension v1.0.0,
// pkg/epp/metrics/metrics.go, with its bucket bounds), so a rehearsal's report reads them as it
// reads a real EPP's (docs/sim.md, "The EPP's own metrics"):
//   inference_extension_scheduler_e2e_duration_seconds  one per request: the router's decision
//   inference_extension_prefix_indexer_hit_ratio        per prefix scorer and pick: blocks the
//       chosen replica matched / blocks of the request (only when the request has a block)
//   inference_extension_prefix_indexer_hit_bytes        the same match in hashed characters
//   inference_extension_prefix_indexer_size             entries in the first prefix scorer's
//       index, every replica's LRU summed
// The lookups and the index size are EppStrategy's own (RoutingStrategy::last_prefix_lookups,
// prefix_index_entries), so the figures are the picker's word, not a copy of it. One process'
// counters: a rebuilt picker starts an empty index, the histograms keep counting. Not
// thread-safe: the router's lock guards it.
class EppMetrics {
 public:
  EppMetrics();

  // A request's first pick (not the pick again after a refused connect): the router's decision
  // took `decision_s`, and the picker's prefix indexes found `lookups` on the chosen replica.
  void observe(double decision_s, std::span<const PrefixLookup> lookups);
  // The four families above, Prometheus text, always all four: before a cell's first pick its
  // "before" scrape must find them, at 0 (a config without a prefix scorer keeps them at 0;
  // the real EPP would leave them out). `index_entries`: the picker's index size now.
  std::string text(std::size_t index_entries) const;

 private:
  Histogram scheduler_e2e_s_;
  Histogram hit_ratio_;
  Histogram hit_bytes_;
};

}  // namespace kvsweep::sim
