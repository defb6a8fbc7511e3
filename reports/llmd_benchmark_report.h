// One measured cell as an llm-d Benchmark Report v0.2 document, valid against
// docs/schemas/llmd_benchmark_report_v0.2.schema.json (docs/reports.md lists what we fill).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "reports/cell_metrics.h"
#include "store/rows.h"

namespace kvsweep::reports {

// `metrics` are the cell's figures (compute_cell_metrics over `requests`); the rows give the
// per-request lengths and normalized TPOT the figures do not keep.
nlohmann::ordered_json llmd_benchmark_report(const store::ExperimentRow& experiment,
                                             const store::CellRow& cell, const CellMetrics& metrics,
                                             const std::vector<store::RequestRow>& requests);

// "PT4.38S" for 4.38 s (ISO-8601, to the millisecond, trailing zeros dropped); "PT0S" for 0 or
// less.
std::string iso8601_duration(double seconds);

}  // namespace kvsweep::reports
