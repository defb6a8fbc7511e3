// The figures a calibration compares, per cell: what a run measured and what a replay of it in
// virtual time predicts (orchestrator/calibrate/stored_run.h reads both from cell summaries).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kvsweep::predict {

// TTFT and ITL distributions (mean, median, p90) and output throughput: what the step-time
// model decides. The server's KV hit rate is shown beside them, never fitted: the timing
// coefficients do not move it.
enum class Figure { kTtftMean, kTtftP50, kTtftP90, kItlMean, kItlP50, kItlP90, kOutputTokS };
inline constexpr std::size_t kFigureCount = 7;

struct CalibrationFigures {
  // A figure the cell did not have (no ITL for one-token replies, nothing ok): nullopt.
  std::array<std::optional<double>, kFigureCount> values;
  std::optional<double>& operator[](Figure f) { return values[static_cast<std::size_t>(f)]; }
  const std::optional<double>& operator[](Figure f) const {
    return values[static_cast<std::size_t>(f)];
  }
  std::optional<double> kv_hit;  // server-side, where /metrics were scraped
  int max_in_flight = 0;         // the most requests in flight at once
  std::int64_t ok = 0;
};

// The servers' KV pool, as their /metrics showed it (vllm:cache_config_info).
struct ServerKvPool {
  int num_gpu_blocks = 0;
  int block_size = 0;
};

std::string figure_name(Figure f);  // "TTFT p50", "output tok/s"

// log(predicted / measured) of one figure; nullopt when either side is missing or not > 0.
std::optional<double> log_error(const CalibrationFigures& predicted,
                                const CalibrationFigures& measured, Figure f);

}  // namespace kvsweep::predict
