// One measured cell as an llm-d Benchmark Report v0.2.1 document, valid against llm-d-benchmark's
// own schema, docs/schemas/br_v0_2_1_json_schema.json (docs/reports.md lists what we fill).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "figures/cell_metrics.h"
#include "store/rows.h"

namespace kvsweep::reports {

// `metrics` are the cell's figures (compute_cell_metrics over `requests` and `samples`); the
// rows give the per-request lengths and normalized TPOT the figures do not keep, the samples
// (the servers' scrapes) the observability time series.
nlohmann::ordered_json llmd_benchmark_report(const store::ExperimentRow& experiment,
                                             const store::CellRow& cell,
                                             const figures::CellMetrics& metrics,
                                             const std::vector<store::RequestRow>& requests,
                                             const std::vector<store::MetricSample>& samples);

// What the report says of the cell itself, at scenario.load.native.config.cell: its
// `treatment` (every factor's level, as the plan set them: {"strategy": "random",
// "concurrency": 8}), its `treatment_group` (the arm the reports compare across concurrency
// levels), and `repeat`. llm-d's load.metadata admits no field of ours (closed in every
// v0.2.1 schema), so per-cell facts go here; a cell's validity verdict belongs here too.
nlohmann::ordered_json cell_metadata(const store::CellRow& cell);

// "PT4.38S" for 4.38 s (ISO-8601, to the millisecond, trailing zeros dropped); "PT0S" for 0 or
// less.
std::string iso8601_duration(double seconds);

}  // namespace kvsweep::reports
