// Parser for the Prometheus text exposition format (what vLLM and our sim serve at /metrics).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep {

struct PrometheusSample {
  std::string name;                           // e.g. "vllm:prefix_cache_hits_total"
  std::map<std::string, std::string> labels;  // e.g. {"model_name": "m"}
  double value = 0;
};

// Parses every sample line; comments (# HELP, # TYPE) and blank lines are skipped, and so is
// a malformed line (a scrape must not fail because one exporter line is odd). Timestamps after
// the value are ignored.
std::vector<PrometheusSample> parse_prometheus_text(std::string_view text);

// Sum of every sample called `name`, whatever its labels; nullopt when no sample has the name.
std::optional<double> sum_metric(const std::vector<PrometheusSample>& samples,
                                 std::string_view name);

}  // namespace kvsweep
