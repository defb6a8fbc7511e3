// llm-d's endpoint picker's own /metrics, as kvsweep's router publishes them (strategy epp).
#include "sim/router/epp_metrics.h"

#include <sstream>

#include "sim/http/metrics_exposition.h"

namespace kvsweep::sim {

EppMetrics::EppMetrics()
    // The pinned release's bucket bounds (metrics.go).
    : scheduler_e2e_s_({0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1}),
      hit_ratio_({0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}),
      hit_bytes_({0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}) {}

void EppMetrics::restart(const std::shared_ptr<const EppConfig>& config, int replicas) {
  mirrors_.clear();
  replicas_ = replicas;
  if (!config) return;
  for (const EppScorer& s : config->scorers) {
    if (s.kind != EppScorerKind::kPrefixCache) continue;
    mirrors_.push_back(Mirror{s.hash_block_size, s.max_prefix_blocks,
                              EppPrefixIndex(replicas, s.lru_capacity_per_server)});
  }
}

void EppMetrics::on_pick(std::string_view prompt_text, int chosen,
                         std::optional<double> decision_s) {
  if (decision_s) scheduler_e2e_s_.observe(*decision_s);
  for (Mirror& m : mirrors_) {
    // As EppStrategy::pick hashes (no model name) and as the plugin's PreRequest records:
    // RecordPrefixCacheMatch(matched * blockSize, total * blockSize), the ratio only when the
    // request has a block.
    const std::vector<std::uint64_t> hashes =
        epp_prefix_hashes({}, prompt_text, m.hash_block_size, m.max_prefix_blocks);
    if (decision_s) {
      const int matched = m.index.match(hashes)[static_cast<std::size_t>(chosen)];
      hit_bytes_.observe(static_cast<double>(matched) * m.hash_block_size);
      if (!hashes.empty()) {
        hit_ratio_.observe(static_cast<double>(matched) / static_cast<double>(hashes.size()));
      }
    }
    m.index.add(hashes, chosen);
  }
}

std::string EppMetrics::text() const {
  std::ostringstream os;
  write_histogram(os, "inference_extension_scheduler_e2e_duration_seconds",
                  "End-to-end scheduling latency distribution in seconds (kvsweep: the router's "
                  "whole decision, parse to pick).",
                  "", scheduler_e2e_s_);
  write_histogram(os, "inference_extension_prefix_indexer_hit_ratio",
                  "Ratio of prefix length matched to total prefix length in the cache lookup.", "",
                  hit_ratio_);
  write_histogram(os, "inference_extension_prefix_indexer_hit_bytes",
                  "Length of the prefix match in number of bytes in the cache lookup.", "",
                  hit_bytes_);
  std::size_t entries = 0;
  if (!mirrors_.empty()) {
    for (int r = 0; r < replicas_; ++r) entries += mirrors_.front().index.size(r);
  }
  write_family(os, "inference_extension_prefix_indexer_size", "gauge",
               "Size of the prefix indexer.");
  os << "inference_extension_prefix_indexer_size " << entries << '\n';
  return os.str();
}

}  // namespace kvsweep::sim
