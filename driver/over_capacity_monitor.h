// OverCapacityMonitor: the live check behind LoadOptions::stop_when_over_capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/trend.h"
#include "common/validity_rules.h"

namespace kvsweep::driver {

// Fed each measured open-loop request as it is sent (its arrival and send time) and as it
// ends (run thread only). Every kCheckPeriodS once the measured phase has run kMinElapsedS,
// it judges the requests sent after the first kRampFraction of the phase so far (the
// ramp-up) by the over-capacity rules (a) and (b) that reports apply to the stored cell over
// its steady window (docs/metrics.md, "Verdicts"): the backlog of due-but-unsent requests
// grows during the arrivals, or the requests in flight grow by Mann-Kendall and by at least
// max(10, 25% of their median). The backlog is the source's arrivals due and not yet sent,
// told after each dispatch.
class OverCapacityMonitor {
 public:
  static constexpr double kCheckPeriodS = 2;
  static constexpr double kMinElapsedS = 10;
  static constexpr double kRampFraction = 0.2;

  explicit OverCapacityMonitor(ValidityRules rules = {}) : rules_(rules) {}

  // Request `index` (any key, unique) was sent at sent_s.
  void sent(std::int64_t index, double sent_s);
  // At t_s, `waiting` arrivals were due and not sent (kept at most every kBacklogPeriodS).
  void backlog(double t_s, std::size_t waiting);
  static constexpr double kBacklogPeriodS = 0.01;
  // Request `index`, sent before, ended at ended_s (however it ended).
  void ended(std::int64_t index, double ended_s);

  // nullopt while the run looks steady (or it is too early to tell); else why it is over
  // capacity: "in flight grew from 12 to 160 over 8 s (Mann-Kendall p = 1e-05, +148 >= 10)".
  std::optional<std::string> check(double now_s, double measured_start_s);

 private:
  ValidityRules rules_;
  std::vector<TrendPoint> backlog_;
  std::vector<double> sent_s_;
  std::vector<double> ended_s_;  // infinity while in flight
  std::unordered_map<std::int64_t, std::size_t> position_;
  double next_check_s_ = 0;
};

}  // namespace kvsweep::driver
