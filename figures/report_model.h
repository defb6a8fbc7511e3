// The report model of one experiment: setup lines, concurrency levels, a row per strategy with
// its cell metrics, and ratios to the baseline strategy. Every renderer reads this, not SQL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "figures/capacity_report.h"
#include "figures/cell_metrics.h"
#include "figures/replica_breakdown.h"
#include "store/store_readers.h"

namespace kvsweep::figures {

struct SetupLine {
  std::string label;  // "Target"
  std::string value;  // "sim, 8 replicas, profile l4-llama3.1-8b-fp8"
};

// row / baseline for each figure; nullopt when either side has nothing to compare (no ok
// request, an empty window, a zero baseline).
struct BaselineRatios {
  std::optional<double> ttft_mean;
  std::optional<double> ttft_p99;
  std::optional<double> tpot_mean;
  std::optional<double> itl_mean;
  std::optional<double> e2e_mean;
  std::optional<double> request_throughput;
  std::optional<double> output_throughput;
  std::optional<double> total_token_throughput;
};

struct StrategyRow {
  std::string label;  // repeat_label(): "prefix-hash", or "prefix-hash #2" for the 2nd repeat
  store::CellRow cell;
  bool measured = false;  // the cell is done: metrics are meaningful
  CellMetrics metrics;
  bool is_baseline = false;                   // the row the others are divided by
  std::optional<BaselineRatios> vs_baseline;  // set on measured rows other than the baseline
  ReplicaBreakdown replicas;  // which replicas served the cell; empty when not computed
};

struct ConcurrencyLevel {
  int concurrency = 0;
  std::vector<StrategyRow> rows;  // in plan order
  bool has_baseline = false;      // a measured baseline row exists at this level
};

struct ReportModel {
  store::ExperimentRow experiment;
  std::vector<SetupLine> setup;
  std::string figures_source;            // figures_source() of the experiment
  std::string figures = "measured";      // figures_kind() of the experiment
  std::string baseline;                  // the experiment's baseline arm; "" when none was given
  std::vector<ConcurrencyLevel> levels;  // ascending concurrency
  // build_report_model: "summaries" or "raw rows" (FigureSource); "" when made from rows given.
  std::string figures_from;
  std::optional<store::PruneMark> pruned;  // the experiment's raw rows were pruned
  // A searching experiment's capacity per arm (build_report_model; nullopt otherwise).
  std::optional<CapacitySection> capacity;
};

// How a cell's arm is named everywhere (the sweep's console, reports, `runs`): the strategy,
// and when the experiment runs every cell more than once, " #k" for repeat k counted from 1.
std::string repeat_label(const std::string& strategy, int repeat, int repeats);

// Where a done cell's figures are read from. kSummaries: its summary, computed exactly from
// its rows when it ended (cells without one, and cells not done, from their rows); what every
// page and command uses, at a cost that does not grow with the cell's requests. kRawRows:
// recomputed from the rows (`report --exact`); refused for a pruned experiment.
// kSummaryFigures: as kSummaries without decoding the distributions, so the cells have no
// TTFT CDF points (samples.ttft_ms empty): for what reads figures only (headlines, history,
// dashboard baselines), at a fifth of the cost.
enum class FigureSource { kSummaries, kSummaryFigures, kRawRows };

// Reads the experiment, its cells, and their summaries or requests and metric samples.
// Throws std::runtime_error when the experiment does not exist, or its raw rows are asked
// for and were pruned.
ReportModel build_report_model(const store::StoreReader& store, std::int64_t experiment_id,
                               FigureSource source = FigureSource::kSummaries);

// The pure part of build_report_model, for tests and renderers that already hold the rows:
// metrics[i] and replicas[i] belong to cells[i]; replicas may be empty (none computed).
ReportModel make_report_model(const store::ExperimentRow& experiment,
                              const std::vector<store::CellRow>& cells,
                              const std::vector<CellMetrics>& metrics,
                              const std::vector<ReplicaBreakdown>& replicas = {});

// Where an experiment's figures come from, from its setup's target kind: "predicted" (kind
// predict: the simulated fleet in virtual time), "simulated" (kind sim: the embedded fleet in
// real time) or "measured" (real servers; also a setup that says nothing).
std::string figures_kind(const store::ExperimentRow& experiment);
// figures_kind(), or "" when measured: the word every output puts next to such figures.
std::string figures_label(const store::ExperimentRow& experiment);

// A sentence for the top of a report when its figures did not come from real servers: the
// prediction (target kind predict) or the embedded fleet (kind sim), its profile and size, and
// the target it stood in for when a cluster scenario was run with --target sim or --target
// predict. "" for every other target.
std::string figures_source(const store::ExperimentRow& experiment);

// The setup lines of an experiment, from its row and its decoded setup (a stored setup that is
// not a JSON object becomes one line saying so, never an exception: a report must render from
// any store).
std::vector<SetupLine> setup_lines(const store::ExperimentRow& experiment);

}  // namespace kvsweep::figures
