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
  // Over capacity: TTFT against send time over the steady window rises by Mann-Kendall at
  // this one-sided significance...
  double trend_alpha = 0.01;
  // ... and by more than this fraction of the median TTFT per 10 s (Sen's slope).
  double min_ttft_rise_per_10s = 0.05;

  bool operator==(const ValidityRules&) const = default;
};

}  // namespace kvsweep
