// A cell's achieved-load figures and verdict as JSON.
#include "figures/validity_json.h"

#include <cmath>

namespace kvsweep::figures {
namespace {

nlohmann::ordered_json validity_number(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

nlohmann::ordered_json trend_json(const RiseJudgement& j) {
  if (!j.evaluated) return nullptr;
  return {{"points", j.points},
          {"rising", j.rising},
          {"p_upward", j.test.p_upward},
          {"slope_per_s", j.test.slope_per_s},
          {"median", j.median}};
}

nlohmann::ordered_json growth_json(const GrowthJudgement& j) {
  if (!j.evaluated) return nullptr;
  return {{"points", j.points},
          {"rising", j.rising},
          {"p_upward", j.test.p_upward},
          {"from", j.from},
          {"to", j.to},
          {"growth", j.growth},
          {"min_growth", j.min_growth},
          {"median", j.median}};
}

}  // namespace

nlohmann::ordered_json validity_json(const CellValidity& v) {
  nlohmann::ordered_json j;
  j["verdict"] = v.load_known ? nlohmann::ordered_json(verdict_name(v.verdict))
                              : nlohmann::ordered_json(nullptr);
  j["reasons"] = v.reasons;
  j["not_evaluated"] = v.not_evaluated;
  j["open_loop"] = v.open_loop;
  j["request_rate"] = std::isinf(v.request_rate) ? nlohmann::ordered_json("inf")
                                                 : nlohmann::ordered_json(v.request_rate);
  j["cap"] = v.cap;
  j["in_flight_mean"] = v.in_flight_mean;
  j["in_flight_fraction"] = validity_number(v.in_flight_fraction);
  j["little_in_flight"] = validity_number(v.little_in_flight);
  j["send_rate"] = validity_number(v.send_rate);
  j["scheduled_rate"] = validity_number(v.scheduled_rate);
  j["backlog_s"] = v.backlog_s;
  j["in_flight_while_backlogged"] = validity_number(v.in_flight_while_backlogged);
  if (v.steady) {
    const SteadyFigures& s = *v.steady;
    j["steady"] = {{"start_s", s.start_s},
                   {"end_s", s.end_s},
                   {"requests", s.requests},
                   {"request_throughput", s.request_throughput},
                   {"output_throughput", s.output_throughput},
                   {"mean_ttft_ms", s.ttft_ms.mean},
                   {"p99_ttft_ms", s.ttft_ms.p99},
                   {"mean_tpot_ms", s.tpot_ms.mean},
                   {"in_flight_mean", s.in_flight_mean}};
  } else {
    j["steady"] = nullptr;
  }
  j["ttft_trend"] = trend_json(v.ttft_trend);
  j["backlog_trend"] = trend_json(v.backlog_trend);
  j["in_flight_trend"] = growth_json(v.in_flight_trend);
  j["window_arrivals"] = v.window_arrivals;
  j["window_completions"] = v.window_completions;
  j["completions_short"] = v.completions_short;
  j["queue_scrapes"] = v.queue_scrapes;
  j["queue_trend"] = growth_json(v.queue_trend);
  j["running_trend"] = growth_json(v.running_trend);
  j["in_flight_in_servers"] = v.in_flight_in_servers;
  j["requests"] = v.requests;
  j["failed"] = v.failed;
  j["main_failure"] = v.main_failure;
  j["notes"] = v.notes;
  j["driver"] = {{"measured", v.driver_measured},
                 {"cpu_utilisation", validity_number(v.driver_cpu_utilisation)},
                 {"send_delay_p99_ms", validity_number(v.send_delay_p99_ms)},
                 {"send_shortfall", validity_number(v.send_shortfall)}};
  j["stopped_over_capacity"] = v.stopped_over_capacity;
  return j;
}

ValidityRules validity_rules_of(const store::ExperimentRow& experiment) {
  return experiment.setup.validity_rules();
}

}  // namespace kvsweep::figures
