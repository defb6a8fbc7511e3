// The thresholds a cell's verdict is judged by (docs/metrics.md, "Verdicts"): plain data with
// the documented defaults, set per scenario under load.validity.
#pragma once

namespace kvsweep {

struct ValidityRules {
  // Client-bound: the driver's sends fell more than this fraction short of the rate their
  // ready times asked for (1 - ready span / sent span)...
  double max_send_shortfall = 0.03;
  // ... or its send delay's p99 exceeded this while requests were due. 10 ms is far above a
  // healthy driver's (tens of microseconds) and below what a queueing server adds.
  double max_send_delay_p99_ms = 10;
  // ... evaluated over at least this many sends: a p99 of fewer is their maximum, and one
  // send a busy machine's scheduler held for 20 ms would decide the cell.
  static constexpr long long kMinSendsForDelayP99 = 100;
  // Short of its concurrency: requests were due and not sent while the time-weighted number
  // in flight stayed under this fraction of the cap.
  double min_in_flight_fraction = 0.9;
  // `kvsweep audit` of an outside result has no series, only means: it compares Little's law
  // from mean TTFT and mean TPOT with what the schedule and cap would have kept in flight.
  // Mean TPOT x mean output understates the mean of their product when long outputs decode
  // slower (they live through the busiest stretch), by up to 23% on seed 002's server-bound
  // arms (0.77-1.03 of the expected in flight; the client-bound arm 0.13-0.69). Hence a
  // looser bound for audits.
  double audit_min_in_flight_fraction = 0.75;
  // A request counts as due and not sent once it waited this long past its arrival: a
  // driver's ordinary microseconds of lateness are no backlog.
  double backlog_grace_ms = 10;
  // Over capacity: a count (requests in flight, the servers' waiting queue) rises through the
  // steady window by Mann-Kendall at this one-sided significance (the backlog of due-but-unsent
  // requests too)...
  double trend_alpha = 0.01;
  // The backlog counts as growing only when it grows by at least this many requests.
  static constexpr double kMinBacklogGrowth = 2;
  // ... and by at least kMinInFlightGrowth requests and kMinInFlightGrowthFraction of its
  // median (Sen's slope x the window). A queue outrunning its server grows by hundreds; a
  // healthy cell's in flight drifts by a few as a multi-turn workload's prompts lengthen (seed
  // 000's stand-in at 10 req/s on 8 L4s: about 35 in flight), which must not count.
  static constexpr double kMinInFlightGrowth = 10;
  static constexpr double kMinInFlightGrowthFraction = 0.25;
  // ... and by at least this fraction of the window's arrivals (one point per send). A queue
  // grows by arrivals - completions, (1 - 1/load) of the arrivals at `load` times capacity:
  // 17% at 120%, 5% at 105%. A multi-turn workload whose prompts lengthen through the cell
  // lengthens each request's time in flight instead: seed 002's stand-in (prompts from 83 to
  // 736 tokens over a 120 s probe) grew in flight by 0.7-1.3% of arrivals at every load below
  // capacity on 8 and 16 L4s, and by 25-45% of its median, which alone read as a queue and
  // held capacity at 1.4x on twice the replicas.
  static constexpr double kMinInFlightGrowthOfArrivals = 0.02;
  // ... unless the servers were scraped, their waiting queue held (judged over at least
  // kMinQueueScrapes scrapes and not rising) and their running batch grew by at least this
  // share of (b)'s growth: the requests are in the engines, being served, and took longer.
  // A vLLM or SGLang engine past its capacity queues what its batch cannot take (the batch is
  // capped by max_num_seqs and by its KV cache), so a queue shows in (d); a queue outside the
  // engines (a gateway's) leaves their batch level while the client's count grows. Half:
  // the client's count also holds requests in transit and in the router.
  static constexpr double kMinServedShareOfInFlightGrowth = 0.5;
  // Over capacity: completions in the steady window fell short of its arrivals by more than
  // this fraction AND by more than kShortfallSigmas x sqrt(arrivals): a Poisson count's
  // standard deviation is its square root, so a short window's noise (and the few requests in
  // flight at its two ends) cannot decide.
  static constexpr double kMaxCompletionShortfall = 0.05;
  static constexpr double kShortfallSigmas = 3;
  // The servers' waiting queue is judged only over at least this many scrapes in the window
  // (below that a trend of 10 bins cannot reach 1%).
  static constexpr long long kMinQueueScrapes = 10;
  // A cell where more than this fraction of its requests failed says so in its verdict line
  // and is never a winner: its latency figures describe the requests that survived.
  static constexpr double kMaxFailedFraction = 0.01;
  // TTFT against send time: rising by this fraction of its median per 10 s (Sen's slope) is
  // shown as a figure ("TTFT rose 1.4 ms/s: not a verdict"); it decides nothing.
  double min_ttft_rise_per_10s = 0.05;

  bool operator==(const ValidityRules&) const = default;
};

}  // namespace kvsweep
