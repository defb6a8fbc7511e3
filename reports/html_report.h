// The HTML report of one experiment: one self-contained file (inline CSS and SVG charts, no
// script, no network), rendered through templates/report.html.mustache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "figures/report_model.h"
#include "store/store_readers.h"

namespace kvsweep::reports {

// The charts of a report, each a complete <svg> element: mean TTFT, p95 TTFT and total
// throughput vs concurrency per strategy, a TTFT CDF per level, KV hit rate per strategy and
// level. Every user string inside is escaped.
std::vector<std::string> report_charts(const figures::ReportModel& model);

// Throws std::runtime_error when the experiment does not exist.
std::string render_html(const store::StoreReader& store, std::int64_t experiment_id);
std::string render_html(const figures::ReportModel& model);

}  // namespace kvsweep::reports
