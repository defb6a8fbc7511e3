// Did a cell measure the load it was asked for, and was the system steady? The achieved-load
// figures and the verdict of one cell, by the rules of docs/metrics.md ("Achieved load",
// "Verdicts"). One rule, one place: reports, compare, serve, the console and predict use it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/stats.h"
#include "common/trend.h"
#include "common/validity_rules.h"
#include "store/rows.h"

namespace kvsweep::reports {

// Worst first: a cell is given the first verdict whose rule fires.
enum class CellVerdict {
  kValid,               // measured the load asked for, and steady
  kClientBound,         // the driver fell behind its own schedule: it measured itself
  kShortOfConcurrency,  // requests were due and not sent while slots stood empty
  kOverCapacity,        // arrivals outran completions: latency grows with the cell's length
};

// "valid", "client-bound", "short of its concurrency", "over capacity".
const char* verdict_name(CellVerdict verdict);

// The cell's figures over its steady window only (requests sent within it; rates over
// completions within it).
struct SteadyFigures {
  double start_s = 0;  // relative to the cell's epoch, as request rows
  double end_s = 0;
  std::int64_t requests = 0;  // ok requests sent within the window
  double request_throughput = 0;
  double output_throughput = 0;
  SampleSummary ttft_ms;
  SampleSummary tpot_ms;
  double in_flight_mean = 0;
};

struct CellValidity {
  // What the cell asked for (store::CellLoadRow); load_known false for cells stored without one.
  bool load_known = false;
  bool open_loop = false;
  double request_rate = 0;  // infinity: everything due at once
  int cap = 0;              // open loop's max_concurrency, or closed loop's users; 0 none

  // Achieved load over the whole window (first send to last end).
  double in_flight_mean = 0;                 // time-weighted, sent to last token (or end)
  std::optional<double> in_flight_fraction;  // of the cap
  // Little's law from the figures alone: req/s x (mean TTFT + mean TPOT x (mean output - 1)).
  std::optional<double> little_in_flight;
  std::optional<double> send_rate;       // measured requests per second of sending
  std::optional<double> scheduled_rate;  // open loop: the same over their scheduled times
  // Open loop: how long requests were due and not sent (past the grace), and the mean in
  // flight meanwhile.
  double backlog_s = 0;
  std::optional<double> in_flight_while_backlogged;
  std::optional<SteadyFigures> steady;  // nullopt when no steady window was found

  // Over capacity: TTFT against send time over the steady window, and the backlog during the
  // arrivals (open loop only).
  RiseJudgement ttft_trend;
  RiseJudgement backlog_trend;

  // The driver's own figures (store::CellLoadRow), when it measured itself.
  bool driver_measured = false;
  std::optional<double> driver_cpu_utilisation;  // cpu / (wall x usable cores)
  std::optional<double> send_delay_p99_ms;
  std::optional<double> send_shortfall;  // 1 - ready span / sent span
  bool stopped_over_capacity = false;    // load.stop_when_over_capacity ended it

  bool client_bound = false;
  bool short_of_concurrency = false;
  bool over_capacity = false;
  CellVerdict verdict = CellVerdict::kValid;
  std::vector<std::string> reasons;        // each rule that fired, with its figures
  std::vector<std::string> not_evaluated;  // each rule that could not be, and why
};

// Figures that Little's law needs, from the cell's metrics.
struct LittleInputs {
  double request_throughput = 0;  // req/s
  double ttft_mean_ms = 0;
  double tpot_mean_ms = 0;
  double mean_output_tokens = 0;
};

// Little's law: requests in flight = rate x time each spends in flight; nullopt without a rate.
std::optional<double> little_in_flight(const LittleInputs& in);

// Judges one cell from its stored rows (warm-up rows are ignored) and its load row.
CellValidity judge_cell(const std::vector<store::RequestRow>& requests,
                        const std::optional<store::CellLoadRow>& load, const LittleInputs& little,
                        const ValidityRules& rules = {});

// One shard of a sharded cell, judged by its driver's own figures against its part of the
// schedule (client-bound or valid; the other rules need the whole cell's requests): send_rate
// and scheduled_rate over its sends and their ready times. A client-bound shard makes
// judge_cell's cell client-bound, named in the reasons.
CellValidity judge_shard(const store::CellShardRow& shard, const ValidityRules& rules = {});

// Every figure a verdict stands on, worded for a person, from the verdict's own state:
// "over capacity: TTFT rises 180 ms per second through the cell ...". One line.
std::string verdict_line(const CellValidity& validity);

}  // namespace kvsweep::reports
