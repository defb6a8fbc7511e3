// A cell's figures as one serialized record, computed once when the cell ends and stored
// beside it, so reports need not read its raw request rows again: every figure of CellMetrics
// (not its raw samples) as JSON, and its latency distributions as mergeable histograms.
// Adding a field to CellMetrics means adding it to both functions below, not a migration.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error_kinds.h"
#include "figures/cell_metrics.h"
#include "figures/latency_histogram.h"
#include "figures/replica_breakdown.h"
#include "figures/request_sample.h"
#include "store/rows.h"

namespace kvsweep::figures {

// Written into every summary as "format". Bump it when a field changes meaning (not when one
// is added: a reader fills fields an older summary lacks with their defaults, and says so in
// the format it read).
// 2: over capacity judged from queues (in flight, completions, the servers' waiting queue),
// the TTFT trend a figure only; failures named (docs/metrics.md, "Verdicts"). A summary of
// format 1 holds a verdict judged by the earlier rules (over capacity from the TTFT trend).
// 3: the in-flight rule also asks a growth of 2% of the window's arrivals (a workload whose
// prompts lengthen no longer reads as a queue).
// 4: the in-flight rule does not fire when the servers' scrapes hold its growth in their
// running batch while their waiting queue held (running_trend, in_flight_in_servers).
constexpr int kSummaryFormat = 4;

// Every figure of `metrics` except `samples`, as compact JSON text. Doubles keep every bit
// (shortest round-trip text); NaN and infinities are written as the strings "nan", "inf",
// "-inf", which JSON has no number for; nullopt as null.
std::string metrics_to_summary(const CellMetrics& metrics);

// The inverse: `samples` stays empty. Fields the text lacks keep CellMetrics' defaults (a
// summary of an older format); unknown fields are ignored (a newer one). Throws
// std::invalid_argument naming the field when a value has the wrong type, or when the text is
// not a JSON object or comes from a newer format than kSummaryFormat.
CellMetrics metrics_from_summary(const std::string& text);

// The latency distributions of a cell, over the same requests as CellMetrics' figures.
struct CellDistributions {
  LatencyHistogram ttft_ms;
  LatencyHistogram tpot_ms;
  LatencyHistogram itl_ms;
  LatencyHistogram e2e_ms;
};

CellDistributions distributions_of(const SortedSamples& samples);

// The four histograms, each as its bytes behind a 4-byte little-endian length. from_bytes
// throws std::invalid_argument on anything it did not write.
std::string distributions_to_bytes(const CellDistributions& distributions);
CellDistributions distributions_from_bytes(const std::string& bytes);

// Everything a report, `history`, `serve` and `compare` need of a done cell.
struct CellSummary {
  // Every figure exact, as computed from the raw rows, the verdict included. `samples`: empty
  // when summarized; read back, samples.ttft_ms holds the TTFT distribution's values at up to
  // 1,000 evenly spaced ranks (within 0.5% of the exact ones), for the CDF charts only.
  CellMetrics metrics;
  ReplicaBreakdown replicas;
  CellDistributions distributions;
  std::vector<SampledRequest> sample;  // compare's bootstrap once the raw rows are pruned
};

// What the reports compute from the raw rows (no SLO: goodput is a `load --goodput` figure).
CellSummary summarize_cell(const std::vector<store::RequestRow>& requests,
                           const std::vector<store::MetricSample>& samples,
                           const std::optional<store::CellLoadRow>& load,
                           const ValidityRules& rules);

// As stored (store::CellSummaryRow), and back. summary_from_row throws std::invalid_argument
// naming the field on a malformed or newer summary.
// kFigures reads the figures, verdict and replicas only (no distributions, sample or CDF
// points): most of a summary's decoding cost is its histograms.
enum class SummaryDetail { kWhole, kFigures };
store::CellSummaryRow summary_row(std::int64_t cell_id, const CellSummary& summary);
CellSummary summary_from_row(const store::CellSummaryRow& row,
                             SummaryDetail detail = SummaryDetail::kWhole);

// A stored summary unreadable (its bytes changed, or written wrong): says where it is.
class CorruptSummary : public CorruptData {
 public:
  using CorruptData::CorruptData;
};

// summary_from_row of `cell`'s stored summary, for readers that name what they read: on a
// malformed summary throws CorruptSummary "experiment 3 nightly, cell 2 (prefix-hash,
// concurrency 4, repeat 1): its stored summary cannot be read: <what was wrong>; `kvsweep
// report 3 --exact` computes its figures from the raw rows".
CellSummary stored_summary(const store::ExperimentRow& experiment, const store::CellRow& cell,
                           const store::CellSummaryRow& row,
                           SummaryDetail detail = SummaryDetail::kWhole);

}  // namespace kvsweep::figures
