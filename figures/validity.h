// Did a cell measure the load it was asked for, and was the system steady? The achieved-load
// figures and the verdict of one cell, by the rules of docs/metrics.md ("Achieved load",
// "Verdicts"). One rule, one place: reports, compare, serve, the console and predict use it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/validity_rules.h"
#include "figures/cell_validity.h"
#include "store/rows.h"

namespace kvsweep::figures {

// "valid", "client-bound", "short of its concurrency", "over capacity".
const char* verdict_name(CellVerdict verdict);

// More than ValidityRules::kMaxFailedFraction of `requests` failed.
bool too_many_failed(std::int64_t failed, std::int64_t requests);

// "927 of 1,140 failed: total timeout after 60 s"; "" when too_many_failed is false.
std::string failures_text(const CellValidity& validity);

// Figures that Little's law needs, from the cell's metrics.
struct LittleInputs {
  double request_throughput = 0;  // req/s
  double ttft_mean_ms = 0;
  double tpot_mean_ms = 0;
  double mean_output_tokens = 0;
};

// Little's law: requests in flight = rate x time each spends in flight; nullopt without a rate.
std::optional<double> little_in_flight(const LittleInputs& in);

// Judges one cell from its stored rows (warm-up rows are ignored), its load row and the
// servers' /metrics samples stored with it (rule (d); empty: not evaluated, said so).
CellValidity judge_cell(const std::vector<store::RequestRow>& requests,
                        const std::vector<store::MetricSample>& samples,
                        const std::optional<store::CellLoadRow>& load, const LittleInputs& little,
                        const ValidityRules& rules = {});

// One shard of a sharded cell, judged by its driver's own figures against its part of the
// schedule (client-bound or valid; the other rules need the whole cell's requests): send_rate
// and scheduled_rate over its sends and their ready times. A client-bound shard makes
// judge_cell's cell client-bound, named in the reasons.
CellValidity judge_shard(const store::CellShardRow& shard, const ValidityRules& rules = {});

// Every figure a verdict stands on, worded for a person, from the verdict's own state:
// "over capacity: in flight grew from 40 to 310 over 60 s while 8.0 req/s arrived and 5.2 req/s
// finished (...)", then the failures when too many failed, then the notes. One line.
std::string verdict_line(const CellValidity& validity);

}  // namespace kvsweep::figures
