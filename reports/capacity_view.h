// The capacity section as the report templates read it (markdown, HTML, serve), and its
// latency-against-load chart per arm.
#pragma once

#include <kainjow/mustache.hpp>
#include <string>
#include <vector>

#include "figures/capacity_report.h"
#include "reports/text_filter.h"

namespace kvsweep::reports {

// Sets has_capacity and, with a section, capacity_* keys on `d`: the search line, the SLO and
// one row per arm (arm, capacity, first_failing, vs_baseline, predicted, probes, cost_output,
// cost_total, why).
void add_capacity_view(const std::optional<figures::CapacitySection>& section,
                       const TextFilter& text, kainjow::mustache::data& d);

// One chart per arm: the chart latency of each probe against its load, passing and failing
// probes marked apart, and the SLO's threshold as a dashed line. SVG, every string escaped.
std::vector<std::string> capacity_charts(const figures::CapacitySection& section);

}  // namespace kvsweep::reports
