// JSON views of stored experiments and cells for serve's pages and API.
#include "serve/store_views.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "common/stats.h"
#include "figures/cell_metrics.h"
#include "figures/cell_summary.h"
#include "figures/replica_breakdown.h"
#include "figures/report_model.h"
#include "figures/validity_json.h"
#include "reports/level_winners.h"

namespace kvsweep::serve {

std::string store_file_name(const store::RunReader& store) {
  return std::filesystem::path(store.path()).filename().string();
}

namespace {

using Json = nlohmann::ordered_json;

// Quantiles drawn for a CDF: enough steps to look continuous, few enough for a small page.
constexpr int kCdfPoints = 200;

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json percent(const std::optional<double>& fraction) {
  return fraction ? Json(*fraction * 100) : Json(nullptr);
}

// "sim, 4 replicas, profile demo": the list's short form of the setup's target.
std::string short_target(const store::ExperimentRow& e) {
  if (!e.setup.target) return "";
  const store::TargetSetup& t = *e.setup.target;
  std::string text = t.kind;
  if (t.replicas && *t.replicas > 0) text += ", " + std::to_string(*t.replicas) + " replicas";
  if (t.profile && !t.profile->empty()) text += ", profile " + *t.profile;
  if (t.stands_in_for) text += " (for " + *t.stands_in_for + ")";
  return text;
}

// "45 s", "3 min 12 s", "2 h 05 min".
std::string duration_text(double s) {
  const auto total = static_cast<long long>(std::llround(s));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof text, "%lld s", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lld min %02lld s", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld h %02lld min", total / 3600, (total % 3600) / 60);
  }
  return text;
}

std::string experiment_url(std::int64_t id) { return "/experiments/" + std::to_string(id); }

Json cell_figures(const figures::CellMetrics& m) {
  const bool timed = m.ok > 0;
  return {{"ok", m.ok},
          {"failed", m.failed},
          {"any_failed", m.failed > 0},
          {"ttft_p50_ms", timed ? Json(m.ttft_ms.median) : Json(nullptr)},
          {"ttft_p95_ms", timed ? Json(m.ttft_ms.p95) : Json(nullptr)},
          {"ttft_mean_ms", timed ? Json(m.ttft_ms.mean) : Json(nullptr)},
          {"tpot_mean_ms", m.tpot_ms.count > 0 ? Json(m.tpot_ms.mean) : Json(nullptr)},
          {"e2e_p95_ms", timed ? Json(m.e2e_ms.p95) : Json(nullptr)},
          {"requests_per_s", m.request_throughput},
          {"output_tokens_per_s", m.output_throughput},
          {"total_tokens_per_s", optional_number(m.total_token_throughput)},
          {"kv_hit_server_pct", percent(m.kv_hit_rate_server)},
          {"cache_hit_client_pct", percent(m.cache_hit_client)}};
}

Json progress_json(const std::vector<store::ProgressSnapshot>& snapshots) {
  Json list = Json::array();
  for (const auto& p : snapshots) {
    list.push_back({{"phase", p.phase},
                    {"wall_s", p.wall_s},
                    {"elapsed_s", p.elapsed_s},
                    {"done", p.done},
                    {"total", p.total},
                    {"failed", p.failed},
                    {"requests_per_s", p.requests_per_s},
                    {"ttft_p50_ms", p.ttft_p50_ms >= 0 ? Json(p.ttft_p50_ms) : Json(nullptr)},
                    {"ttft_p95_ms", p.ttft_p95_ms >= 0 ? Json(p.ttft_p95_ms) : Json(nullptr)}});
  }
  return list;
}

Json commands_json(const std::vector<store::CommandRow>& commands) {
  Json list = Json::array();
  for (const auto& c : commands) {
    std::string argv;
    for (const auto& word : c.argv) argv += (argv.empty() ? "" : " ") + word;
    list.push_back({{"step", c.step},
                    {"argv", c.argv},
                    {"command", argv},
                    {"exit_code", c.exit_code},
                    {"exited", c.exit_code >= 0},
                    {"seconds", c.seconds},
                    {"stdout", c.out},
                    {"stderr", c.err}});
  }
  return list;
}

store::ExperimentRow experiment_or_throw(const store::RunReader& store, std::int64_t id) {
  const auto e = store.experiment(id);
  if (!e) throw NotFound{"no experiment " + std::to_string(id) + " in " + store_file_name(store)};
  return *e;
}

}  // namespace

std::optional<double> parse_utc_iso8601(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

std::string experiment_headline(const store::StoreReader& store, const store::ExperimentRow& e) {
  const figures::ReportModel model =
      figures::build_report_model(store, e.id, figures::FigureSource::kSummaryFigures);
  // A search's answer is its capacities, not a level's winner among its probes.
  if (model.capacity) return figures::capacity_headline(*model.capacity);
  const auto verdicts = reports::level_winners(model);
  return verdicts.empty() ? "" : verdicts.back().text;
}

nlohmann::ordered_json experiments_view(const store::RunReader& store, const HeadlineOf& headline,
                                        double now_wall_s) {
  Json list = Json::array();
  auto rows = store.experiments();
  std::reverse(rows.begin(), rows.end());
  for (const auto& e : rows) {
    const auto cells = store.cells(e.id);
    const auto done = std::count_if(cells.begin(), cells.end(),
                                    [](const store::CellRow& c) { return c.status == "done"; });
    const auto failed = std::count_if(cells.begin(), cells.end(),
                                      [](const store::CellRow& c) { return c.status == "failed"; });
    const auto start = parse_utc_iso8601(e.started_at);
    const auto finish = e.status == "running" ? std::optional<double>(now_wall_s)
                                              : parse_utc_iso8601(e.finished_at);
    list.push_back(
        {{"id", e.id},
         {"name", e.name},
         {"scenario_path", e.scenario_path},
         {"target", short_target(e)},
         {"status", e.status},
         {"running", e.status == "running"},
         {"cells_done", done},
         {"cells_failed", failed},
         {"any_failed", failed > 0},
         {"cells_total", cells.size()},
         {"started_at", e.started_at},
         {"finished_at", e.finished_at},
         {"duration_s", start && finish ? Json(std::max(0.0, *finish - *start)) : Json(nullptr)},
         {"duration_text", start && finish ? duration_text(std::max(0.0, *finish - *start)) : ""},
         {"headline", headline(e)},
         {"url", experiment_url(e.id)}});
  }
  return {{"store", store_file_name(store)}, {"experiments", list}};
}

nlohmann::ordered_json experiment_view(const store::StoreReader& store,
                                       std::int64_t experiment_id) {
  experiment_or_throw(store, experiment_id);
  return experiment_view(store, figures::build_report_model(store, experiment_id));
}

nlohmann::ordered_json experiment_view(const store::RowReader& store,
                                       const figures::ReportModel& model) {
  const store::ExperimentRow& e = model.experiment;
  Json setup = Json::array();
  for (const auto& line : model.setup)
    setup.push_back({{"label", line.label}, {"value", line.value}});
  Json verdicts = Json::array();
  for (const auto& v : reports::level_winners(model)) {
    if (model.capacity) break;  // a search's probes: its capacity section answers instead
    verdicts.push_back({{"concurrency", v.concurrency}, {"text", v.text}});
  }
  Json cells = Json::array();
  for (const auto& level : model.levels) {
    for (const auto& row : level.rows) {
      const store::CellRow& c = row.cell;
      store::RequestCounts counts = store.request_counts(c.id);
      if (model.pruned && row.measured) {  // the rows are gone; the summary counted them
        counts.measured = row.metrics.ok + row.metrics.failed;
      }
      Json cell = {{"k", c.ordinal + 1},
                   {"label", row.label},
                   {"strategy", c.arm},
                   {"concurrency", c.concurrency},
                   {"repeat", c.repeat + 1},
                   {"status", c.status},
                   {"error", c.error},
                   {"started_at", c.started_at},
                   {"finished_at", c.finished_at},
                   {"requests", counts.measured},
                   {"warmup_requests", counts.warmup},
                   {"url", experiment_url(e.id) + "/cells/" + std::to_string(c.ordinal + 1)}};
      cell.update(cell_figures(row.metrics));
      cells.push_back(std::move(cell));
    }
  }
  std::sort(cells.begin(), cells.end(),
            [](const Json& a, const Json& b) { return a["k"].get<int>() < b["k"].get<int>(); });
  return {{"id", e.id},
          {"name", e.name},
          {"scenario_path", e.scenario_path},
          {"status", e.status},
          {"started_at", e.started_at},
          {"finished_at", e.finished_at},
          {"kvsweep_version", e.kvsweep_version},
          {"host", e.host},
          {"baseline", model.baseline},
          {"figures_source", model.figures_source},
          {"setup", setup},
          {"verdicts", verdicts},
          {"cells", cells},
          {"report_url", experiment_url(e.id) + "/report.html"}};
}

nlohmann::ordered_json cell_view(const store::StoreReader& store, std::int64_t experiment_id,
                                 int k) {
  const store::ExperimentRow e = experiment_or_throw(store, experiment_id);
  const auto cells = store.cells(experiment_id);
  const auto it = std::find_if(cells.begin(), cells.end(),
                               [k](const store::CellRow& c) { return c.ordinal + 1 == k; });
  if (it == cells.end()) {
    throw NotFound{"experiment " + std::to_string(experiment_id) + " has no cell " +
                   std::to_string(k) + " (it has " + std::to_string(cells.size()) + ")"};
  }
  const store::CellRow& c = *it;
  // A done cell's summary when it has one (its figures as computed when it ended, its CDF from
  // the TTFT histogram); else the rows as they stand.
  figures::CellMetrics m;
  figures::ReplicaBreakdown breakdown;
  const auto summary = c.status == "done" ? store.cell_summary(c.id) : std::nullopt;
  if (summary) {
    figures::CellSummary figures = figures::stored_summary(e, c, *summary);
    m = std::move(figures.metrics);
    breakdown = std::move(figures.replicas);
  } else {
    const auto requests = store.requests(c.id);
    const auto samples = store.metric_samples(c.id);
    m = figures::compute_cell_metrics(requests, samples, {}, store.cell_load(c.id),
                                      figures::validity_rules_of(e));
    breakdown = figures::replica_breakdown(requests, samples);
  }

  Json cdf = Json::array();
  const auto& ttft = m.samples.ttft_ms;
  if (!ttft.empty()) {
    for (int i = 0; i <= kCdfPoints; ++i) {
      const double fraction = static_cast<double>(i) / kCdfPoints;
      cdf.push_back({{"fraction", fraction}, {"ttft_ms", percentile(ttft, fraction * 100)}});
    }
  }
  Json replicas = Json::array();
  for (const auto& r : breakdown.replicas) {
    replicas.push_back({{"replica", r.replica},
                        {"requests", r.requests},
                        {"failed", r.failed},
                        {"share_pct", r.share * 100},
                        {"cache_hit_client_pct", percent(r.cache_hit_client)}});
  }
  Json sources = Json::array();
  for (const auto& s : breakdown.sources) {
    sources.push_back({{"source", s.source},
                       {"queries", static_cast<std::int64_t>(s.queries)},
                       {"share_pct", s.share * 100},
                       {"kv_hit_server_pct", percent(s.kv_hit_server)}});
  }
  Json failures = Json::array();
  for (const auto& [kind, count] : m.failed_by_kind) {
    const auto& first = m.first_failure_by_kind.at(kind);
    failures.push_back({{"kind", kind.empty() ? "unknown" : kind},
                        {"count", count},
                        {"first", figures::failure_text(first.http_status, first.error)}});
  }
  Json figures = cell_figures(m);
  Json view = {{"experiment_id", e.id},
               {"experiment_name", e.name},
               {"experiment_url", experiment_url(e.id)},
               {"k", k},
               {"cells_total", cells.size()},
               {"strategy", c.arm},
               {"concurrency", c.concurrency},
               {"repeat", c.repeat + 1},
               {"factors", c.factors.unreadable.empty() ? store::factors_object(c.factors)
                                                        : Json(c.factors.unreadable)},
               {"status", c.status},
               {"error", c.error},
               {"started_at", c.started_at},
               {"finished_at", c.finished_at},
               {"figures", figures},
               {"validity", figures::validity_json(m.validity)},
               {"verdict_line", figures::verdict_line(m.validity)},
               {"failures", failures},
               {"ttft_cdf", cdf},
               {"replicas", replicas},
               {"sources", sources},
               {"commands", commands_json(store.commands(c.id))},
               {"progress", progress_json(store.progress(c.id))}};
  if (k > 1) view["previous_url"] = experiment_url(e.id) + "/cells/" + std::to_string(k - 1);
  if (k < static_cast<int>(cells.size())) {
    view["next_url"] = experiment_url(e.id) + "/cells/" + std::to_string(k + 1);
  }
  return view;
}

}  // namespace kvsweep::serve
