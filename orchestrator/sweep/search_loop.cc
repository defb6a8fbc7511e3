// The searching sweep's parts: arms, probe cells, their verdicts, what is stored and said.
#include "orchestrator/sweep/search_loop.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "reports/cell_metrics.h"
#include "reports/slo_attainment.h"
#include "reports/units.h"
#include "reports/validity.h"

namespace kvsweep::orchestrator {

bool searches_concurrency(const ScenarioSpec& spec) { return spec.search.factor == "concurrency"; }

// "12.5 req/s" or "24 in flight".
std::string load_text(const ScenarioSpec& spec, double load) {
  return probe_level(spec, load) + (searches_concurrency(spec) ? " in flight" : " req/s");
}

// What the console calls an arm: its label, and a rate search's cap.
std::string arm_name(const ScenarioSpec& spec, const CellPlan& arm) {
  if (searches_concurrency(spec)) return arm.arm;
  return arm.arm + " (in-flight cap " + std::to_string(arm.concurrency) + ")";
}

// The line that closes an arm's search.
std::string result_line(const ScenarioSpec& spec, const std::string& name, const ArmCapacity& a) {
  const CapacityResult& r = a.result;
  std::string line = "  capacity of " + name + ": ";
  if (r.capacity) {
    line += load_text(spec, *r.capacity);
    line += r.first_failing ? ", failing at " + load_text(spec, *r.first_failing) : "";
  } else {
    line += "none found";
    line += r.first_failing ? " (fails at " + load_text(spec, *r.first_failing) + ")" : "";
  }
  line += "; " + std::to_string(a.probes.size()) + " probes";
  if (a.guide) line += ", guided from the predicted " + load_text(spec, *a.guide);
  return line + "; " + r.why;
}

void store_arm(store::Store& store, std::int64_t experiment_id, int position,
               const ScenarioSpec& spec, const ArmCapacity& a,
               const std::vector<std::int64_t>& probe_cells) {
  store::ArmSearchRow row;
  row.experiment_id = experiment_id;
  row.arm_key = a.key;
  row.position = position;
  row.arm = a.arm;
  row.concurrency = a.concurrency;
  row.factor = spec.search.factor;
  row.guide = a.guide;
  row.capacity = a.result.capacity;
  row.first_failing = a.result.first_failing;
  row.why = a.result.done ? a.result.why : "";
  nlohmann::json probes = nlohmann::json::array();
  for (std::size_t i = 0; i < a.probes.size() && i < probe_cells.size(); ++i) {
    probes.push_back({{"load", a.probes[i].load},
                      {"attempt", a.probes[i].attempt},
                      {"outcome", probe_outcome_name(a.probes[i].outcome)},
                      {"cell_id", probe_cells[i]}});
  }
  row.probes = probes.dump();
  row.capacity_cell_id = a.capacity_cell;
  store.set_arm_search(row);
}

std::string probe_level(const ScenarioSpec& spec, double load) {
  char text[32];
  if (searches_concurrency(spec)) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(load));
  } else {
    std::snprintf(text, sizeof text, "%.6g", load);
  }
  return text;
}

std::vector<CellPlan> search_arms(const ScenarioSpec& spec, const std::vector<CellPlan>& plan) {
  std::vector<CellPlan> arms;
  for (const CellPlan& cell : plan) {
    if (cell.repeat != 0) continue;
    bool seen = false;
    for (const CellPlan& a : arms)
      seen = seen || arm_search_key(spec, a) == arm_search_key(spec, cell);
    if (!seen) arms.push_back(cell);
  }
  return arms;
}

std::string arm_search_key(const ScenarioSpec& spec, const CellPlan& arm) {
  return searches_concurrency(spec) ? arm.arm : arm.arm + "@" + std::to_string(arm.concurrency);
}

CellPlan probe_cell(const ScenarioSpec& spec, const CellPlan& arm, double load, int attempt,
                    const std::string& target_override) {
  ScenarioSpec one = spec;
  one.repeats = attempt + 1;
  const std::string level = probe_level(spec, load);
  for (FactorSpec& f : one.factors) {
    if (f.name == spec.search.factor) {
      FactorLevel probe = f.levels.front();
      probe.label = level;
      for (Setting& s : probe.settings) {
        if (s.path == f.path) s.value = level;
      }
      f.levels = {probe};
      continue;
    }
    std::string label;
    for (const auto& [name, chosen] : arm.levels) {
      if (name == f.name) label = chosen;
    }
    std::vector<FactorLevel> kept;
    for (const FactorLevel& l : f.levels) {
      if (l.label == label) kept.push_back(l);
    }
    if (kept.size() != 1) {
      throw std::logic_error("capacity search: arm \"" + arm.arm + "\" has no level of factor " +
                             f.name);
    }
    f.levels = kept;
  }
  std::vector<CellPlan> cells = expand_plan(one, target_override);
  if (cells.empty()) throw std::logic_error("capacity search: a probe expanded to no cell");
  CellPlan probe = cells.back();  // its repeat is `attempt`
  // A retry's arrivals on another schedule; the workload (dataset) stays the arm's.
  constexpr std::uint64_t kRetrySeedStride = 7919;
  probe.seed = arm.seed + static_cast<std::uint64_t>(attempt) * kRetrySeedStride;
  probe.ordinal = arm.ordinal;
  probe.deploy_group = arm.deploy_group;
  probe.workload = arm.workload;  // the searched factor never changes the dataset or seed
  return probe;
}

double throughput_per_load(const store::Store& store, const store::CellRow& cell, double load) {
  if (load <= 0) return 0;
  return reports::compute_cell_metrics(store.requests(cell.id), {}).request_throughput / load;
}

std::optional<ProbeOutcome> probe_outcome(const store::Store& store,
                                          const std::vector<store::CellRow>& tries,
                                          const ScenarioSpec& spec, std::string& line, double load,
                                          std::optional<double> knee_per_load) {
  if (tries.empty()) throw std::logic_error("probe_outcome: no try to judge");
  const store::CellRow& last = tries.back();
  if (last.status != "done") {
    line = last.error.empty() ? "the probe did not finish" : last.error;
    return std::nullopt;
  }
  const std::vector<store::RequestRow> requests = store.requests(last.id);
  const reports::CellMetrics m =
      reports::compute_cell_metrics(requests, {}, {}, store.cell_load(last.id), spec.load.validity);
  const reports::CellValidity& v = m.validity;
  if (v.client_bound || v.short_of_concurrency) {
    line = "not counted, " + std::string(reports::verdict_name(v.verdict)) + ": " +
           reports::verdict_line(v);
    return ProbeOutcome::kNotCounted;
  }
  if (spec.slo.empty()) {
    // The knee: throughput per unit of load against the lightest load's.
    const double efficiency = knee_per_load && *knee_per_load > 0 && load > 0
                                  ? m.request_throughput / load / *knee_per_load
                                  : 1.0;
    line = "throughput per unit of load " + reports::format_fixed(efficiency * 100, 1) +
           "% of the lightest load's (the knee is below " +
           reports::format_fixed(spec.search.knee_efficiency * 100, 0) + "%)";
    if (v.over_capacity) {
      line += "; fails as over capacity: " + reports::verdict_line(v);
      return ProbeOutcome::kFail;
    }
    return efficiency >= spec.search.knee_efficiency ? ProbeOutcome::kPass : ProbeOutcome::kFail;
  }
  // Every try's requests judged together.
  std::vector<store::RequestRow> pooled;
  for (const store::CellRow& cell : tries) {
    if (cell.status != "done") continue;
    std::vector<store::RequestRow> rows = cell.id == last.id ? requests : store.requests(cell.id);
    pooled.insert(pooled.end(), rows.begin(), rows.end());
  }
  const reports::SloAttainment slo = reports::judge_slo(pooled, spec.slo);
  line = reports::slo_line(slo) +
         (tries.size() > 1 ? " (" + std::to_string(tries.size()) + " tries together)" : "");
  if (slo.verdict == reports::SloVerdict::kFail) return ProbeOutcome::kFail;
  if (v.over_capacity) {
    line += "; over capacity: " + reports::verdict_line(v);
    // Requests waiting for a slot of the cap, more and more: arrivals outran completions.
    if (v.backlog_trend.rising) return ProbeOutcome::kFail;
    // TTFT rising through the cell. A queue that grows without bound and a workload whose
    // prompts grow through the cell (a multi-turn dataset's later turns) both read so; what
    // the SLO needs to know is whether it would still hold had the cell run as long again:
    // every request's TTFT and E2E one cell-length up the trend.
    const double rise_ms =
        v.ttft_trend.test.slope_per_s * (v.steady ? v.steady->end_s - v.steady->start_s : 0.0);
    std::vector<store::RequestRow> later = pooled;
    for (store::RequestRow& r : later) {
      r.ttft_ms += rise_ms;
      r.e2e_ms += rise_ms;
    }
    const reports::SloAttainment projected = reports::judge_slo(later, spec.slo);
    line += "; a cell-length later (TTFT +" + reports::format_fixed(rise_ms, 1) + " ms) " +
            reports::slo_line(projected);
    if (projected.verdict == reports::SloVerdict::kFail) return ProbeOutcome::kFail;
    if (projected.verdict == reports::SloVerdict::kUndecided) return ProbeOutcome::kUndecided;
  }
  return slo.verdict == reports::SloVerdict::kPass ? ProbeOutcome::kPass : ProbeOutcome::kUndecided;
}

std::string search_setup_summary(const ScenarioSpec& spec) {
  const SearchSpec& s = spec.search;
  nlohmann::ordered_json out;
  out["factor"] = s.factor;
  out["low"] = s.low;
  out["high"] = s.high;
  out["precision"] = s.precision;
  out["growth"] = s.growth;
  out["guide"] = s.guide == SearchGuide::kNone ? "none" : "predict";
  out["max_tries"] = s.max_tries;
  if (spec.slo.empty()) out["knee_efficiency"] = s.knee_efficiency;
  nlohmann::ordered_json slo = nlohmann::ordered_json::array();
  for (const SloRequirement& q : spec.slo.requirements) {
    nlohmann::ordered_json r;
    r["label"] = reports::requirement_label(q);
    if (q.ttft_ms) r["ttft_ms"] = *q.ttft_ms;
    if (q.tpot_ms) r["tpot_ms"] = *q.tpot_ms;
    if (q.itl_ms) r["itl_ms"] = *q.itl_ms;
    if (q.e2e_ms) r["e2e_ms"] = *q.e2e_ms;
    r["fraction"] = q.fraction;
    slo.push_back(r);
  }
  out["slo"] = slo;
  out["confidence"] = spec.slo.confidence;
  if (!spec.target.cost.empty()) {
    out["cost"] = {{"usd_per_gpu_hour", spec.target.cost.usd_per_gpu_hour},
                   {"gpus", spec.target.cost.gpus}};
  }
  return out.dump();
}

}  // namespace kvsweep::orchestrator
