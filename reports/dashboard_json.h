// The dashboard baseline JSON (seed 003): per metric, the baseline strategy's series over
// concurrency and each treatment's, with run metadata. Schema:
// docs/schemas/dashboard_baseline.schema.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures/report_model.h"

namespace kvsweep::reports {

// Bump on any change a consumer could notice (a key renamed, removed or re-typed); adding a
// metric is not one.
inline constexpr int kDashboardSchemaVersion = 1;

// Keys in a fixed order; values[i] belongs to concurrency[i] and is null where the cell was
// not measured (or the metric has no value, e.g. no hit-rate counters). With repeats, the
// first measured repeat is used. Without a baseline strategy, "baseline" is null and every
// strategy is a treatment.
// The llm-d endpoint picker's figures (epp_prefix_hit_ratio, epp_scheduling_ms) are there only
// when some measured cell has them.
nlohmann::ordered_json dashboard_baseline_json(const figures::ReportModel& model);

// Every metric key the file may carry, in its order (those only some runs have included).
std::vector<std::string> dashboard_metric_names();

}  // namespace kvsweep::reports
