// The running page's view: sweeps in progress, from cell rows and progress snapshots.
#include "serve/running_view.h"

#include <algorithm>

#include "figures/report_model.h"
#include "reports/svg_chart.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::ordered_json;

std::string cell_url(std::int64_t experiment_id, int k) {
  return "/experiments/" + std::to_string(experiment_id) + "/cells/" + std::to_string(k);
}

std::string cell_name(const store::CellRow& c) {
  return c.arm + " c=" + std::to_string(c.concurrency) +
         (c.repeat > 0 ? " #" + std::to_string(c.repeat + 1) : "");
}

Json ms_or_null(double ms) { return ms >= 0 ? Json(ms) : Json(nullptr); }

// The current phase's TTFT over its elapsed time.
std::string running_ttft_chart(const std::vector<store::ProgressSnapshot>& phase,
                               const std::string& title) {
  reports::ChartSeries p50{"TTFT p50", {}};
  reports::ChartSeries p95{"TTFT p95", {}};
  for (const auto& s : phase) {
    if (s.ttft_p50_ms >= 0) p50.points.push_back({s.elapsed_s, s.ttft_p50_ms});
    if (s.ttft_p95_ms >= 0) p95.points.push_back({s.elapsed_s, s.ttft_p95_ms});
  }
  reports::ChartFrame frame;
  frame.title = title;
  frame.x_label = "seconds into the phase";
  frame.y_label = "TTFT so far (ms)";
  return reports::svg_line_chart(frame, {p50, p95});
}

Json current_cell(std::int64_t experiment_id, const store::CellRow& c, std::size_t cells,
                  const std::vector<store::ProgressSnapshot>& snapshots, double now, bool charts,
                  Json& svg) {
  Json current = {{"k", c.ordinal + 1},
                  {"k_of_n", std::to_string(c.ordinal + 1) + " of " + std::to_string(cells)},
                  {"label", cell_name(c)},
                  {"strategy", c.arm},
                  {"concurrency", c.concurrency},
                  {"url", cell_url(experiment_id, c.ordinal + 1)}};
  if (snapshots.empty()) {
    current["phase"] = "preparing (deployment, readiness, cache)";
    current["has_progress"] = false;
    if (charts) svg = running_ttft_chart({}, "TTFT of the current cell");
    return current;
  }
  const store::ProgressSnapshot& last = snapshots.back();
  std::vector<store::ProgressSnapshot> phase;
  for (const auto& s : snapshots) {
    if (s.phase == last.phase) phase.push_back(s);
  }
  // Live rate: the requests finished between the last two snapshots of the phase.
  Json live_rate = nullptr;
  if (phase.size() >= 2) {
    const auto& a = phase[phase.size() - 2];
    const double dt = last.elapsed_s - a.elapsed_s;
    if (dt > 0) live_rate = static_cast<double>(last.done - a.done) / dt;
  }
  const double ago = std::max(0.0, now - last.wall_s);
  current.update({{"has_progress", true},
                  {"phase", last.phase},
                  {"done", last.done},
                  {"total", last.total},
                  {"has_total", last.total > 0},
                  {"failed", last.failed},
                  {"elapsed_s", last.elapsed_s},
                  {"requests_per_s", last.requests_per_s},
                  {"live_requests_per_s", live_rate},
                  {"ttft_p50_ms", ms_or_null(last.ttft_p50_ms)},
                  {"ttft_p95_ms", ms_or_null(last.ttft_p95_ms)},
                  {"updated_s_ago", ago},
                  {"quiet", ago > kQuietAfterS},
                  {"metrics_urls", last.metrics_urls}});
  if (charts)
    svg = running_ttft_chart(
        phase, "TTFT of cell " + std::to_string(c.ordinal + 1) + " (" + last.phase + ")");
  return current;
}

}  // namespace

nlohmann::ordered_json running_view(const store::StoreReader& store, double now_wall_s,
                                    bool charts) {
  Json running = Json::array();
  std::optional<store::ExperimentRow> latest;
  for (const auto& e : store.experiments()) {
    latest = e;
    if (e.status != "running") continue;
    const auto cells = store.cells(e.id);
    Json finished = Json::array();
    Json current = nullptr;
    Json svg = nullptr;
    int done = 0;
    int failed = 0;
    for (const auto& c : cells) {
      done += c.status == "done";
      failed += c.status == "failed";
      if (c.status == "done" || c.status == "failed") {
        finished.push_back({{"k", c.ordinal + 1},
                            {"label", cell_name(c)},
                            {"status", c.status},
                            {"url", cell_url(e.id, c.ordinal + 1)}});
      } else if (c.status == "running") {
        current =
            current_cell(e.id, c, cells.size(), store.progress(c.id), now_wall_s, charts, svg);
      }
    }
    Json item = {{"id", e.id},
                 {"name", e.name},
                 {"url", "/experiments/" + std::to_string(e.id)},
                 {"started_at", e.started_at},
                 {"cells_total", cells.size()},
                 {"cells_done", done},
                 {"cells_failed", failed},
                 {"current", current},
                 {"finished", finished}};
    if (charts) item["svg"] = svg;
    running.push_back(std::move(item));
  }
  Json last = nullptr;
  if (latest) {
    last = {{"id", latest->id},
            {"name", latest->name},
            {"status", latest->status},
            {"url", "/experiments/" + std::to_string(latest->id)}};
  }
  return {{"now_wall_s", now_wall_s},
          {"any_running", !running.empty()},
          {"running", running},
          {"latest", last}};
}

RunningTarget running_target(const store::StoreReader& store) {
  RunningTarget target;
  double newest = -1;
  for (const auto& e : store.experiments()) {
    if (e.status != "running") continue;
    for (const auto& c : store.cells(e.id)) {
      if (c.status != "running") continue;
      const auto snapshots = store.progress(c.id);
      if (snapshots.empty() || snapshots.back().wall_s <= newest) continue;
      newest = snapshots.back().wall_s;
      target = {snapshots.back().metrics_urls, c.concurrency, e.id};
    }
  }
  return target;
}

}  // namespace kvsweep::serve
