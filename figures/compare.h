// Comparing two runs (experiments or single cells): per level and metric, the change B vs A
// with a bootstrap interval from the per-request samples, and a verdict for nightly CI.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "figures/bootstrap.h"
#include "figures/capacity_compare.h"
#include "figures/change_verdict.h"
#include "store/store_readers.h"

namespace kvsweep::figures {

struct CompareOptions {
  BootstrapOptions bootstrap;
  // Below this many samples on either side a metric is "insufficient data".
  std::size_t min_samples = 20;
  // A percentile is called only where each side has at least this many requests beyond it
  // (above it; below it for a percentile under 50): 200 requests for a p95, 1000 for a p99.
  // With fewer, a resample's percentile is one of the few largest requests, and the interval
  // says how those few moved, not the tail (samples_needed).
  std::size_t min_tail_samples = 10;
  // The practical floor: a change smaller than this fraction of A (every metric), or for a
  // latency smaller than min_change_ms, is "no change" whatever its interval: run-to-run noise
  // on a shared machine is about 5%, and a millisecond of scheduling jitter is no regression
  // anyone acts on.
  double min_change = 0.05;
  double min_change_ms = 1.0;
};

// The samples a statistic needs on each side to be called: min_samples, and for a percentile
// p at least min_tail_samples beyond it, ceil(min_tail_samples x 100 / min(p, 100 - p));
// SIZE_MAX for p 0 or 100 (nothing lies beyond the minimum or the maximum).
std::size_t samples_needed(const StatisticSpec& spec, const CompareOptions& options);

// One side's per-request samples (ok, measured requests only).
struct RunSamples {
  std::vector<WeightedSample> ttft_ms;
  std::vector<WeightedSample> tpot_ms;           // output_tokens > 1 only
  std::vector<WeightedSample> tokens_per_e2e_s;  // x = output tokens, w = e2e seconds
  // The same requests as columns (kRequestColumn*), for the joint bootstrap that resamples
  // whole requests: TTFT, TPOT (NaN for one token), output tokens and e2e seconds (both NaN
  // without an e2e).
  RequestColumns requests;
};
enum RequestColumn : std::size_t {
  kTtftColumn,
  kTpotColumn,
  kOutputTokensColumn,
  kE2eSecondsColumn,
  kRequestColumnCount
};
RunSamples run_samples(const std::vector<store::RequestRow>& requests);

struct MetricChange {
  std::string metric;  // "ttft_mean_ms", "ttft_p50_ms", "ttft_p95_ms", "tpot_mean_ms",
                       // "throughput_per_stream"
  bool higher_is_better = false;
  std::size_t n_a = 0;
  std::size_t n_b = 0;
  std::size_t needed = 0;  // samples_needed: fewer on a side is insufficient data
  double a = 0;            // the statistic on each side
  double b = 0;
  std::optional<ChangeInterval> change;  // nullopt with insufficient data
  Verdict verdict = Verdict::kInsufficientData;
  // The change is under a practical floor (CompareOptions::min_change, min_change_ms): "no
  // change" whatever its interval.
  bool below_floor = false;
};

// Every metric for one pair of sides, in a fixed order.
std::vector<MetricChange> compare_runs(const RunSamples& a, const RunSamples& b,
                                       const CompareOptions& options);

struct CompareRow {
  std::string strategy;
  int concurrency = 0;
  std::vector<MetricChange> metrics;
  // Each side's cell verdict (figures/validity.h): "valid", "over capacity", ...; the worst of
  // pooled repeats; "not judged" for cells stored without a load record.
  std::string a_verdict = "valid";
  std::string b_verdict = "valid";
};

struct CompareResult {
  std::string a_label;  // "experiment 3 (tiny-sweep)", "experiment 3 cell 2"
  std::string b_label;
  std::vector<CompareRow> rows;        // matched (strategy, concurrency), in A's order
  std::vector<std::string> unmatched;  // "prefix-hash @ 16 only in B"
  // Why no metric got a verdict (no level in common, a side without finished cells, too few
  // samples everywhere); "" when at least one metric was compared. A gate must not read "0
  // regressions" from a comparison that compared nothing.
  std::string nothing_compared;
  // Two searching experiments: each arm's capacity, A against B (figures/capacity_compare.h).
  std::vector<CapacityChange> capacities;
  bool any_regression() const;
  // A compared side whose verdict is not "valid" ("not judged" counts as valid: nothing says
  // otherwise). `compare --strict` fails on it.
  bool any_invalid() const;
};

// Matches done cells by (strategy, concurrency); repeats of a pair are pooled. Both fill
// nothing_compared when nothing could be compared.
CompareResult compare_experiments(const store::StoreReader& store, std::int64_t experiment_a,
                                  std::int64_t experiment_b, const CompareOptions& options);
CompareResult compare_cells(const store::StoreReader& store, const store::CellRow& a,
                            const store::CellRow& b, const CompareOptions& options);

// Aligned columns for a terminal, one line per (level, metric), verdicts spelled out; the last
// line counts verdicts, or says "nothing compared: <why>".
std::string compare_table(const CompareResult& result, const CompareOptions& options);
nlohmann::ordered_json compare_json(const CompareResult& result, const CompareOptions& options);

}  // namespace kvsweep::figures
