// Seed 004's canonical results table as CSV: one row per cell, in seconds, for spreadsheets.
#pragma once

#include <string>

#include "figures/report_model.h"

namespace kvsweep::reports {

inline constexpr const char* kCsvHeader =
    "mode,prefix_regime,concurrency,mean_ttft_s,p95_ttft_s,mean_e2e_s,p95_e2e_s,req_s,tok_s,notes";

// mode = the arm (with "#N" for repeats), prefix_regime = the cell's load.dataset.prefix_tokens
// level when that is a factor (the mode then leaves it out of the arm's label), else
// the setup's load.prefix_regime when given, else empty; tok_s = output
// tokens/s; notes = failures, cell status and "baseline". Rows in level then plan order; fields
// quoted per RFC 4180 when needed. Cells that were not measured keep their row with empty figures.
std::string render_csv(const figures::ReportModel& model);

// One CSV field, quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& text);

}  // namespace kvsweep::reports
