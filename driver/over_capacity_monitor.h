// OverCapacityMonitor: the live check behind LoadOptions::stop_when_over_capacity.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/trend.h"

namespace kvsweep::driver {

// Fed each measured successful request's send time and TTFT as it completes (run thread
// only). Every kCheckPeriodS once the measured phase has run kMinElapsedS, it judges the TTFT
// of requests sent after the first kRampFraction of the phase so far (the ramp-up) with the
// over-capacity rule (common/trend.h judge_rise); the same rule reports apply to the stored
// cell over its steady window.
class OverCapacityMonitor {
 public:
  static constexpr double kCheckPeriodS = 2;
  static constexpr double kMinElapsedS = 10;
  static constexpr double kRampFraction = 0.2;

  explicit OverCapacityMonitor(TrendRule rule = {}) : rule_(rule) {}

  void add(double sent_s, double ttft_ms) { points_.push_back({sent_s, ttft_ms}); }

  // nullopt while the run looks steady (or it is too early to tell); else why it is over
  // capacity: "TTFT rises 180 ms per second through the cell (Mann-Kendall p = 1e-05); its mean
  // depends on the cell's length".
  std::optional<std::string> check(double now_s, double measured_start_s);

 private:
  TrendRule rule_;
  std::vector<TrendPoint> points_;
  double next_check_s_ = 0;
};

}  // namespace kvsweep::driver
