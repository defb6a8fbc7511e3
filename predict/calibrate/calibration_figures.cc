#include "predict/calibrate/calibration_figures.h"

#include <cmath>

namespace kvsweep::predict {

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

std::optional<double> log_error(const CalibrationFigures& predicted,
                                const CalibrationFigures& measured, Figure f) {
  const auto& p = predicted[f];
  const auto& m = measured[f];
  if (!p || !m) return std::nullopt;
  return std::log(*p / *m);
}

}  // namespace kvsweep::predict
