// `kvsweep audit`: the achieved-load analysis of an outside result.
#include "figures/audit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "figures/validity.h"

namespace kvsweep::figures {
namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char text[300];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

namespace {

// The integral of min(b, cap) over a segment along which b moves linearly from b0 to b1.
double capped_area(double b0, double b1, double seconds, double cap) {
  if (seconds <= 0) return 0;
  if (b0 <= cap && b1 <= cap) return (b0 + b1) / 2 * seconds;
  if (b0 >= cap && b1 >= cap) return cap * seconds;
  // The segment crosses the cap at t_cross: below it on one side, at it on the other.
  const double t_cross = (cap - b0) / (b1 - b0) * seconds;
  const double below = b0 < cap ? (b0 + cap) / 2 * t_cross : (cap + b1) / 2 * (seconds - t_cross);
  const double at_cap = b0 < cap ? cap * (seconds - t_cross) : cap * t_cross;
  return below + at_cap;
}

}  // namespace

double fluid_in_flight(std::int64_t requests, double rate, int cap, double throughput) {
  if (requests <= 0 || !(throughput > 0) || !(rate > 0)) return 0;
  const double n = static_cast<double>(requests);
  const double limit = cap > 0 ? static_cast<double>(cap) : n;
  // Arrivals no faster than completions leave nothing waiting in a fluid queue.
  if (!std::isinf(rate) && rate <= throughput) return 0;
  // Requests due but not done rise at (rate - throughput) while arrivals last (span), then
  // fall at throughput until none is left (n / throughput). In flight: that, up to the cap.
  const double span = std::isinf(rate) ? 0 : n / rate;
  const double peak = n - throughput * span;
  const double end = n / throughput;
  const double area = capped_area(0, peak, span, limit) + capped_area(peak, 0, end - span, limit);
  return area / end;
}

AuditedRun audit_result(const OutsideResult& r, const ValidityRules& rules) {
  AuditedRun a;
  a.result = r;
  a.not_evaluated.push_back(
      "client-bound: the file holds no driver CPU, send delay or schedule lag");
  a.not_evaluated.push_back(
      "over capacity (backlog, in flight, completions, servers' waiting queue): the file holds "
      "no per-request times and no /metrics samples to follow a queue through the run");
  if (r.total_output_tokens && r.completed > 0) {
    a.mean_output_tokens = static_cast<double>(*r.total_output_tokens) / r.completed;
  }
  if (r.mean_ttft_ms && r.mean_tpot_ms && a.mean_output_tokens) {
    LittleInputs in;
    in.request_throughput = r.request_throughput;
    in.ttft_mean_ms = *r.mean_ttft_ms;
    in.tpot_mean_ms = *r.mean_tpot_ms;
    in.mean_output_tokens = *a.mean_output_tokens;
    a.little_in_flight = little_in_flight(in);
  }
  if (a.little_in_flight && r.max_concurrency && *r.max_concurrency > 0) {
    a.cap_fraction = *a.little_in_flight / *r.max_concurrency;
  }
  if (r.request_rate && std::isfinite(*r.request_rate) && *r.request_rate > 0) {
    a.rate_fraction = r.request_throughput / *r.request_rate;
  }
  if (!a.little_in_flight) {
    a.verdict = "not judged";
    a.not_evaluated.push_back(
        "short of its concurrency: Little's law needs mean TTFT, mean TPOT and the generated "
        "token count");
    return a;
  }
  if (!r.request_rate) {
    a.verdict = "not judged";
    a.not_evaluated.push_back(
        "short of its concurrency: no request rate in the file (give --request-rate)");
    return a;
  }
  const std::int64_t requests = r.num_prompts.value_or(r.completed);
  a.expected_in_flight = fluid_in_flight(requests, *r.request_rate, r.max_concurrency.value_or(0),
                                         r.request_throughput);
  a.verdict = "valid";
  if (*a.little_in_flight < rules.audit_min_in_flight_fraction * *a.expected_in_flight) {
    a.short_of_concurrency = true;
    a.verdict = "short of its concurrency";
    a.reasons.push_back(
        format("%.0f in flight by Little's law where the schedule and cap would have kept %.0f "
               "(%.0f%%): requests were due and not in flight",
               *a.little_in_flight, *a.expected_in_flight,
               *a.little_in_flight / *a.expected_in_flight * 100));
  }
  return a;
}

}  // namespace kvsweep::figures
