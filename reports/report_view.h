// The template data of a report: every figure formatted (units.h), shared by the markdown and
// HTML renderers so both show the same numbers under the same names.
#pragma once

#include <functional>
#include <kainjow/mustache.hpp>
#include <string>

#include "figures/report_model.h"
#include "reports/text_filter.h"

namespace kvsweep::reports {

// Keys: name, figures_source (has_figures_source), verdicts[text] (has_verdicts), summary[
// concurrency, label, measured, status, is_winner, ok, failed, ttft_p50, ttft_p95,
// total_token_throughput, kv_hit_server, cache_hit_client], setup[label,value],
// headlines[text], has_headlines, csv, csv_fence (a markdown code fence longer than any
// backtick run in csv), baseline, levels[concurrency, rows[label, measured,
// status, ok, failed, ttft_*, tpot_mean, itl_mean, e2e_mean, lag_p99,
// request/output/total_token_throughput, kv_hit_server, cache_hit_client, is_baseline],
// has_failures, failures[label,kinds], has_repeats, repeats[label, sends, repeated,
// measured], has_ratios, baseline, ratios[...], has_server,
// server[label, kv_usage_max, preemptions, spec_decode_acceptance], has_epp,
// epp[label, epp_prefix_hit, kv_hit_server, epp_scheduling_ms], has_replicas,
// replicas[label, replica, requests, share, failed, cache_hit_client], has_sources,
// sources[label, source, queries, share, kv_hit_server]].
kainjow::mustache::data report_view(const figures::ReportModel& model, const TextFilter& text);

// Renders a template compiled into the binary (templates_embedded.h); a `{{> name}}` tag in it
// includes the embedded template `name` (report.html includes report_body.html). escape is the
// template's {{value}} escaping; nullptr keeps values as they are.
std::string render_embedded(const std::string& template_name, const kainjow::mustache::data& data,
                            const std::function<std::string(const std::string&)>& escape);

}  // namespace kvsweep::reports
