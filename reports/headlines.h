// Headline sentences computed from a report model: how each strategy compares with the
// baseline at each concurrency level, saying so plainly when there is no clear difference.
#pragma once

#include <string>
#include <vector>

#include "figures/report_model.h"

namespace kvsweep::reports {

// A change smaller than this (relative to the baseline) is reported as "no clear difference":
// run-to-run noise on shared machines is commonly 5% (docs/reports.md).
inline constexpr double kNoDifferenceBelow = 0.05;
// Fewer successful requests than this on either side: the sentence says there are too few.
inline constexpr long kMinHeadlineRequests = 3;

// One sentence per (level, non-baseline measured row) for mean TTFT and total throughput, in
// level then plan order: "prefix-hash: mean TTFT 6.2x lower than random at 96 concurrent
// (35.10 ms vs 217.62 ms)". Empty without a baseline.
std::vector<std::string> headlines(const figures::ReportModel& model);

// "6.2x lower", "41% higher", or "" within kNoDifferenceBelow; ratio = row / baseline > 0.
std::string change_phrase(double ratio);

}  // namespace kvsweep::reports
