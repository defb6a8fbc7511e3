// libFuzzer target: the Prometheus text exposition parser (what /metrics scrapes read).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/prometheus_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto samples = kvsweep::parse_prometheus_text(text);
  (void)kvsweep::sum_metric(samples, "vllm:prefix_cache_hits_total");
  return 0;
}
