// Metric trends over stored runs of one scenario, with a rolling median baseline.
#include "reports/history.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/join.h"
#include "common/stats.h"
#include "figures/report_model.h"
#include "figures/units.h"
#include "reports/dashboard_json.h"

namespace kvsweep::reports {

std::vector<std::string> history_metrics() {
  // The dashboard JSON already defines every metric once; reuse its names and values.
  std::vector<std::string> names = dashboard_metric_names();
  // A searching scenario's answer per arm (the arm's key in the strategy column).
  names.push_back("capacity");
  return names;
}

std::vector<HistorySeries> metric_history(const store::StoreReader& store,
                                          const std::string& scenario_name,
                                          const std::string& metric, int window) {
  const auto known = history_metrics();
  if (std::find(known.begin(), known.end(), metric) == known.end()) {
    throw UsageError("unknown metric \"" + metric + "\" (one of: " + join(known) + ")");
  }
  std::vector<HistorySeries> series;
  auto find_series = [&series](const std::string& strategy, int concurrency) -> HistorySeries& {
    for (auto& s : series) {
      if (s.strategy == strategy && s.concurrency == concurrency) return s;
    }
    series.push_back({strategy, concurrency, {}});
    return series.back();
  };
  for (const auto& e : store.experiments()) {
    if (e.name != scenario_name) continue;
    if (metric == "capacity") {
      for (const store::ArmSearchRow& arm : store.arm_searches(e.id)) {
        HistoryPoint p;
        p.experiment_id = e.id;
        p.started_at = e.started_at;
        p.figures = figures::figures_kind(e);
        p.value = arm.capacity;
        find_series(arm.arm_key, arm.concurrency).points.push_back(p);
      }
      continue;
    }
    const auto doc = dashboard_baseline_json(
        build_report_model(store, e.id, figures::FigureSource::kSummaryFigures));
    // A run without the figure (an endpoint picker's, on another target) has no series of it.
    if (!doc["metrics"].contains(metric)) continue;
    const auto& m = doc["metrics"][metric];
    std::vector<nlohmann::ordered_json> all;
    if (!m["baseline"].is_null()) all.push_back(m["baseline"]);
    for (const auto& t : m["treatments"]) all.push_back(t);
    for (const auto& s : all) {
      for (std::size_t i = 0; i < doc["concurrency"].size(); ++i) {
        HistoryPoint p;
        p.experiment_id = e.id;
        p.started_at = e.started_at;
        p.figures = doc["run"]["figures"].get<std::string>();
        if (!s["values"][i].is_null()) p.value = s["values"][i].get<double>();
        find_series(s["strategy"].get<std::string>(), doc["concurrency"][i].get<int>())
            .points.push_back(p);
      }
    }
  }
  for (auto& s : series) {
    std::map<std::string, std::vector<double>> previous_by_figures;
    for (auto& p : s.points) {
      std::vector<double>& previous = previous_by_figures[p.figures];
      if (!previous.empty()) {
        std::vector<double> recent(
            previous.end() - std::min<std::ptrdiff_t>(window, previous.size()), previous.end());
        std::sort(recent.begin(), recent.end());
        p.baseline = percentile(recent, 50);
        if (p.value && *p.baseline != 0) p.deviation = *p.value / *p.baseline - 1;
      }
      if (p.value) previous.push_back(*p.value);
    }
  }
  std::stable_sort(
      series.begin(), series.end(),
      [](const HistorySeries& a, const HistorySeries& b) { return a.concurrency < b.concurrency; });
  return series;
}

std::string history_table(const std::vector<HistorySeries>& series, const std::string& metric) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %6s %6s  %-21s %14s %14s %10s  %s\n", "strategy", "conc",
                "run", "started", metric.c_str(), "baseline", "deviation", "figures");
  out += line;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      std::snprintf(
          line, sizeof line, "%-16s %6d %6lld  %-21s %14s %14s %10s  %s\n", s.strategy.c_str(),
          s.concurrency, static_cast<long long>(p.experiment_id), p.started_at.c_str(),
          p.value ? figures::format_fixed(*p.value, 2).c_str() : figures::kNotAvailable,
          p.baseline ? figures::format_fixed(*p.baseline, 2).c_str() : figures::kNotAvailable,
          p.deviation ? ((*p.deviation >= 0 ? "+" : "") +
                         figures::format_fixed(*p.deviation * 100, 1) + "%")
                            .c_str()
                      : figures::kNotAvailable,
          p.figures.c_str());
      out += line;
    }
  }
  if (series.empty()) out += "(no stored run of this scenario)\n";
  return out;
}

nlohmann::ordered_json history_json(const std::vector<HistorySeries>& series,
                                    const std::string& scenario_name, const std::string& metric,
                                    int window) {
  using Json = nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  Json list = Json::array();
  for (const auto& s : series) {
    Json points = Json::array();
    for (const auto& p : s.points) {
      points.push_back({{"experiment_id", p.experiment_id},
                        {"started_at", p.started_at},
                        {"figures", p.figures},
                        {"value", opt(p.value)},
                        {"baseline", opt(p.baseline)},
                        {"deviation", opt(p.deviation)}});
    }
    list.push_back({{"strategy", s.strategy}, {"concurrency", s.concurrency}, {"points", points}});
  }
  return {{"schema_version", 1},
          {"scenario", scenario_name},
          {"metric", metric},
          {"window", window},
          {"series", list}};
}

}  // namespace kvsweep::reports
