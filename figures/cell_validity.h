// A cell's verdict as plain data: what judge_cell (figures/validity.h) fills and its rules
// (figures/over_capacity_rules.h) each add to, and what summaries store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/stats.h"
#include "common/trend.h"

namespace kvsweep::figures {

// Worst first: a cell is given the first verdict whose rule fires.
enum class CellVerdict {
  kValid,               // measured the load asked for, and steady
  kClientBound,         // the driver fell behind its own schedule: it measured itself
  kShortOfConcurrency,  // requests were due and not sent while slots stood empty
  kOverCapacity,        // arrivals outran service: a queue grew through the cell
};

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

  // Over capacity (open loop only; docs/metrics.md, "Verdicts"), over the steady window:
  // (a) the backlog of due-but-unsent requests during the arrivals;
  RiseJudgement backlog_trend;
  // (b) the requests in flight (sent, not finished), at each send;
  GrowthJudgement in_flight_trend;
  // (c) arrivals (scheduled, else sent, in the window) against completions (ok requests that
  // ended in it): a failed or timed-out request is no completion;
  std::int64_t window_arrivals = 0;
  std::int64_t window_completions = 0;
  bool completions_short = false;
  // (d) the servers' summed waiting queue at each scrape in the window, when scraped.
  std::int64_t queue_scrapes = 0;  // scrapes of a waiting-queue series in the window
  GrowthJudgement queue_trend;
  // ... and their summed running batch (kRunningSeries): (b)'s growth held there while the
  // waiting queue held is requests taking longer (a multi-turn cell's prompts lengthening
  // through it), not a queue: in_flight_in_servers, shown as a figure, and (b) does not fire.
  GrowthJudgement running_trend;
  bool in_flight_in_servers = false;
  // TTFT against send time: a figure, never a verdict (a workload whose prompts grow through
  // the cell rises as a queue does). The capacity search still reads it (deprecated there).
  RiseJudgement ttft_trend;

  // Measured requests and those that failed (timed out, refused, cut); the main reason is
  // the commonest kind's first failure ("total timeout after 60 s"). More than
  // ValidityRules::kMaxFailedFraction failed: said in the verdict line, and never a winner.
  std::int64_t requests = 0;
  std::int64_t failed = 0;
  std::string main_failure;

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
  std::vector<std::string> notes;          // figures shown beside the verdict that decide nothing
};

// The waiting-queue series of the servers' /metrics that rule (d) sums: vLLM's, Dynamo's
// frontend's and SGLang's.
inline constexpr const char* kWaitingQueueSeries[] = {
    "vllm:num_requests_waiting", "dynamo_frontend_queued_requests", "sglang:num_queue_reqs"};

// The running-batch series beside them: vLLM's and SGLang's. Dynamo's frontend counts its
// in-flight requests with its queued ones, so it tells nothing apart from the client's count.
inline constexpr const char* kRunningSeries[] = {"vllm:num_requests_running",
                                                 "sglang:num_running_reqs"};

}  // namespace kvsweep::figures
