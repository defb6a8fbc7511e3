// The history page's view: a metric over stored runs, its rolling median, regressions marked.
#include "serve/history_view.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/join.h"
#include "figures/run_comparison.h"
#include "reports/history.h"
#include "reports/svg_chart.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::ordered_json;

// The runs compared with the run before them, and (experiment, strategy, concurrency) -> the
// compare metrics that regressed.
struct Compared {
  std::set<std::int64_t> runs;
  std::map<std::tuple<std::int64_t, std::string, int>, std::vector<std::string>> marks;
};

// runs[i] (never the first) against runs[i - 1]: from the comparison stored when runs[i] ended,
// when it was made against that run with compare's default options (serve's); otherwise
// computed, for the runs from `first` on only.
Compared regressions(const store::FigureReader& store, const std::string& scenario,
                     const std::vector<std::int64_t>& runs, const CompareRuns& compare,
                     std::size_t first) {
  const std::string options = figures::compare_options_key({});
  std::map<std::int64_t, store::RunComparisonRow> stored;
  for (auto& row : store.run_comparisons(scenario)) {
    if (row.options == options) stored.emplace(row.experiment_id, std::move(row));
  }
  Compared out;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    std::optional<std::vector<figures::LevelRegressions>> levels;
    const auto it = stored.find(runs[i]);
    if (it != stored.end() && it->second.previous_id == runs[i - 1]) {
      try {
        levels = figures::regressions_from_json(it->second.regressions);
      } catch (const CorruptData&) {
        // A damaged row is computed again, as if it were not there.
      }
    }
    if (!levels && i >= first) levels = figures::regressions_of(compare(runs[i - 1], runs[i]));
    if (!levels) continue;
    out.runs.insert(runs[i]);
    for (auto& level : *levels) {
      out.marks[{runs[i], level.strategy, level.concurrency}] = std::move(level.metrics);
    }
  }
  return out;
}

std::string level_chart(const std::vector<reports::HistorySeries>& series, int concurrency,
                        const std::string& metric, const Json& marks_by_series) {
  std::vector<reports::ChartSeries> lines;
  std::vector<reports::ChartSeries> medians;
  reports::ChartSeries marked{
      "regression (compare vs previous run)", {}, reports::SeriesStyle::kMarkers};
  for (std::size_t i = 0; i < series.size(); ++i) {
    const auto& s = series[i];
    if (s.concurrency != concurrency) continue;
    reports::ChartSeries line{s.strategy, {}};
    reports::ChartSeries median{s.strategy + " rolling median",
                                {},
                                reports::SeriesStyle::kDashed,
                                static_cast<int>(lines.size())};  // its strategy's colour
    for (std::size_t p = 0; p < s.points.size(); ++p) {
      const auto& point = s.points[p];
      const double x = static_cast<double>(point.experiment_id);
      if (point.value) line.points.push_back({x, *point.value});
      if (point.baseline) median.points.push_back({x, *point.baseline});
      if (point.value && marks_by_series[i][p].get<bool>())
        marked.points.push_back({x, *point.value});
    }
    lines.push_back(std::move(line));
    if (!median.points.empty()) medians.push_back(std::move(median));
  }
  lines.insert(lines.end(), medians.begin(), medians.end());
  if (!marked.points.empty()) lines.push_back(std::move(marked));
  reports::ChartFrame frame;
  frame.title = metric + " at concurrency " + std::to_string(concurrency);
  frame.x_label = "experiment (run)";
  frame.y_label = metric;
  return reports::svg_line_chart(frame, lines, /*categorical_x=*/true);
}

}  // namespace

nlohmann::ordered_json history_view(const store::StoreReader& store, const std::string& scenario,
                                    const std::string& metric, int window,
                                    const CompareRuns& compare, bool charts,
                                    std::size_t compared_runs) {
  const auto series = reports::metric_history(store, scenario, metric, window);
  std::vector<std::int64_t> runs;
  std::set<std::string> names;
  for (const auto& e : store.experiments()) {
    names.insert(e.name);
    if (e.name == scenario && e.status != "running") runs.push_back(e.id);
  }
  // Runs without a stored comparison are compared here from runs[first] on.
  const std::size_t first = compared_runs >= runs.size() ? 1 : runs.size() - compared_runs;
  const Compared compared = regressions(store, scenario, runs, compare, first);
  const auto& marked = compared.marks;
  Json list = Json::array();
  Json marks_by_series = Json::array();
  std::set<int> levels;
  for (const auto& s : series) {
    levels.insert(s.concurrency);
    Json points = Json::array();
    Json marks = Json::array();
    for (const auto& p : s.points) {
      const auto it = marked.find({p.experiment_id, s.strategy, s.concurrency});
      const bool regression = it != marked.end();
      const bool was_compared = compared.runs.count(p.experiment_id) > 0;
      marks.push_back(regression);
      auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
      points.push_back({{"experiment_id", p.experiment_id},
                        {"started_at", p.started_at},
                        {"value", opt(p.value)},
                        {"baseline", opt(p.baseline)},
                        {"deviation_pct", p.deviation ? Json(*p.deviation * 100) : Json(nullptr)},
                        {"compared", was_compared},
                        {"regression", was_compared ? Json(regression) : Json(nullptr)},
                        {"regressed_metrics", regression ? join(it->second) : ""},
                        {"url", "/experiments/" + std::to_string(p.experiment_id)}});
    }
    marks_by_series.push_back(marks);
    list.push_back({{"strategy", s.strategy}, {"concurrency", s.concurrency}, {"points", points}});
  }
  auto choices = [](const auto& values, const std::string& chosen) {
    Json out = Json::array();
    for (const std::string& v : values) out.push_back({{"value", v}, {"selected", v == chosen}});
    return out;
  };
  Json view = {{"scenario", scenario},
               {"metric", metric},
               {"window", window},
               {"metrics", reports::history_metrics()},
               {"scenarios", Json(std::vector<std::string>(names.begin(), names.end()))},
               {"metric_choices", choices(reports::history_metrics(), metric)},
               {"scenario_choices", choices(names, scenario)},
               {"runs", runs.size()},
               {"compared_runs", compared.runs.size()},
               {"compare_param",
                compared_runs == kAllRuns ? std::string("all") : std::to_string(compared_runs)},
               {"series", list}};
  if (charts) {
    Json level_charts = Json::array();
    for (int level : levels) {
      level_charts.push_back(
          {{"concurrency", level}, {"svg", level_chart(series, level, metric, marks_by_series)}});
    }
    view["charts"] = level_charts;
  }
  return view;
}

}  // namespace kvsweep::serve
