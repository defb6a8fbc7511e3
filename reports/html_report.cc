// The HTML report: the shared report view plus SVG charts, through report.html.mustache.
#include "reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "reports/capacity_view.h"
#include "reports/report_view.h"
#include "reports/svg_chart.h"

namespace kvsweep::reports {
namespace {

namespace mustache = kainjow::mustache;

constexpr const char* kTemplateName = "report.html";

// Strategies (row labels) in first-seen order, so colours follow the plan's order.
std::vector<std::string> series_labels(const figures::ReportModel& model) {
  std::vector<std::string> labels;
  for (const auto& level : model.levels) {
    for (const auto& row : level.rows) {
      if (std::find(labels.begin(), labels.end(), row.label) == labels.end()) {
        labels.push_back(row.label);
      }
    }
  }
  return labels;
}

template <typename Value>
std::vector<ChartSeries> per_strategy(const figures::ReportModel& model, Value value) {
  std::vector<ChartSeries> series;
  for (const std::string& label : series_labels(model)) {
    ChartSeries s{label, {}};
    for (const auto& level : model.levels) {
      for (const auto& row : level.rows) {
        if (row.label != label || !row.measured || row.metrics.ok == 0) continue;
        // Unknown figures (total tok/s without prompt counts) are left out, not drawn as 0.
        const std::optional<double> y = value(row.metrics);
        if (y) s.points.push_back({static_cast<double>(level.concurrency), *y});
      }
    }
    series.push_back(std::move(s));
  }
  return series;
}

ChartFrame frame(const std::string& title, const std::string& x, const std::string& y) {
  ChartFrame f;
  f.title = title;
  f.x_label = x;
  f.y_label = y;
  return f;
}

}  // namespace

std::vector<std::string> report_charts(const figures::ReportModel& model) {
  // A search's answer first: latency against load per arm, the SLO line, the probes.
  std::vector<std::string> charts =
      model.capacity ? capacity_charts(*model.capacity) : std::vector<std::string>{};
  charts.push_back(svg_line_chart(
      frame("Mean TTFT vs concurrency", "concurrency", "mean TTFT (ms)"),
      per_strategy(model, [](const figures::CellMetrics& m) { return m.ttft_ms.mean; }), true));
  charts.push_back(svg_line_chart(
      frame("p95 TTFT vs concurrency", "concurrency", "p95 TTFT (ms)"),
      per_strategy(model, [](const figures::CellMetrics& m) { return m.ttft_ms.p95; }), true));
  charts.push_back(svg_line_chart(
      frame("Throughput vs concurrency", "concurrency", "total tok/s"),
      per_strategy(model, [](const figures::CellMetrics& m) { return m.total_token_throughput; }),
      true));

  BarData hits;
  hits.series = series_labels(model);
  for (const auto& level : model.levels)
    hits.categories.push_back(std::to_string(level.concurrency));
  for (const std::string& label : hits.series) {
    std::vector<double> values;
    for (const auto& level : model.levels) {
      double v = std::numeric_limits<double>::quiet_NaN();
      for (const auto& row : level.rows) {
        if (row.label == label && row.measured && row.metrics.kv_hit_rate_server) {
          v = *row.metrics.kv_hit_rate_server * 100;
        }
      }
      values.push_back(v);
    }
    hits.values.push_back(std::move(values));
  }
  charts.push_back(svg_grouped_bars(
      frame("KV cache hit rate (server) per level", "concurrency", "hit rate (%)"), hits));

  for (const auto& level : model.levels) {
    std::vector<ChartSeries> samples;
    for (const auto& row : level.rows) {
      if (!row.measured) continue;
      ChartSeries s{row.label, {}};
      for (double v : row.metrics.samples.ttft_ms) s.points.push_back({v, 0});
      samples.push_back(std::move(s));
    }
    charts.push_back(
        svg_cdf_chart(frame("TTFT CDF at concurrency " + std::to_string(level.concurrency),
                            "TTFT (ms)", "fraction of requests"),
                      samples));
  }
  return charts;
}

std::string render_html(const figures::ReportModel& model) {
  mustache::data data = report_view(model, [](const std::string& s) { return s; });
  mustache::data charts{mustache::data::type::list};
  for (const std::string& svg : report_charts(model)) {
    mustache::data d;
    d.set("svg", svg);  // built by svg_chart.cc, which escapes every string it embeds
    charts.push_back(d);
  }
  data.set("charts", charts);
  return render_embedded(kTemplateName, data, xml_escape);
}

std::string render_html(const store::StoreReader& store, std::int64_t experiment_id) {
  return render_html(figures::build_report_model(store, experiment_id));
}

}  // namespace kvsweep::reports
