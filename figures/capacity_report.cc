// The capacity section, from the experiment's arm_searches rows, its setup and its cells.
#include "figures/capacity_report.h"

#include <map>
#include <nlohmann/json.hpp>

#include "figures/units.h"

namespace kvsweep::figures {
namespace {

// The latency the chart draws for a cell: `metric` at the percentile nearest `fraction` that
// the cell's figures keep (p90, p95, p99).
std::optional<double> chart_latency(const CellMetrics& m, const std::string& metric,
                                    double fraction) {
  const SampleSummary* s = metric == "ttft_ms"   ? &m.ttft_ms
                           : metric == "tpot_ms" ? &m.tpot_ms
                           : metric == "itl_ms"  ? &m.itl_ms
                           : metric == "e2e_ms"  ? &m.e2e_ms
                                                 : nullptr;
  if (s == nullptr || s->count == 0) return std::nullopt;
  return fraction >= 0.99 ? s->p99 : fraction >= 0.95 ? s->p95 : s->p90;
}

std::string percentile_name(double fraction) {
  return fraction >= 0.99 ? "p99" : fraction >= 0.95 ? "p95" : "p90";
}

std::string metric_name(const std::string& metric) {
  if (metric == "ttft_ms") return "TTFT";
  if (metric == "tpot_ms") return "TPOT";
  if (metric == "itl_ms") return "ITL";
  return "E2E";
}

}  // namespace

std::string capacity_text(const CapacitySection& section, std::optional<double> load) {
  if (!load) return "-";
  return format_number(*load) + " " + section.unit;
}

std::string capacity_headline(const CapacitySection& section) {
  std::string line;
  for (const CapacityRow& r : section.rows) {
    line += (line.empty() ? "" : ", ") + r.key + " " +
            (r.capacity ? capacity_text(section, r.capacity) : std::string("none"));
    if (r.vs_baseline) line += " (" + format_ratio(r.vs_baseline) + ")";
  }
  return (section.knee_efficiency ? "knee: " : "capacity within the SLO: ") + line;
}

std::vector<std::string> capacity_lines(const CapacitySection& section) {
  std::vector<std::string> lines;
  for (const CapacityRow& r : section.rows) {
    std::string line =
        std::string(section.knee_efficiency ? "  knee, " : "  capacity within the SLO, ") + r.key +
        ": ";
    if (!r.capacity) {
      lines.push_back(line + "none (" + r.why + ")");
      continue;
    }
    line += capacity_text(section, r.capacity);
    if (r.vs_baseline) line += ", " + format_ratio(r.vs_baseline) + " " + section.baseline + "'s";
    if (r.cost) {
      line +=
          "; $" + format_fixed(r.cost->usd_per_million_output, 3) + " per million output tokens";
      if (r.cost->usd_per_million_total) {
        line +=
            ", $" + format_fixed(*r.cost->usd_per_million_total, 3) + " per million tokens in all";
      }
    }
    lines.push_back(line);
  }
  return lines;
}

std::optional<CapacitySection> capacity_section(const store::FigureReader& store,
                                                const store::ExperimentRow& experiment,
                                                const std::vector<store::CellRow>& cells,
                                                const std::vector<CellMetrics>& metrics) {
  if (!experiment.setup.search) return std::nullopt;
  const store::SearchSetup& search = *experiment.setup.search;
  CapacitySection section;
  section.factor = search.factor.value_or("");
  section.unit = section.factor == "concurrency" ? "in flight" : "req/s";
  section.confidence = search.confidence.value_or(0.95);
  section.low = search.low.value_or(0.0);
  section.high = search.high.value_or(0.0);
  section.precision = search.precision.value_or(0.0);
  section.guide_experiment = search.guide_experiment.value_or(0);
  section.knee_efficiency = search.knee_efficiency;
  std::string chart_metric;
  double chart_fraction = 0.95;
  for (const store::SloSetup& q : search.slo.value_or(std::vector<store::SloSetup>{})) {
    section.slo.push_back(q.label);
    if (!chart_metric.empty()) continue;
    // The first requirement with a threshold is the one charted: TTFT first, as written.
    const std::pair<const char*, std::optional<double>> thresholds[] = {
        {"ttft_ms", q.ttft_ms}, {"tpot_ms", q.tpot_ms}, {"itl_ms", q.itl_ms}, {"e2e_ms", q.e2e_ms}};
    for (const auto& [metric, threshold] : thresholds) {
      if (threshold) {
        chart_metric = metric;
        section.threshold_ms = *threshold;
        chart_fraction = q.fraction.value_or(0.95);
        break;
      }
    }
  }
  if (!chart_metric.empty()) {
    section.y_label = percentile_name(chart_fraction) + " " + metric_name(chart_metric) + " (ms)";
  }
  CostSpec cost;
  if (search.cost) {
    cost.usd_per_gpu_hour = search.cost->usd_per_gpu_hour;
    cost.gpus = search.cost->gpus;
  }
  std::map<std::int64_t, const CellMetrics*> by_cell;
  for (std::size_t i = 0; i < cells.size() && i < metrics.size(); ++i) {
    by_cell[cells[i].id] = &metrics[i];
  }
  std::map<std::string, store::ArmSearchRow> predicted;
  if (section.guide_experiment > 0) {
    for (const store::ArmSearchRow& row : store.arm_searches(section.guide_experiment)) {
      predicted.emplace(row.arm_key, row);
    }
  }
  for (const store::ArmSearchRow& row : store.arm_searches(experiment.id)) {
    CapacityRow r;
    r.arm = row.arm;
    r.key = row.arm_key;
    r.concurrency = row.concurrency;
    r.capacity = row.capacity;
    r.first_failing = row.first_failing;
    if (const auto p = predicted.find(row.arm_key); p != predicted.end()) {
      r.predicted = p->second.capacity;
      const nlohmann::json probes = nlohmann::json::parse(p->second.probes, nullptr, false);
      if (probes.is_array()) r.unguided_probes = static_cast<int>(probes.size());
    }
    r.why = row.why.empty() ? "not finished" : row.why;
    const nlohmann::json probes = nlohmann::json::parse(row.probes, nullptr, false);
    if (probes.is_array()) {
      for (const nlohmann::json& p : probes) {
        if (!p.is_object()) continue;
        CapacityProbe point;
        point.load = p.value("load", 0.0);
        point.outcome = p.value("outcome", "");
        const auto m = by_cell.find(p.value("cell_id", std::int64_t{0}));
        if (m != by_cell.end() && !chart_metric.empty()) {
          point.y = chart_latency(*m->second, chart_metric, chart_fraction);
        }
        r.points.push_back(point);
      }
    }
    r.probes = static_cast<int>(r.points.size());
    if (const auto m = by_cell.find(row.capacity_cell_id); m != by_cell.end()) {
      r.cost = token_cost(cost, m->second->output_throughput, m->second->total_token_throughput);
    }
    section.rows.push_back(std::move(r));
  }
  if (section.rows.empty()) return section;
  // The baseline: the experiment's, by arm label (its first cap for a rate search), else the
  // first arm searched.
  const CapacityRow* base = &section.rows.front();
  for (const CapacityRow& r : section.rows) {
    if (r.arm == experiment.baseline) {
      base = &r;
      break;
    }
  }
  section.baseline = base->key;
  for (CapacityRow& r : section.rows) {
    if (&r != base && r.capacity && base->capacity && *base->capacity > 0) {
      r.vs_baseline = *r.capacity / *base->capacity;
    }
  }
  return section;
}

}  // namespace kvsweep::figures
