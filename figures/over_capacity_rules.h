// Over capacity's rules (b), (c) and (d) over a cell's steady window, for judge_cell
// (figures/validity.h; docs/metrics.md, "Verdicts"). Each fills its fields of `v` (the
// judgement, the reason when it fires, what it could not evaluate); `v.steady` must be set.
#pragma once

#include <vector>

#include "common/validity_rules.h"
#include "figures/cell_validity.h"
#include "figures/in_flight.h"
#include "store/rows.h"

namespace kvsweep::figures {

// The counts (b) and (c) judge: the requests in flight at each send in the window (their
// trend) and the window's arrivals and completions (open loop).
void judge_service(const std::vector<const store::RequestRow*>& rows,
                   const std::vector<StepPoint>& in_flight, const ValidityRules& rules,
                   CellValidity& v);

// (d) the servers' summed waiting queue (kWaitingQueueSeries) at each scrape in the window,
// and their summed running batch (kRunningSeries) beside it.
void judge_queue(const std::vector<store::MetricSample>& samples, const ValidityRules& rules,
                 CellValidity& v);

// (b) in flight rising and (c) completions short of arrivals, after the two above: where the
// servers' scrapes show their waiting queue held and their running batch grew, that growth is
// requests in service taking longer, and neither rule counts it.
void judge_in_flight_and_completions(CellValidity& v);

}  // namespace kvsweep::figures
