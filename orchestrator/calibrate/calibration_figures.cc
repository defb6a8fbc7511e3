#include "orchestrator/calibrate/calibration_figures.h"

#include <cmath>

namespace kvsweep::orchestrator {
namespace {

std::optional<double> positive(double value) {
  if (!(value > 0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

std::string figure_name(Figure f) {
  switch (f) {
    case Figure::kTtftMean:
      return "TTFT mean";
    case Figure::kTtftP50:
      return "TTFT p50";
    case Figure::kTtftP90:
      return "TTFT p90";
    case Figure::kItlMean:
      return "ITL mean";
    case Figure::kItlP50:
      return "ITL p50";
    case Figure::kItlP90:
      return "ITL p90";
    case Figure::kOutputTokS:
      return "output tok/s";
  }
  return "?";
}

CalibrationFigures figures_of(const figures::CellMetrics& m) {
  CalibrationFigures out;
  out.ok = m.ok;
  out.max_in_flight = m.max_concurrent_requests;
  out.kv_hit = m.kv_hit_rate_server;
  if (m.ok == 0) return out;
  out[Figure::kTtftMean] = positive(m.ttft_ms.mean);
  out[Figure::kTtftP50] = positive(m.ttft_ms.median);
  out[Figure::kTtftP90] = positive(m.ttft_ms.p90);
  if (m.itl_ms.count > 0) {
    out[Figure::kItlMean] = positive(m.itl_ms.mean);
    out[Figure::kItlP50] = positive(m.itl_ms.median);
    out[Figure::kItlP90] = positive(m.itl_ms.p90);
  }
  out[Figure::kOutputTokS] = positive(m.output_throughput);
  return out;
}

std::optional<double> log_error(const CalibrationFigures& predicted,
                                const CalibrationFigures& measured, Figure f) {
  const auto& p = predicted[f];
  const auto& m = measured[f];
  if (!p || !m) return std::nullopt;
  return std::log(*p / *m);
}

}  // namespace kvsweep::orchestrator
