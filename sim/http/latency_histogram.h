// Prometheus-style cumulative histograms of a replica's request latencies (TTFT, ITL, E2E).
#pragma once

#include <cstdint>
#include <vector>

namespace kvsweep::sim {

// Fixed upper bounds (le), counts per bucket, sum and count: what a Prometheus histogram
// exposes. Invariant: counts_.size() == bounds_.size() + 1 (the last is +Inf).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
  const std::vector<double>& upper_bounds() const { return bounds_; }
  // Cumulative count of observations <= upper_bounds()[i]; index size() is +Inf (= count()).
  std::uint64_t cumulative(std::size_t i) const;
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

// vLLM's three latency histograms, with vLLM's own bucket bounds (vllm/v1/metrics/loggers.py)
// so dashboards built for vLLM read the sim unchanged.
struct LatencyHistograms {
  LatencyHistograms();
  Histogram ttft_s;  // vllm:time_to_first_token_seconds
  Histogram itl_s;   // vllm:inter_token_latency_seconds (one sample per gap between tokens)
  Histogram e2e_s;   // vllm:e2e_request_latency_seconds
};

}  // namespace kvsweep::sim
