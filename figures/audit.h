// `kvsweep audit`: the achieved-load analysis of an outside result, from what its file holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/validity_rules.h"
#include "figures/outside_result.h"

namespace kvsweep::figures {

struct AuditedRun {
  OutsideResult result;
  std::optional<double> mean_output_tokens;
  // Little's law: requests in flight = req/s x (mean TTFT + mean TPOT x (mean output - 1)).
  std::optional<double> little_in_flight;
  std::optional<double> cap_fraction;   // little_in_flight / max_concurrency
  std::optional<double> rate_fraction;  // achieved req/s / the rate asked for (finite rates)
  // What the schedule and the cap would have kept in flight had every request been sent when
  // due, with completions at the measured rate: the fluid model of docs/metrics.md ("Audit").
  std::optional<double> expected_in_flight;
  bool short_of_concurrency = false;
  std::string verdict;                     // "short of its concurrency", "valid", "not judged"
  std::vector<std::string> reasons;        // the figures behind the verdict
  std::vector<std::string> not_evaluated;  // rules the file cannot support, and why
};

AuditedRun audit_result(const OutsideResult& result, const ValidityRules& rules = {});

// The mean number in flight, over the run, of a fluid queue: `requests` arrive at `rate`
// (infinity: all at once), at most `cap` (0: none) are in flight, and the queue completes
// `throughput` per second while it holds any. The run lasts until the last completes. Closed
// form (the waiting requests rise linearly, then fall), so any input costs the same; 0 when
// arrivals are no faster than completions (nothing waits in a fluid queue).
double fluid_in_flight(std::int64_t requests, double rate, int cap, double throughput);

}  // namespace kvsweep::figures
