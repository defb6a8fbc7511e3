// OverCapacityMonitor: the live check behind LoadOptions::stop_when_over_capacity.
#include "driver/over_capacity_monitor.h"

namespace kvsweep::driver {

std::optional<std::string> OverCapacityMonitor::check(double now_s, double measured_start_s) {
  if (measured_start_s < 0 || now_s < next_check_s_) return std::nullopt;
  next_check_s_ = now_s + kCheckPeriodS;
  const double elapsed_s = now_s - measured_start_s;
  if (elapsed_s < kMinElapsedS) return std::nullopt;
  const RiseJudgement judgement =
      judge_rise(points_, measured_start_s + kRampFraction * elapsed_s, now_s, rule_);
  if (!judgement.rising) return std::nullopt;
  return rising_text(judgement, "TTFT");
}

}  // namespace kvsweep::driver
