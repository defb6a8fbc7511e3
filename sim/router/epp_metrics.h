// llm-d's endpoint picker's own /metrics, as kvsweep's router publishes them while its
// strategy is epp: scheduling latency and the prefix index's hit ratio, hit bytes and size.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/http/latency_histogram.h"
#include "sim/router/epp_config.h"
#include "sim/router/epp_scheduler.h"

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
// The EPP's prefix indexes are EppStrategy's own and not visible from here, so each prefix
// scorer's index is mirrored: the same hashes added to the same replica after every pick, from
// an empty index whenever the strategy is rebuilt (restart()), which keeps both equal (a test
// checks it). Not thread-safe: the router's lock guards it.
class EppMetrics {
 public:
  EppMetrics();

  // The strategy was (re)built with `config` over `replicas` replicas: the mirrored indexes
  // start empty, as the strategy's do. The histograms keep counting: one process' counters.
  void restart(const std::shared_ptr<const EppConfig>& config, int replicas);
  // One pick of the strategy: the request's EPP text went to `chosen`. Every pick updates the
  // mirrors as the strategy updates its indexes; a request's first pick (decision_s given: not
  // the pick again after a refused connect) is also observed.
  void on_pick(std::string_view prompt_text, int chosen, std::optional<double> decision_s);
  // The four families above, Prometheus text, always all four: before a cell's first pick its
  // "before" scrape must find them, at 0 (a config without a prefix scorer keeps them at 0;
  // the real EPP would leave them out).
  std::string text() const;

 private:
  struct Mirror {
    int hash_block_size = 0;
    int max_prefix_blocks = 0;
    EppPrefixIndex index;
  };
  std::vector<Mirror> mirrors_;  // one per prefix scorer, in the scorers' order
  int replicas_ = 0;
  Histogram scheduler_e2e_s_;
  Histogram hit_ratio_;
  Histogram hit_bytes_;
};

}  // namespace kvsweep::sim
