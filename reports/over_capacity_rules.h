// Over capacity's rules (b), (c) and (d) over a cell's steady window, for judge_cell
// (reports/validity.h; docs/metrics.md, "Verdicts"). Each fills its fields of `v` (the
// judgement, the reason when it fires, what it could not evaluate); `v.steady` must be set.
#pragma once

#include <vector>

#include "common/validity_rules.h"
#include "reports/cell_validity.h"
#include "reports/in_flight.h"
#include "store/rows.h"

namespace kvsweep::reports {

// (b) the requests in flight rising, counted at each send in the window, and (c) completions
// short of arrivals (open loop): v.window_arrivals and v.window_completions are counted here.
void judge_service(const std::vector<const store::RequestRow*>& rows,
                   const std::vector<StepPoint>& in_flight, const ValidityRules& rules,
                   CellValidity& v);

// (d) the servers' summed waiting queue (kWaitingQueueSeries) at each scrape in the window.
void judge_queue(const std::vector<store::MetricSample>& samples, const ValidityRules& rules,
                 CellValidity& v);

}  // namespace kvsweep::reports
