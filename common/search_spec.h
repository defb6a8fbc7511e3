// A scenario's service-level objective, capacity search and cost (scenario keys `slo`,
// `search` and `target.cost`): plain data with the documented defaults, read by the scenario
// loader, judged by reports/ and driven by sweep/ (docs/scenarios.md, "Capacity search").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvsweep {

// One thing the SLO asks: a fraction of requests meet every threshold given. `p95_ttft_ms:
// 1000` is {ttft_ms 1000, fraction 0.95}; `good: {ttft_ms: 1000, tpot_ms: 100}` with
// `attainment: 0.95` is both thresholds at once, as vLLM's --goodput defines a good request.
// A failed request meets none. ITL is per token: its requirement stands alone (p95_itl_ms)
// and counts inter-token gaps, not requests.
struct SloRequirement {
  std::optional<double> ttft_ms;
  std::optional<double> tpot_ms;
  std::optional<double> itl_ms;
  std::optional<double> e2e_ms;
  double fraction = 0.95;  // (0, 1]: of requests (of gaps for ITL) that must meet them
  bool operator==(const SloRequirement&) const = default;
};

struct SloSpec {
  std::vector<SloRequirement> requirements;  // empty: no SLO
  // A probe passes when the interval of every requirement's attainment lies at or above its
  // fraction, fails when one lies below; otherwise it is undecided.
  double confidence = 0.95;
  int resamples = 1000;  // bootstrap resamples of whole requests
  bool empty() const { return requirements.empty(); }
  bool operator==(const SloSpec&) const = default;
};

// How a probe's load is first chosen: from the lower bound (none), or from the predictor's
// capacity for the arm, found in virtual time on the target's sim stand-in.
enum class SearchGuide { kNone, kPredict };

struct SearchSpec {
  // What is searched: "concurrency" (users, or the in-flight cap) or "load.request_rate".
  // "": no search.
  std::string factor;
  double low = 0;   // the least load probed; > 0
  double high = 0;  // the most; > low
  // The search ends when the lowest failing load is within this fraction above the highest
  // passing one (for concurrency, also when they are 1 apart).
  double precision = 0.1;
  double growth = 2;  // while nothing has failed, each probe is this many times the last
  // Unset: predict when the scenario's target has a sim stand-in (every kind has one).
  std::optional<SearchGuide> guide;
  // Without an SLO, a knee search: a probe passes while its request throughput per unit of
  // load is at least this fraction of the lightest load's (`low`, always probed first): past
  // the knee, throughput stops rising with the load and, by Little's law, latency climbs.
  double knee_efficiency = 0.9;
  // An open-loop probe sends for at least this long (its num_requests raised to rate x
  // min_probe, a shorter duration raised to it), so that above capacity a queue has time to
  // grow and the probe fails on what the fleet sustains, not on what it absorbs as a burst: a
  // probe of 2,000 requests at 500 req/s ends in 4 s. A probe cut shorter (a rehearsal's
  // target.sim.num_requests, a dataset's end) is said to be too short to judge. 0: as the load
  // section sizes it.
  double min_probe_s = 120;
  int max_tries = 3;    // of one load whose verdict is undecided, before it counts as failing
  int max_probes = 30;  // per arm, every try counted
  bool enabled() const { return !factor.empty(); }
  bool operator==(const SearchSpec&) const = default;
};

// What the serving fleet costs, for cost per million tokens.
struct CostSpec {
  double usd_per_gpu_hour = 0;
  double gpus = 0;  // the whole fleet's, e.g. 8 replicas x 1 L4
  bool empty() const { return usd_per_gpu_hour <= 0 || gpus <= 0; }
  double usd_per_hour() const { return usd_per_gpu_hour * gpus; }
  bool operator==(const CostSpec&) const = default;
};

}  // namespace kvsweep
