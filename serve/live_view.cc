// The live page's view: live figures from /metrics against a stored baseline.
#include "serve/live_view.h"

#include <algorithm>

#include "figures/report_model.h"
#include "figures/units.h"
#include "reports/svg_chart.h"
#include "serve/store_views.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::ordered_json;

Json opt(const std::optional<double>& v, double scale = 1) {
  return v ? Json(*v * scale) : Json(nullptr);
}

std::string baseline_name(const Baseline& b) {
  return b.arm + " @ " + std::to_string(b.concurrency) + ", experiment " +
         std::to_string(b.experiment_id);
}

// A stored figure as a flat dashed line over the live points' time span, in the colour of the
// live series it is the reference for.
reports::ChartSeries flat(const std::string& name, double y, double from, double to, int colour) {
  return {name, {{from, y}, {to, y}}, reports::SeriesStyle::kDashed, colour};
}

std::string ttft_chart(const LiveSnapshot& s, const std::optional<Baseline>& baseline) {
  reports::ChartSeries p50{"live TTFT p50", {}};
  reports::ChartSeries p95{"live TTFT p95", {}};
  for (const auto& p : s.points) {
    const double t = p.wall_s - s.started_wall_s;
    if (p.ttft_p50_ms) p50.points.push_back({t, *p.ttft_p50_ms});
    if (p.ttft_p95_ms) p95.points.push_back({t, *p.ttft_p95_ms});
  }
  std::vector<reports::ChartSeries> series = {p50, p95};
  if (baseline) {
    const double from = 0;
    const double to =
        s.points.empty() ? 1 : std::max(1.0, s.points.back().wall_s - s.started_wall_s);
    if (baseline->ttft_p50_ms) {
      series.push_back(flat("baseline p50 (" + baseline_name(*baseline) + ")",
                            *baseline->ttft_p50_ms, from, to, 0));
    }
    if (baseline->ttft_p95_ms) {
      series.push_back(flat("baseline p95 (" + baseline_name(*baseline) + ")",
                            *baseline->ttft_p95_ms, from, to, 1));
    }
  }
  reports::ChartFrame frame;
  frame.title = "Live TTFT vs the stored baseline";
  frame.x_label = "seconds since this page started scraping";
  frame.y_label = "TTFT (ms)";
  return reports::svg_line_chart(frame, series);
}

std::string hit_chart(const LiveSnapshot& s, const std::optional<Baseline>& baseline) {
  reports::ChartSeries live{"live KV hit", {}};
  for (const auto& p : s.points) {
    if (p.kv_hit) live.points.push_back({p.wall_s - s.started_wall_s, *p.kv_hit * 100});
  }
  std::vector<reports::ChartSeries> series = {live};
  if (baseline && baseline->kv_hit) {
    const double to =
        s.points.empty() ? 1 : std::max(1.0, s.points.back().wall_s - s.started_wall_s);
    series.push_back(flat("baseline KV hit (" + baseline_name(*baseline) + ")",
                          *baseline->kv_hit * 100, 0, to, 0));
  }
  reports::ChartFrame frame;
  frame.title = "Live KV cache hit rate";
  frame.x_label = "seconds since this page started scraping";
  frame.y_label = "hit rate (%)";
  return reports::svg_line_chart(frame, series);
}

}  // namespace

Baseline find_baseline(const store::StoreReader& store, std::int64_t experiment_id,
                       const std::string& arm, int concurrency) {
  const auto e = store.experiment(experiment_id);
  if (!e)
    throw NotFound{"no experiment " + std::to_string(experiment_id) + " in " +
                   store_file_name(store)};
  const figures::ReportModel model = figures::build_report_model(store, experiment_id);
  if (model.levels.empty())
    throw NotFound{"experiment " + std::to_string(experiment_id) + " has no cells"};
  const figures::ConcurrencyLevel* level = &model.levels.front();
  std::string levels;
  for (const auto& l : model.levels) {
    levels += (levels.empty() ? "" : ", ") + std::to_string(l.concurrency);
    if (l.concurrency == concurrency) level = &l;
  }
  if (concurrency != 0 && level->concurrency != concurrency) {
    throw NotFound{"experiment " + std::to_string(experiment_id) + " has no concurrency " +
                   std::to_string(concurrency) + " (it has " + levels + ")"};
  }
  std::string arms;
  for (const auto& row : level->rows) {
    arms += (arms.empty() ? "" : ", ") + row.label;
    if (row.label != arm) continue;
    Baseline b{experiment_id, e->name, arm, level->concurrency, {}, {}, {}};
    if (row.measured && row.metrics.ok > 0) {
      b.ttft_p50_ms = row.metrics.ttft_ms.median;
      b.ttft_p95_ms = row.metrics.ttft_ms.p95;
    }
    b.kv_hit = row.metrics.kv_hit_rate_server ? row.metrics.kv_hit_rate_server
                                              : row.metrics.cache_hit_client;
    return b;
  }
  throw NotFound{"experiment " + std::to_string(experiment_id) + " has no arm \"" + arm +
                 "\" at concurrency " + std::to_string(level->concurrency) + " (it has " + arms +
                 ")"};
}

nlohmann::ordered_json baseline_choices(const store::StoreReader& store,
                                        std::optional<std::int64_t> experiment_id,
                                        const std::string& arm, int concurrency) {
  Json experiments = Json::array();
  auto rows = store.experiments();
  std::reverse(rows.begin(), rows.end());
  for (const auto& e : rows) {
    experiments.push_back({{"id", e.id},
                           {"label", std::to_string(e.id) + " " + e.name + " (" + e.status + ")"},
                           {"selected", experiment_id && *experiment_id == e.id}});
  }
  Json arms = Json::array();
  Json levels = Json::array();
  if (experiment_id && store.experiment(*experiment_id)) {
    const figures::ReportModel model = figures::build_report_model(store, *experiment_id);
    std::vector<std::string> seen;
    for (const auto& level : model.levels) {
      levels.push_back(
          {{"value", level.concurrency}, {"selected", level.concurrency == concurrency}});
      for (const auto& row : level.rows) {
        if (std::find(seen.begin(), seen.end(), row.label) != seen.end()) continue;
        seen.push_back(row.label);
        arms.push_back({{"value", row.label}, {"selected", row.label == arm}});
      }
    }
  }
  return {{"experiments", experiments}, {"arms", arms}, {"levels", levels}};
}

nlohmann::ordered_json live_view(const LiveSnapshot& snapshot, const LiveSettings& settings,
                                 const std::optional<Baseline>& baseline, double now_wall_s,
                                 bool charts) {
  Json sources = Json::array();
  int fresh = 0;
  for (const auto& s : snapshot.sources) {
    fresh += !s.stale;
    sources.push_back(
        {{"url", s.url},
         {"stale", s.stale},
         {"error", s.error},
         {"last_ok_s_ago", s.last_ok_wall_s ? Json(now_wall_s - *s.last_ok_wall_s) : Json(nullptr)},
         {"ttft_metric", s.ttft_metric}});
  }
  Json points = Json::array();
  for (const auto& p : snapshot.points) {
    points.push_back({{"t_s", p.wall_s - snapshot.started_wall_s},
                      {"wall_s", p.wall_s},
                      {"ttft_p50_ms", opt(p.ttft_p50_ms)},
                      {"ttft_p95_ms", opt(p.ttft_p95_ms)},
                      {"kv_hit_pct", opt(p.kv_hit, 100)},
                      {"requests", p.requests},
                      {"fresh_sources", p.fresh_sources}});
  }
  Json base = nullptr;
  if (baseline) {
    base = {{"experiment_id", baseline->experiment_id},
            {"experiment_name", baseline->experiment_name},
            {"arm", baseline->arm},
            {"concurrency", baseline->concurrency},
            {"ttft_p50_ms", opt(baseline->ttft_p50_ms)},
            {"ttft_p95_ms", opt(baseline->ttft_p95_ms)},
            {"kv_hit_pct", opt(baseline->kv_hit, 100)}};
  }
  Json view = {{"window_s", settings.window_s},
               {"interval_s", settings.interval_s},
               {"window_text", figures::format_rate(settings.window_s)},
               {"interval_text", figures::format_rate(settings.interval_s)},
               {"sources", sources},
               {"fresh_sources", fresh},
               {"points", points},
               {"latest", points.empty() ? Json(nullptr) : points.back()},
               {"baseline", base}};
  if (charts) {
    view["svg_ttft"] = ttft_chart(snapshot, baseline);
    view["svg_hit"] = hit_chart(snapshot, baseline);
  }
  return view;
}

}  // namespace kvsweep::serve
