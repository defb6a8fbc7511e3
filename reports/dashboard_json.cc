// The dashboard baseline JSON: metric series per strategy over concurrency.
#include "reports/dashboard_json.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;
using Extract = std::function<std::optional<double>(const figures::CellMetrics&)>;

struct DashboardMetric {
  const char* key;
  const char* unit;
  const char* better;  // "lower" | "higher"
  Extract value;
  // Written only when some cell of the run has a value: a figure only some targets have
  // (llm-d's endpoint picker's), which every other run's file would carry as nulls.
  bool only_when_present = false;
};

std::optional<double> latency(const SampleSummary& s, double SampleSummary::*field) {
  if (s.count == 0) return std::nullopt;
  return s.*field;
}

const std::vector<DashboardMetric>& dashboard_metrics() {
  static const std::vector<DashboardMetric> kDefs = {
      {"ttft_mean_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.ttft_ms, &SampleSummary::mean); }},
      {"ttft_p50_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.ttft_ms, &SampleSummary::median); }},
      {"ttft_p95_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.ttft_ms, &SampleSummary::p95); }},
      {"ttft_p99_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.ttft_ms, &SampleSummary::p99); }},
      {"tpot_mean_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.tpot_ms, &SampleSummary::mean); }},
      {"itl_mean_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.itl_ms, &SampleSummary::mean); }},
      {"e2e_mean_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.e2e_ms, &SampleSummary::mean); }},
      {"e2e_p95_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return latency(m.e2e_ms, &SampleSummary::p95); }},
      {"request_throughput", "req/s", "higher",
       [](const figures::CellMetrics& m) -> std::optional<double> {
         if (m.window_s <= 0) return std::nullopt;
         return m.request_throughput;
       }},
      {"output_throughput", "tok/s", "higher",
       [](const figures::CellMetrics& m) -> std::optional<double> {
         if (m.window_s <= 0) return std::nullopt;
         return m.output_throughput;
       }},
      {"total_token_throughput", "tok/s", "higher",
       [](const figures::CellMetrics& m) -> std::optional<double> {
         if (m.window_s <= 0) return std::nullopt;
         return m.total_token_throughput;
       }},
      {"kv_hit_rate", "fraction", "higher",
       [](const figures::CellMetrics& m) { return m.kv_hit_rate_server; }},
      {"cache_hit_client", "fraction", "higher",
       [](const figures::CellMetrics& m) { return m.cache_hit_client; }},
      {"kv_usage_max", "fraction", "lower",
       [](const figures::CellMetrics& m) { return m.kv_usage_max; }},
      {"preemptions", "count", "lower",
       [](const figures::CellMetrics& m) -> std::optional<double> {
         if (!m.preemptions) return std::nullopt;
         return static_cast<double>(*m.preemptions);
       }},
      {"spec_decode_acceptance", "fraction", "higher",
       [](const figures::CellMetrics& m) { return m.spec_decode_acceptance; }},
      // What llm-d's endpoint picker believed the chosen replica held, and how long it took.
      {"epp_prefix_hit_ratio", "fraction", "higher",
       [](const figures::CellMetrics& m) { return m.epp_prefix_hit_ratio; }, true},
      {"epp_scheduling_ms", "ms", "lower",
       [](const figures::CellMetrics& m) { return m.epp_scheduling_ms; }, true},
  };
  return kDefs;
}

// Six significant decimals keep the file diffable without losing anything a chart shows.
Json number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return std::round(*v * 1e6) / 1e6;
}

// The first measured repeat of a strategy at a level, or nullptr.
const figures::StrategyRow* row_for(const figures::ConcurrencyLevel& level,
                                    const std::string& strategy) {
  const figures::StrategyRow* found = nullptr;
  for (const auto& row : level.rows) {
    if (row.cell.arm != strategy || !row.measured) continue;
    if (found == nullptr || row.cell.repeat < found->cell.repeat) found = &row;
  }
  return found;
}

bool any_value(const figures::ReportModel& model, const DashboardMetric& def) {
  for (const auto& level : model.levels) {
    for (const auto& row : level.rows) {
      if (row.measured && def.value(row.metrics)) return true;
    }
  }
  return false;
}

std::vector<std::string> strategies(const figures::ReportModel& model) {
  std::vector<std::string> names;
  for (const auto& level : model.levels) {
    for (const auto& row : level.rows) {
      if (std::find(names.begin(), names.end(), row.cell.arm) == names.end()) {
        names.push_back(row.cell.arm);
      }
    }
  }
  return names;
}

Json series(const figures::ReportModel& model, const std::string& strategy,
            const DashboardMetric& def) {
  Json values = Json::array();
  Json verdicts = Json::array();  // whether each point measured the load it asked for
  bool judged = false;
  for (const auto& level : model.levels) {
    const figures::StrategyRow* row = row_for(level, strategy);
    values.push_back(row == nullptr ? Json(nullptr) : number(def.value(row->metrics)));
    const bool known = row != nullptr && row->metrics.validity.load_known;
    judged = judged || known;
    verdicts.push_back(known ? Json(verdict_name(row->metrics.validity.verdict)) : Json(nullptr));
  }
  Json s;
  s["strategy"] = strategy;
  s["values"] = values;
  if (judged) s["verdicts"] = verdicts;  // cells stored before verdicts existed have none
  return s;
}

// A searching experiment's answer: each arm's capacity within the SLO.
Json capacity_json(const figures::CapacitySection& section) {
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  Json arms = Json::array();
  for (const figures::CapacityRow& r : section.rows) {
    Json arm;
    arm["arm"] = r.key;
    arm["capacity"] = optional(r.capacity);
    arm["first_failing"] = optional(r.first_failing);
    arm["vs_baseline"] = optional(r.vs_baseline);
    arm["predicted"] = optional(r.predicted);
    arm["probes"] = r.probes;
    arm["unguided_probes"] = r.unguided_probes ? Json(*r.unguided_probes) : Json(nullptr);
    arm["usd_per_million_output_tokens"] =
        r.cost ? Json(r.cost->usd_per_million_output) : Json(nullptr);
    arm["usd_per_million_tokens"] =
        r.cost ? optional(r.cost->usd_per_million_total) : Json(nullptr);
    arm["why"] = r.why;
    arms.push_back(arm);
  }
  Json out;
  out["factor"] = section.factor;
  out["unit"] = section.unit;
  out["slo"] = section.slo;
  out["confidence"] = section.confidence;
  out["baseline"] = section.baseline;
  out["arms"] = arms;
  return out;
}

}  // namespace

std::vector<std::string> dashboard_metric_names() {
  std::vector<std::string> names;
  for (const DashboardMetric& def : dashboard_metrics()) names.emplace_back(def.key);
  return names;
}

Json dashboard_baseline_json(const figures::ReportModel& model) {
  const store::ExperimentRow& e = model.experiment;
  Json run;
  run["experiment_id"] = e.id;
  run["experiment_name"] = e.name;
  run["status"] = e.status;
  run["started_at"] = e.started_at;
  run["finished_at"] = e.finished_at.empty() ? Json(nullptr) : Json(e.finished_at);
  run["kvsweep_version"] = e.kvsweep_version;
  run["scenario_hash"] = e.scenario_hash;
  run["host"] = e.host;
  run["model"] = e.setup.model ? Json(*e.setup.model) : Json(nullptr);
  // "predicted", "simulated" or "measured": a dashboard must not plot a prediction as a run.
  run["figures"] = model.figures;

  const std::vector<std::string> names = strategies(model);
  const bool has_baseline = !model.baseline.empty() &&
                            std::find(names.begin(), names.end(), model.baseline) != names.end();
  Json concurrency = Json::array();
  for (const auto& level : model.levels) concurrency.push_back(level.concurrency);

  Json metrics;
  for (const DashboardMetric& def : dashboard_metrics()) {
    if (def.only_when_present && !any_value(model, def)) continue;
    Json m;
    m["unit"] = def.unit;
    m["better"] = def.better;
    m["baseline"] = has_baseline ? series(model, model.baseline, def) : Json(nullptr);
    Json treatments = Json::array();
    for (const std::string& name : names) {
      if (has_baseline && name == model.baseline) continue;
      treatments.push_back(series(model, name, def));
    }
    m["treatments"] = treatments;
    metrics[def.key] = m;
  }

  Json doc;
  doc["schema_version"] = kDashboardSchemaVersion;
  doc["kind"] = "kvsweep.dashboard_baseline";
  doc["run"] = run;
  doc["baseline_strategy"] = has_baseline ? Json(model.baseline) : Json(nullptr);
  doc["concurrency"] = concurrency;
  doc["metrics"] = metrics;
  if (model.capacity) doc["capacity"] = capacity_json(*model.capacity);
  return doc;
}

}  // namespace kvsweep::reports
