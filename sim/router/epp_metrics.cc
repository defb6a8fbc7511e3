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

void EppMetrics::observe(double decision_s, std::span<const PrefixLookup> lookups) {
  scheduler_e2e_s_.observe(decision_s);
  for (const PrefixLookup& lookup : lookups) {
    // As the prefix plugin's PreRequest records: RecordPrefixCacheMatch(matched * blockSize,
    // total * blockSize), the ratio only when the request has a block.
    hit_bytes_.observe(static_cast<double>(lookup.matched_blocks) * lookup.block_chars);
    if (lookup.request_blocks > 0) {
      hit_ratio_.observe(static_cast<double>(lookup.matched_blocks) /
                         static_cast<double>(lookup.request_blocks));
    }
  }
}

std::string EppMetrics::text(std::size_t index_entries) const {
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
  write_family(os, "inference_extension_prefix_indexer_size", "gauge",
               "Size of the prefix indexer.");
  os << "inference_extension_prefix_indexer_size " << index_entries << '\n';
  return os.str();
}

}  // namespace kvsweep::sim
