// The capacity section of a searching experiment's reports: each arm's capacity within the
// SLO, its ratio to the baseline's, what a million tokens cost at it, the predictor's capacity
// beside it, and each probe for the latency-against-load chart (docs/reports.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"
#include "figures/token_cost.h"
#include "store/store_readers.h"

namespace kvsweep::figures {

struct CapacityProbe {
  double load = 0;
  std::string outcome;      // "pass", "fail", "undecided", "not counted"
  std::optional<double> y;  // the chart's latency at this probe (CapacitySection::y_label)
};

struct CapacityRow {
  std::string arm;
  std::string key;      // "<arm>" or "<arm>@<cap>"
  int concurrency = 0;  // a rate search's in-flight cap
  std::optional<double> capacity;
  std::optional<double> first_failing;
  std::optional<double> predicted;  // the guiding prediction's own capacity for the arm
  // The guiding prediction's probes for the arm: an unguided search at the same precision
  // (in virtual time), against which `probes` shows what the guide saved.
  std::optional<int> unguided_probes;
  std::string why;
  int probes = 0;
  std::optional<double> vs_baseline;  // capacity / the baseline arm's
  std::optional<TokenCost> cost;      // at the capacity probe's throughput
  std::vector<CapacityProbe> points;  // in the order probed
};

struct CapacitySection {
  std::string factor;            // "concurrency" or "load.request_rate"
  std::string unit;              // "in flight" or "req/s"
  std::vector<std::string> slo;  // the requirements, as labels; empty for a knee search
  // A knee search (no SLO): the fraction of the lightest load's throughput per unit of load a
  // probe kept to pass.
  std::optional<double> knee_efficiency;
  double confidence = 0.95;
  double low = 0;
  double high = 0;
  double precision = 0;
  std::int64_t guide_experiment = 0;  // 0: unguided
  std::string baseline;               // the arm key the ratios are against
  // The chart: the first requirement's first metric at its percentile, and its threshold.
  std::string y_label;  // "p95 TTFT (ms)"
  std::optional<double> threshold_ms;
  std::vector<CapacityRow> rows;  // in plan order
};

// The section when the experiment searched (its setup has "search"), else nullopt. cells and
// metrics are the report model's (metrics[i] of cells[i]); the guiding prediction's arms are
// read from the store.
std::optional<CapacitySection> capacity_section(const store::FigureReader& store,
                                                const store::ExperimentRow& experiment,
                                                const std::vector<store::CellRow>& cells,
                                                const std::vector<CellMetrics>& metrics);

// One line for a list of experiments: "capacity within the SLO: k8s-service@8000 95.1 req/s,
// LeastLoad@8000 104 req/s (1.09x), PrefixHash@8000 415 req/s (4.36x)"; an arm without a
// capacity says "none".
std::string capacity_headline(const CapacitySection& section);

// The lines that answer a search on `run`'s console, one per arm: "  capacity within the SLO,
// PrefixHash@8000: 415 req/s, 4.36x k8s-service@8000's; $0.143 per million output tokens,
// $0.038 per million tokens in all"; the same figures as the section's table.
std::vector<std::string> capacity_lines(const CapacitySection& section);

// "24 req/s", "12 in flight".
std::string capacity_text(const CapacitySection& section, std::optional<double> load);

}  // namespace kvsweep::figures
