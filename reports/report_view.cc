// The template data of a report, built once for every renderer.
#include "reports/report_view.h"

#include <algorithm>
#include <stdexcept>

#include "figures/units.h"
#include "reports/capacity_view.h"
#include "reports/csv_table.h"
#include "reports/headlines.h"
#include "reports/level_winners.h"
#include "reports/templates_embedded.h"

namespace kvsweep::reports {
namespace {

namespace mustache = kainjow::mustache;

// CommonMark closes a fenced block only with a fence at least as long as the opening one.
std::string code_fence_for(const std::string& text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

std::string status_text(const store::CellRow& cell) {
  std::string text = cell.status.empty() ? "no status" : cell.status;
  if (!cell.error.empty()) text += ": " + cell.error;
  return text;
}

// "3 timeout, 1 http_status", most frequent first, as wrk prints its error counts.
std::string failure_kinds(const figures::CellMetrics& m) {
  std::vector<std::pair<std::string, std::int64_t>> kinds(m.failed_by_kind.begin(),
                                                          m.failed_by_kind.end());
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [kind, count] : kinds) {
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " +
            (kind.empty() ? std::string("unknown") : kind);
    if (const auto first = m.first_failure_by_kind.find(kind);
        first != m.first_failure_by_kind.end()) {
      text +=
          " (first: " + figures::failure_text(first->second.http_status, first->second.error) + ")";
    }
  }
  return text;
}

// Token figures the server did not report: output counted from content events is marked
// estimated, a total that needs unknown prompt counts says so (never 0, never output alone).
constexpr const char* kEstimatedMark = "≈";
constexpr const char* kViewUnknown = "unknown";

bool has_token_caveat(const figures::CellMetrics& m) {
  return m.output_tokens_estimated > 0 || !m.total_token_throughput;
}

// Closed-loop runs have no schedule, hence no lag: "n/a" rather than a misleading 0.
std::string lag_p99(const figures::CellMetrics& m) {
  return m.schedule_lag_ms.count == 0 ? figures::kNotAvailable
                                      : figures::format_ms(m.schedule_lag_ms.p99);
}

mustache::data row_data(const figures::StrategyRow& row, const TextFilter& text) {
  const figures::CellMetrics& m = row.metrics;
  mustache::data d;
  d.set("label", text(row.label));
  d.set("measured", row.measured);
  d.set("is_baseline", row.is_baseline);
  d.set("status", text(status_text(row.cell)));
  d.set("ok", std::to_string(m.ok));
  d.set("failed", std::to_string(m.failed));
  d.set("ttft_mean", figures::format_ms(m.ttft_ms.mean));
  d.set("ttft_median", figures::format_ms(m.ttft_ms.median));
  d.set("ttft_p95", figures::format_ms(m.ttft_ms.p95));
  d.set("ttft_p99", figures::format_ms(m.ttft_ms.p99));
  d.set("tpot_mean", figures::format_ms(m.tpot_ms.mean));
  d.set("itl_mean", figures::format_ms(m.itl_ms.mean));
  d.set("e2e_mean", figures::format_ms(m.e2e_ms.mean));
  d.set("lag_p99", lag_p99(m));
  d.set("request_throughput", figures::format_rate(m.request_throughput));
  d.set("output_throughput", (m.output_tokens_estimated > 0 ? kEstimatedMark : "") +
                                 figures::format_rate(m.output_throughput));
  d.set("total_token_throughput",
        m.total_token_throughput ? figures::format_rate(*m.total_token_throughput) : kViewUnknown);
  d.set("kv_hit_server", figures::format_percent(m.kv_hit_rate_server));
  d.set("cache_hit_client", figures::format_percent(m.cache_hit_client));
  return d;
}

mustache::data ratio_data(const figures::StrategyRow& row, const TextFilter& text) {
  const figures::BaselineRatios& r = *row.vs_baseline;
  mustache::data d;
  d.set("label", text(row.label));
  d.set("ttft_mean", figures::format_ratio(r.ttft_mean));
  d.set("ttft_p99", figures::format_ratio(r.ttft_p99));
  d.set("tpot_mean", figures::format_ratio(r.tpot_mean));
  d.set("itl_mean", figures::format_ratio(r.itl_mean));
  d.set("e2e_mean", figures::format_ratio(r.e2e_mean));
  d.set("request_throughput", figures::format_ratio(r.request_throughput));
  d.set("output_throughput", figures::format_ratio(r.output_throughput));
  d.set("total_token_throughput", figures::format_ratio(r.total_token_throughput));
  return d;
}

// The server-side figures of a row, when its replicas exposed any of them.
bool has_server_figures(const figures::CellMetrics& m) {
  return m.kv_usage_max || m.preemptions || m.spec_decode_acceptance;
}

mustache::data server_data(const figures::StrategyRow& row, const TextFilter& text) {
  const figures::CellMetrics& m = row.metrics;
  mustache::data d;
  d.set("label", text(row.label));
  d.set("kv_usage_max", figures::format_percent(m.kv_usage_max));
  d.set("preemptions", m.preemptions ? std::to_string(*m.preemptions) : figures::kNotAvailable);
  d.set("spec_decode_acceptance", figures::format_percent(m.spec_decode_acceptance));
  return d;
}

// llm-d's endpoint picker's figures of a row, when it exposed them (docs/metrics.md).
bool has_epp_figures(const figures::CellMetrics& m) {
  return m.epp_prefix_hit_ratio || m.epp_scheduling_ms;
}

// What the picker believed (its prefix index's hit ratio) beside what the servers found.
mustache::data epp_data(const figures::StrategyRow& row, const TextFilter& text) {
  const figures::CellMetrics& m = row.metrics;
  mustache::data d;
  d.set("label", text(row.label));
  d.set("epp_prefix_hit", figures::format_percent(m.epp_prefix_hit_ratio));
  d.set("kv_hit_server", figures::format_percent(m.kv_hit_rate_server));
  // The EPP schedules in well under a millisecond: three decimals (microseconds).
  d.set("epp_scheduling_ms", m.epp_scheduling_ms ? figures::format_fixed(*m.epp_scheduling_ms, 3)
                                                 : figures::kNotAvailable);
  return d;
}

// One row of the compact table under the verdicts: the figures the verdict weighs.
mustache::data summary_data(const figures::ConcurrencyLevel& level, const figures::StrategyRow& row,
                            const LevelWinner& verdict, const TextFilter& text) {
  const figures::CellMetrics& m = row.metrics;
  mustache::data d;
  d.set("concurrency", std::to_string(level.concurrency));
  d.set("label", text(row.label));
  d.set("measured", row.measured);
  d.set("status", text(status_text(row.cell)));
  d.set("is_winner", verdict.outcome == WinnerOutcome::kWins && row.label == verdict.winner);
  d.set("ok", std::to_string(m.ok));
  d.set("failed", std::to_string(m.failed));
  d.set("ttft_p50", figures::format_ms(m.ttft_ms.median));
  d.set("ttft_p95", figures::format_ms(m.ttft_ms.p95));
  d.set("total_token_throughput",
        m.total_token_throughput ? figures::format_rate(*m.total_token_throughput) : kViewUnknown);
  d.set("kv_hit_server", figures::format_percent(m.kv_hit_rate_server));
  d.set("cache_hit_client", figures::format_percent(m.cache_hit_client));
  return d;
}

// Did the row's cell measure the load it asked for (figures/validity.h)? Its achieved-load
// figures and verdict; the reasons go to `reasons`, one line each.
mustache::data load_data(const figures::StrategyRow& row, const TextFilter& text,
                         mustache::data* reasons) {
  const figures::CellValidity& v = row.metrics.validity;
  const auto rate = [](const std::optional<double>& x) {
    return x ? figures::format_rate(*x) : figures::kNotAvailable;
  };
  mustache::data d;
  d.set("label", text(row.label));
  d.set("verdict", text(v.load_known ? verdict_name(v.verdict) : "not judged"));
  d.set("in_flight", figures::format_fixed(v.in_flight_mean, 1));
  d.set("of_cap", figures::format_percent(v.in_flight_fraction));
  d.set("little", v.little_in_flight ? figures::format_fixed(*v.little_in_flight, 1)
                                     : figures::kNotAvailable);
  d.set("send_rate", rate(v.send_rate));
  d.set("scheduled_rate", rate(v.scheduled_rate));
  d.set("steady_ttft_mean",
        v.steady ? figures::format_ms(v.steady->ttft_ms.mean) : figures::kNotAvailable);
  d.set("steady_output_throughput",
        v.steady ? figures::format_rate(v.steady->output_throughput) : figures::kNotAvailable);
  // The rules that fired; then, whatever the verdict, too many failures and the figures that
  // decide nothing ("TTFT rose 1.4 ms/s: not a verdict").
  std::vector<std::string> lines = v.reasons;
  if (const std::string failures = failures_text(v); !failures.empty()) lines.push_back(failures);
  lines.insert(lines.end(), v.notes.begin(), v.notes.end());
  for (const std::string& reason : lines) {
    mustache::data line;
    line.set("label", text(row.label));
    line.set("reason", text(reason));
    reasons->push_back(line);
  }
  return d;
}

// A sharded cell's shards (docs/driver.md, "Shards"): what each sent against its part of the
// schedule, its driver's lag and CPU, and its verdict.
void shard_data(const figures::StrategyRow& row, const TextFilter& text, mustache::data* shards) {
  for (const store::CellShardRow& shard : row.metrics.shards) {
    const figures::CellValidity v = figures::judge_shard(shard);
    mustache::data d;
    d.set("label", text(row.label));
    d.set("shard", std::to_string(shard.shard));
    d.set("requests", std::to_string(shard.measured));
    d.set("failed", std::to_string(shard.failed));
    d.set("send_rate", v.send_rate ? figures::format_rate(*v.send_rate) : figures::kNotAvailable);
    d.set("due_rate",
          v.scheduled_rate ? figures::format_rate(*v.scheduled_rate) : figures::kNotAvailable);
    d.set("delay_p99", shard.send_delay_count > 0 ? figures::format_ms(shard.send_delay_p99_ms)
                                                  : figures::kNotAvailable);
    d.set("skew", figures::format_fixed(shard.start_skew_ms, 1));
    d.set("cpu", figures::format_fixed(shard.driver_cpu_s, 2));
    d.set("verdict", text(verdict_name(v.verdict)));
    shards->push_back(d);
  }
}

// Per-replica and per-source rows of every measured row at a level, strategy by strategy.
void replica_data(const figures::StrategyRow& row, const TextFilter& text, mustache::data* replicas,
                  mustache::data* sources) {
  for (const figures::ReplicaFigures& f : row.replicas.replicas) {
    mustache::data d;
    d.set("label", text(row.label));
    d.set("replica", text(f.replica));
    d.set("requests", std::to_string(f.requests));
    d.set("share", figures::format_percent(f.share));
    d.set("failed", std::to_string(f.failed));
    d.set("cache_hit_client", figures::format_percent(f.cache_hit_client));
    replicas->push_back(d);
  }
  for (const figures::SourceFigures& f : row.replicas.sources) {
    mustache::data d;
    d.set("label", text(row.label));
    d.set("source", text(f.source));
    d.set("queries", figures::format_fixed(f.queries, 0));
    d.set("share", figures::format_percent(f.share));
    d.set("kv_hit_server", figures::format_percent(f.kv_hit_server));
    sources->push_back(d);
  }
}

mustache::data level_data(const figures::ConcurrencyLevel& level, const std::string& baseline,
                          const TextFilter& text) {
  mustache::data replicas{mustache::data::type::list};
  mustache::data sources{mustache::data::type::list};
  mustache::data shards{mustache::data::type::list};
  mustache::data rows{mustache::data::type::list};
  mustache::data failures{mustache::data::type::list};
  mustache::data repeats{mustache::data::type::list};
  mustache::data ratios{mustache::data::type::list};
  mustache::data server{mustache::data::type::list};
  mustache::data epp{mustache::data::type::list};
  mustache::data load{mustache::data::type::list};
  mustache::data load_reasons{mustache::data::type::list};
  bool token_caveat = false;
  for (const figures::StrategyRow& row : level.rows) {
    rows.push_back(row_data(row, text));
    if (row.measured && row.metrics.ok + row.metrics.failed > 0) {
      load.push_back(load_data(row, text, &load_reasons));
    }
    token_caveat = token_caveat || (row.measured && has_token_caveat(row.metrics));
    if (row.measured && has_server_figures(row.metrics)) server.push_back(server_data(row, text));
    if (row.measured && has_epp_figures(row.metrics)) epp.push_back(epp_data(row, text));
    if (row.measured && row.metrics.failed > 0) {
      mustache::data failure;
      failure.set("label", text(row.label));
      failure.set("kinds", text(failure_kinds(row.metrics)));
      failures.push_back(failure);
    }
    if (row.measured && row.metrics.prompt_sends_max > 1) {
      mustache::data repeat;
      repeat.set("label", text(row.label));
      repeat.set("sends", std::to_string(row.metrics.prompt_sends_max));
      repeat.set("repeated", std::to_string(row.metrics.repeated_requests));
      repeat.set("measured", std::to_string(row.metrics.ok + row.metrics.failed));
      repeats.push_back(repeat);
    }
    if (row.vs_baseline) ratios.push_back(ratio_data(row, text));
    if (row.measured) replica_data(row, text, &replicas, &sources);
    if (row.measured) shard_data(row, text, &shards);
  }
  mustache::data d;
  d.set("concurrency", std::to_string(level.concurrency));
  d.set("rows", rows);
  d.set("has_token_note", token_caveat);
  d.set("token_note",
        text(std::string(kEstimatedMark) +
             ": estimated, the server sent no token usage and output tokens are counted "
             "content events; " +
             kViewUnknown + ": the total needs prompt token counts the server did not send."));
  d.set("has_failures", !failures.is_empty_list());
  d.set("failures", failures);
  d.set("has_load", !load.is_empty_list());
  d.set("load", load);
  d.set("load_reasons", load_reasons);
  d.set("has_repeats", !repeats.is_empty_list());
  d.set("repeats", repeats);
  d.set("has_ratios", !ratios.is_empty_list());
  d.set("baseline", text(baseline));
  d.set("ratios", ratios);
  d.set("has_server", !server.is_empty_list());
  d.set("server", server);
  d.set("has_epp", !epp.is_empty_list());
  d.set("epp", epp);
  d.set("has_replicas", !replicas.is_empty_list());
  d.set("replicas", replicas);
  d.set("has_shards", !shards.is_empty_list());
  d.set("shards", shards);
  d.set("has_sources", !sources.is_empty_list());
  d.set("sources", sources);
  return d;
}

}  // namespace

mustache::data report_view(const figures::ReportModel& model, const TextFilter& text) {
  mustache::data setup{mustache::data::type::list};
  for (const figures::SetupLine& line : model.setup) {
    mustache::data d;
    d.set("label", text(line.label));
    d.set("value", text(line.value));
    setup.push_back(d);
  }
  mustache::data levels{mustache::data::type::list};
  mustache::data verdicts{mustache::data::type::list};
  mustache::data summary{mustache::data::type::list};
  const std::vector<LevelWinner> level_verdict = level_winners(model);
  for (std::size_t i = 0; i < model.levels.size(); ++i) {
    const figures::ConcurrencyLevel& level = model.levels[i];
    levels.push_back(level_data(level, model.baseline, text));
    mustache::data v;
    v.set("text", text(level_verdict[i].text));
    verdicts.push_back(v);
    for (const figures::StrategyRow& row : level.rows) {
      summary.push_back(summary_data(level, row, level_verdict[i], text));
    }
  }
  mustache::data lines{mustache::data::type::list};
  for (const std::string& sentence : headlines(model)) {
    mustache::data d;
    d.set("text", text(sentence));
    lines.push_back(d);
  }
  mustache::data d;
  // A predicted report says so in its title too: a reader skimming to the tables must not
  // take it for a measurement.
  d.set("name", text(model.experiment.name +
                     (model.figures == "predicted" ? std::string(" (predicted)") : "")));
  d.set("has_figures_source", !model.figures_source.empty());
  d.set("figures_source", text(model.figures_source));
  // A search's probes are one arm at many loads: per-level winners and lines against the
  // baseline would compare an arm with itself. Its answer is the capacity section.
  const bool searched = model.capacity.has_value();
  d.set("has_verdicts", !verdicts.is_empty_list() && !searched);
  d.set("verdicts", verdicts);
  d.set("summary", summary);
  d.set("baseline", text(model.baseline));
  d.set("setup", setup);
  d.set("has_headlines", !lines.is_empty_list() && !searched);
  d.set("headlines", lines);
  d.set("levels", levels);
  add_capacity_view(model.capacity, text, d);
  // The CSV goes into a fenced block (markdown) or <pre> (HTML): no table escaping applies.
  // The fence is longer than any run of backticks in it, so no name can close it early.
  const std::string csv = render_csv(model);
  d.set("csv", csv);
  d.set("csv_fence", code_fence_for(csv));
  return d;
}

namespace {

std::string_view embedded_or_throw(const std::string& template_name) {
  const auto text = embedded_template(template_name);
  if (!text) {
    throw std::logic_error("template " + template_name +
                           ".mustache was not embedded at build time");
  }
  return *text;
}

// Every `{{> name}}` in text and, in turn, in the partials it names, as partial data taken
// from the embedded templates, so one template can include another.
void add_partials(std::string_view text, mustache::data& data) {
  for (std::size_t at = text.find("{{>"); at != std::string_view::npos;
       at = text.find("{{>", at + 3)) {
    const std::size_t end = text.find("}}", at);
    if (end == std::string_view::npos) return;  // the parser reports the unclosed tag
    std::string name(text.substr(at + 3, end - at - 3));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (data.get(name) != nullptr) continue;
    std::string_view partial = embedded_or_throw(name);
    // A partial's tag stands on a line of its own, whose newline follows it already: the
    // partial's last newline would add a blank line.
    if (!partial.empty() && partial.back() == '\n') partial.remove_suffix(1);
    data.set(name, mustache::partial([partial] { return std::string(partial); }));
    add_partials(partial, data);
  }
}

}  // namespace

std::string render_embedded(const std::string& template_name, const mustache::data& data,
                            const std::function<std::string(const std::string&)>& escape) {
  const std::string_view text = embedded_or_throw(template_name);
  mustache::data with_partials = data;
  add_partials(text, with_partials);
  mustache::mustache tmpl{std::string(text)};
  if (!tmpl.is_valid()) {
    throw std::logic_error("templates/" + template_name + ".mustache: " + tmpl.error_message());
  }
  if (escape) {
    tmpl.set_custom_escape(escape);
  } else {
    tmpl.set_custom_escape([](const std::string& s) { return s; });
  }
  std::string out = tmpl.render(with_partials);
  if (!tmpl.is_valid()) {
    throw std::logic_error("templates/" + template_name + ".mustache: " + tmpl.error_message());
  }
  return out;
}

}  // namespace kvsweep::reports
