// The searching sweep's parts: arms, probe cells, their verdicts, what is stored and said.
#include "orchestrator/sweep/search_loop.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "driver/load_options.h"
#include "figures/cell_metrics.h"
#include "figures/slo_attainment.h"
#include "figures/units.h"
#include "figures/validity.h"

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

namespace {

// `spec` narrowed to the arm's levels and the probe's load, its repeats the probe's tries.
ScenarioSpec probe_spec(const ScenarioSpec& spec, const CellPlan& arm, double load, int attempt) {
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
  return one;
}

// The settings that make an open-loop probe send for search.min_probe: its count raised to
// rate x min_probe (at most the driver's limit; a probe held there is then said to be too
// short), a shorter duration raised to min_probe. Empty when the load is long enough already.
std::vector<Setting> min_probe_settings(const SearchSpec& search, const LoadSpec& load) {
  std::vector<Setting> settings;
  if (search.min_probe_s <= 0 || load.request_rate <= 0) return settings;
  const double wanted = std::ceil(load.request_rate * search.min_probe_s);
  const auto needed =
      static_cast<std::int64_t>(std::min(wanted, static_cast<double>(driver::kMaxRequests)));
  if (load.num_requests > 0 && load.num_requests < needed) {
    settings.push_back({"load.num_requests", std::to_string(needed), {}});
  }
  if (load.duration_s > 0 && load.duration_s < search.min_probe_s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17gs", search.min_probe_s);
    settings.push_back({"load.duration", text, {}});
  }
  return settings;
}

}  // namespace

CellPlan probe_cell(const ScenarioSpec& spec, const CellPlan& arm, double load, int attempt,
                    const std::string& target_override) {
  ScenarioSpec one = probe_spec(spec, arm, load, attempt);
  std::vector<CellPlan> cells = expand_plan(one, target_override);
  if (cells.empty()) throw std::logic_error("capacity search: a probe expanded to no cell");
  // Sized from the probe's own rate (a level of the searched rate, or the load section's for a
  // concurrency search): the probe's level carries the settings, so the load section is read
  // with them as any level's are (the dataset sized to the count, then a rehearsal's cuts).
  // The probe's key stays its level's: a resumed search finds the probes it ran.
  const std::vector<Setting> longer = min_probe_settings(spec.search, cells.back().load);
  if (!longer.empty()) {
    for (FactorSpec& f : one.factors) {
      if (f.name != spec.search.factor) continue;
      for (const Setting& s : longer) f.levels.front().settings.push_back(s);
    }
    cells = expand_plan(one, target_override);
    if (cells.empty()) throw std::logic_error("capacity search: a probe expanded to no cell");
  }
  CellPlan probe = cells.back();  // its repeat is `attempt`
  // A retry's arrivals on another schedule; the workload (dataset) stays the arm's.
  constexpr std::uint64_t kRetrySeedStride = 7919;
  probe.seed = arm.seed + static_cast<std::uint64_t>(attempt) * kRetrySeedStride;
  probe.ordinal = arm.ordinal;
  probe.deploy_group = arm.deploy_group;
  probe.workload = arm.workload;  // the searched factor never changes the dataset or seed
  return probe;
}

double throughput_per_load(const store::RowReader& store, const store::CellRow& cell, double load) {
  if (load <= 0) return 0;
  return figures::compute_cell_metrics(store.requests(cell.id), {}).request_throughput / load;
}

std::optional<double> probe_too_short(const SearchSpec& search,
                                      const std::vector<store::RequestRow>& requests,
                                      const LoadSpec& load) {
  if (search.min_probe_s <= 0 || load.request_rate <= 0) return std::nullopt;
  std::int64_t measured = 0;
  for (const store::RequestRow& r : requests) measured += r.warmup ? 0 : 1;
  // By count, not by the first and last send: a schedule's random gaps would otherwise call a
  // probe sized to the minimum short half the time.
  const double arrivals_s = static_cast<double>(measured) / load.request_rate;
  // A probe sized to exactly rate x min_probe reads a hair under it in floating point
  // (2712 / 22.6 = 119.99999...): that is no cut.
  constexpr double kRelativeSlack = 1e-9;
  if (arrivals_s >= search.min_probe_s * (1 - kRelativeSlack)) return std::nullopt;
  return arrivals_s;
}

std::optional<ProbeOutcome> probe_outcome(const store::StoreReader& store,
                                          const std::vector<store::CellRow>& tries,
                                          const ScenarioSpec& spec, const LoadSpec& probe_load,
                                          std::string& line, double load,
                                          std::optional<double> knee_per_load, bool* too_short) {
  if (tries.empty()) throw std::logic_error("probe_outcome: no try to judge");
  if (too_short) *too_short = false;
  const store::CellRow& last = tries.back();
  if (last.status != "done") {
    line = last.error.empty() ? "the probe did not finish" : last.error;
    return std::nullopt;
  }
  const std::vector<store::RequestRow> requests = store.requests(last.id);
  const figures::CellMetrics m =
      figures::compute_cell_metrics(requests, {}, {}, store.cell_load(last.id), spec.load.validity);
  const figures::CellValidity& v = m.validity;
  if (v.client_bound || v.short_of_concurrency) {
    line = "not counted, " + std::string(figures::verdict_name(v.verdict)) + ": " +
           figures::verdict_line(v);
    return ProbeOutcome::kNotCounted;
  }
  // Over capacity fails the probe whatever else it shows: arrivals outran service, so a longer
  // cell would only queue more (an SLO that held was held by a queue still growing).
  const std::string over_capacity =
      v.over_capacity ? "; fails as over capacity: " + figures::verdict_line(v) : "";
  // A probe cut short of search.min_probe (a rehearsal's cut, the driver's limit) can pass a
  // load the fleet only absorbed as a burst: the search says so rather than judge it.
  std::string short_text;
  if (const auto arrivals_s = probe_too_short(spec.search, requests, probe_load);
      arrivals_s && !v.over_capacity) {
    if (too_short) *too_short = true;
    short_text = "; too short to judge over capacity (" + figures::format_fixed(*arrivals_s, 1) +
                 " s of arrivals, search.min_probe " +
                 figures::format_fixed(spec.search.min_probe_s, 0) + " s)";
  }
  if (spec.slo.empty()) {
    // The knee: throughput per unit of load against the lightest load's.
    const double efficiency = knee_per_load && *knee_per_load > 0 && load > 0
                                  ? m.request_throughput / load / *knee_per_load
                                  : 1.0;
    line = "throughput per unit of load " + figures::format_fixed(efficiency * 100, 1) +
           "% of the lightest load's (the knee is below " +
           figures::format_fixed(spec.search.knee_efficiency * 100, 0) + "%)" + over_capacity +
           short_text;
    if (v.over_capacity) return ProbeOutcome::kFail;
    return efficiency >= spec.search.knee_efficiency ? ProbeOutcome::kPass : ProbeOutcome::kFail;
  }
  // Every try's requests judged together.
  std::vector<store::RequestRow> pooled;
  for (const store::CellRow& cell : tries) {
    if (cell.status != "done") continue;
    std::vector<store::RequestRow> rows = cell.id == last.id ? requests : store.requests(cell.id);
    pooled.insert(pooled.end(), rows.begin(), rows.end());
  }
  const figures::SloAttainment slo = figures::judge_slo(pooled, spec.slo);
  line = figures::slo_line(slo) +
         (tries.size() > 1 ? " (" + std::to_string(tries.size()) + " tries together)" : "") +
         over_capacity + short_text;
  if (slo.verdict == figures::SloVerdict::kFail || v.over_capacity) return ProbeOutcome::kFail;
  return slo.verdict == figures::SloVerdict::kPass ? ProbeOutcome::kPass : ProbeOutcome::kUndecided;
}

store::SearchSetup search_setup(const ScenarioSpec& spec) {
  const SearchSpec& s = spec.search;
  store::SearchSetup out;
  out.factor = s.factor;
  out.low = s.low;
  out.high = s.high;
  out.precision = s.precision;
  out.growth = s.growth;
  out.guide = s.guide == SearchGuide::kNone ? "none" : "predict";
  out.max_tries = s.max_tries;
  out.min_probe_s = s.min_probe_s;
  if (spec.slo.empty()) out.knee_efficiency = s.knee_efficiency;
  std::vector<store::SloSetup>& slo = out.slo.emplace();
  for (const SloRequirement& q : spec.slo.requirements) {
    slo.push_back(
        {figures::requirement_label(q), q.ttft_ms, q.tpot_ms, q.itl_ms, q.e2e_ms, q.fraction});
  }
  out.confidence = spec.slo.confidence;
  if (!spec.target.cost.empty()) {
    out.cost = store::CostSetup{spec.target.cost.usd_per_gpu_hour, spec.target.cost.gpus};
  }
  return out;
}

}  // namespace kvsweep::orchestrator
