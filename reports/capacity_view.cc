// The capacity section's template data and charts.
#include "reports/capacity_view.h"

#include <algorithm>

#include "figures/units.h"
#include "reports/svg_chart.h"

namespace kvsweep::reports {
namespace {

namespace mustache = kainjow::mustache;

std::string dollars(std::optional<double> value) {
  return value ? "$" + figures::format_fixed(*value, 3) : "-";
}

}  // namespace

void add_capacity_view(const std::optional<figures::CapacitySection>& section,
                       const TextFilter& text, mustache::data& d) {
  d.set("has_capacity", section.has_value());
  if (!section) return;
  std::string slo;
  for (const std::string& label : section->slo) slo += (slo.empty() ? "" : ", ") + label;
  d.set(
      "capacity_slo",
      text(section->knee_efficiency
               ? "none, so the knee: the highest load whose request throughput per unit of "
                 "load stays at or above " +
                     figures::format_number(*section->knee_efficiency * 100) +
                     "% of the lightest load's"
               : slo + " (" + figures::format_number(section->confidence * 100) + "% confidence)"));
  d.set("capacity_search",
        text(section->factor + " from " + figures::format_number(section->low) + " to " +
             figures::format_number(section->high) + " within " +
             figures::format_number(section->precision * 100) + "%" +
             (section->guide_experiment > 0
                  ? ", guided by predicted experiment " + std::to_string(section->guide_experiment)
                  : ", unguided")));
  d.set("capacity_baseline", text(section->baseline));
  mustache::data rows{mustache::data::type::list};
  for (const figures::CapacityRow& r : section->rows) {
    mustache::data row;
    row.set("arm", text(r.key));
    row.set("capacity", text(capacity_text(*section, r.capacity)));
    row.set("first_failing", text(capacity_text(*section, r.first_failing)));
    row.set("vs_baseline", text(r.vs_baseline ? figures::format_ratio(r.vs_baseline) : "-"));
    row.set("predicted", text(section->guide_experiment > 0 ? capacity_text(*section, r.predicted)
                                                            : std::string("-")));
    // What the guide saved: the prediction's own (unguided) search took this many.
    row.set("probes",
            std::to_string(r.probes) +
                (r.unguided_probes
                     ? " (unguided, predicted: " + std::to_string(*r.unguided_probes) + ")"
                     : std::string()));
    row.set("cost_output",
            text(dollars(r.cost ? std::optional<double>(r.cost->usd_per_million_output)
                                : std::nullopt)));
    row.set("cost_total", text(dollars(r.cost ? r.cost->usd_per_million_total : std::nullopt)));
    row.set("why", text(r.why));
    rows.push_back(row);
  }
  d.set("capacity_rows", rows);
}

std::vector<std::string> capacity_charts(const figures::CapacitySection& section) {
  std::vector<std::string> charts;
  if (section.y_label.empty()) return charts;
  for (const figures::CapacityRow& r : section.rows) {
    std::vector<figures::CapacityProbe> points = r.points;
    std::stable_sort(points.begin(), points.end(),
                     [](const figures::CapacityProbe& a, const figures::CapacityProbe& b) {
                       return a.load < b.load;
                     });
    ChartSeries curve{section.y_label, {}, SeriesStyle::kLine, 0};
    ChartSeries passed{"passed", {}, SeriesStyle::kMarkers, 2};
    ChartSeries failed{"failed", {}, SeriesStyle::kMarkers, 3};
    ChartSeries other{"undecided or not counted", {}, SeriesStyle::kMarkers, 4};
    double low = 0;
    double high = 0;
    for (const figures::CapacityProbe& p : points) {
      if (!p.y) continue;
      low = curve.points.empty() ? p.load : std::min(low, p.load);
      high = std::max(high, p.load);
      curve.points.push_back({p.load, *p.y});
      ChartSeries& marks = p.outcome == "pass" ? passed : p.outcome == "fail" ? failed : other;
      marks.points.push_back({p.load, *p.y});
    }
    std::vector<ChartSeries> series = {curve};
    if (section.threshold_ms && !curve.points.empty()) {
      series.push_back({"SLO " + figures::format_number(*section.threshold_ms) + " ms",
                        {{low, *section.threshold_ms}, {high, *section.threshold_ms}},
                        SeriesStyle::kDashed,
                        1});
    }
    for (ChartSeries* s : {&passed, &failed, &other}) {
      if (!s->points.empty()) series.push_back(*s);
    }
    ChartFrame frame;
    frame.title = section.y_label.substr(0, section.y_label.find(" (")) + " against load: " + r.key;
    frame.x_label = section.factor == "concurrency" ? "in flight" : "request rate (req/s)";
    frame.y_label = section.y_label;
    charts.push_back(svg_line_chart(frame, series));
  }
  return charts;
}

}  // namespace kvsweep::reports
