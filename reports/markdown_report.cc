// The markdown report: the report model turned into template data and rendered through
// templates/report.md.mustache. Every number is formatted here (units.cc), none in the template.
#include "reports/markdown_report.h"

#include <kainjow/mustache.hpp>

#include <algorithm>
#include <stdexcept>

#include "reports/report_model.h"
#include "reports/templates_embedded.h"
#include "reports/units.h"

namespace kvsweep::reports {
namespace {

namespace mustache = kainjow::mustache;

// The template closes sections that may be false at the end of a content line rather than
// on a line of their own: kainjow keeps the newline after a standalone closing tag of a
// skipped section, which would put a blank line inside a markdown table.
constexpr const char* kTemplateName = "report.md";

// A user string inside a table cell: `|` would end the cell and a newline the row. Nothing
// else is escaped: names and errors should read as the user wrote them.
std::string table_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string status_text(const store::CellRow& cell) {
  std::string text = cell.status.empty() ? "no status" : cell.status;
  if (!cell.error.empty()) text += ": " + cell.error;
  return table_cell(text);
}

// "3 timeout, 1 http_status", most frequent first, as wrk prints its error counts.
std::string failure_kinds(const CellMetrics& m) {
  std::vector<std::pair<std::string, std::int64_t>> kinds(m.failed_by_kind.begin(),
                                                          m.failed_by_kind.end());
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [kind, count] : kinds) {
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " +
            (kind.empty() ? std::string("unknown") : kind);
  }
  return text;
}

mustache::data row_data(const StrategyRow& row) {
  const CellMetrics& m = row.metrics;
  mustache::data d;
  d.set("label", table_cell(row.label));
  d.set("measured", row.measured);
  d.set("status", status_text(row.cell));
  d.set("ok", std::to_string(m.ok));
  d.set("failed", std::to_string(m.failed));
  d.set("ttft_mean", format_ms(m.ttft_ms.mean));
  d.set("ttft_median", format_ms(m.ttft_ms.median));
  d.set("ttft_p95", format_ms(m.ttft_ms.p95));
  d.set("ttft_p99", format_ms(m.ttft_ms.p99));
  d.set("tpot_mean", format_ms(m.tpot_ms.mean));
  d.set("itl_mean", format_ms(m.itl_ms.mean));
  d.set("e2e_mean", format_ms(m.e2e_ms.mean));
  d.set("request_throughput", format_rate(m.request_throughput));
  d.set("output_throughput", format_rate(m.output_throughput));
  d.set("total_token_throughput", format_rate(m.total_token_throughput));
  d.set("kv_hit_server", format_percent(m.kv_hit_rate_server));
  d.set("cache_hit_client", format_percent(m.cache_hit_client));
  return d;
}

mustache::data ratio_data(const StrategyRow& row) {
  const BaselineRatios& r = *row.vs_baseline;
  mustache::data d;
  d.set("label", table_cell(row.label));
  d.set("ttft_mean", format_ratio(r.ttft_mean));
  d.set("ttft_p99", format_ratio(r.ttft_p99));
  d.set("tpot_mean", format_ratio(r.tpot_mean));
  d.set("itl_mean", format_ratio(r.itl_mean));
  d.set("e2e_mean", format_ratio(r.e2e_mean));
  d.set("request_throughput", format_ratio(r.request_throughput));
  d.set("output_throughput", format_ratio(r.output_throughput));
  d.set("total_token_throughput", format_ratio(r.total_token_throughput));
  return d;
}

mustache::data level_data(const ConcurrencyLevel& level, const std::string& baseline) {
  mustache::data rows{mustache::data::type::list};
  mustache::data failures{mustache::data::type::list};
  mustache::data ratios{mustache::data::type::list};
  for (const StrategyRow& row : level.rows) {
    rows.push_back(row_data(row));
    if (row.measured && row.metrics.failed > 0) {
      mustache::data failure;
      failure.set("label", row.label);
      failure.set("kinds", failure_kinds(row.metrics));
      failures.push_back(failure);
    }
    if (row.vs_baseline) ratios.push_back(ratio_data(row));
  }
  mustache::data d;
  d.set("concurrency", std::to_string(level.concurrency));
  d.set("rows", rows);
  d.set("has_failures", !failures.is_empty_list());
  d.set("failures", failures);
  d.set("has_ratios", !ratios.is_empty_list());
  d.set("baseline", baseline);
  d.set("ratios", ratios);
  return d;
}

mustache::data report_data(const ReportModel& model) {
  mustache::data setup{mustache::data::type::list};
  for (const SetupLine& line : model.setup) {
    mustache::data d;
    d.set("label", line.label);
    d.set("value", line.value);
    setup.push_back(d);
  }
  mustache::data levels{mustache::data::type::list};
  for (const ConcurrencyLevel& level : model.levels) {
    levels.push_back(level_data(level, model.baseline));
  }
  mustache::data d;
  d.set("name", model.experiment.name);
  d.set("setup", setup);
  d.set("levels", levels);
  return d;
}

}  // namespace

std::string render_markdown(const store::Store& store, std::int64_t experiment_id) {
  const ReportModel model = build_report_model(store, experiment_id);
  const auto text = embedded_template(kTemplateName);
  if (!text) throw std::logic_error("template report.md.mustache was not embedded at build time");
  mustache::mustache tmpl{std::string(*text)};
  if (!tmpl.is_valid()) {
    throw std::logic_error("templates/report.md.mustache: " + tmpl.error_message());
  }
  // Markdown, not HTML: values must reach the output exactly as units.cc formatted them.
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  return tmpl.render(report_data(model));
}

}  // namespace kvsweep::reports
