// A sweep that searches (scenario key `search`): per arm, probes chosen by a CapacitySearch,
// each probe a cell run, stored and resumed like any other, judged against the scenario's SLO
// and its validity verdict (docs/scenarios.md, "Capacity search").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/sweep/capacity_search.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// One arm's search as it ended.
struct ArmCapacity {
  std::string arm;              // the arm's label
  int concurrency = 0;          // a rate search's in-flight cap (each cap is searched on its own)
  std::string key;              // what a guide and a report match arms by: "<arm>" or "<arm>@<cap>"
  std::optional<double> guide;  // the predicted capacity the search started from
  std::vector<SearchProbe> probes;
  CapacityResult result;
  // The probe that passed at the capacity (the reports read its throughput for the cost).
  std::int64_t capacity_cell = 0;
};

// The arms of a searching scenario: its plan's cells (each at the searched factor's
// placeholder level), one per arm, in plan order.
std::vector<CellPlan> search_arms(const ScenarioSpec& spec, const std::vector<CellPlan>& plan);

// The key a guide and the reports match `arm` by.
std::string arm_search_key(const ScenarioSpec& spec, const CellPlan& arm);

// `arm`'s cell with the searched factor at `load` instead, its `attempt`-th try (the cell's
// repeat, so each try has its own key). Ordinal and deploy group are the arm's. A retry (attempt
// > 0) sends the same dataset on another arrival schedule (its seed moves by the attempt), so
// it adds an independent sample: in virtual time the same schedule gives the same figures.
CellPlan probe_cell(const ScenarioSpec& spec, const CellPlan& arm, double load, int attempt,
                    const std::string& target_override);

// The text a probe's load has as a factor level: "24", "12.5".
std::string probe_level(const ScenarioSpec& spec, double load);

// What the tries of a probe at `load` say to the search (`tries`: its stored cells, in order,
// the last just run; `probe_load`: the probe cell's load section): nullopt when the last did
// not run to the end (its error is then the search's end). `line` gets what decided it.
// - The last try client-bound or short of its concurrency: not counted (the driver missed).
// - The last try over capacity (arrivals outran service): fails, whatever its SLO or knee.
// - With an SLO, the requests of every try are judged together: a retry of an undecided load
//   narrows its interval. Pass, fail or undecided by the attainment's interval.
// - Without an SLO (a knee search), `knee_per_load` is the reference probe's request
//   throughput per unit of load; the last try passes while its own is at least
//   search.knee_efficiency of it.
// An open-loop probe whose measured requests span less than search.min_probe of arrivals, and
// that is not over capacity, is judged so but marked too short (`too_short`, and the line).
std::optional<ProbeOutcome> probe_outcome(const store::StoreReader& store,
                                          const std::vector<store::CellRow>& tries,
                                          const ScenarioSpec& spec, const LoadSpec& probe_load,
                                          std::string& line, double load = 0,
                                          std::optional<double> knee_per_load = std::nullopt,
                                          bool* too_short = nullptr);

// The seconds of arrivals an open-loop probe's measured requests span at its rate, when fewer
// than search.min_probe; nullopt when long enough, closed loop, or min_probe 0.
std::optional<double> probe_too_short(const SearchSpec& search,
                                      const std::vector<store::RequestRow>& requests,
                                      const LoadSpec& load);

// A probe's request throughput per unit of load (req/s per req/s offered, or per user in
// flight): what a knee search compares with its reference probe's.
double throughput_per_load(const store::RowReader& store, const store::CellRow& cell, double load);

// Whether the search is over concurrency (else over load.request_rate).
bool searches_concurrency(const ScenarioSpec& spec);

// "12.5 req/s" or "24 in flight".
std::string load_text(const ScenarioSpec& spec, double load);

// What the console calls an arm: its label, and a rate search's in-flight cap.
std::string arm_name(const ScenarioSpec& spec, const CellPlan& arm);

// The line that closes an arm's search on the console.
std::string result_line(const ScenarioSpec& spec, const std::string& name, const ArmCapacity& a);

// The arm's row as far as its search got: its probes with their cells (probe_cells[i] is the
// cell of a.probes[i]), and the result once the search ended.
void store_arm(store::Store& store, std::int64_t experiment_id, int position,
               const ScenarioSpec& spec, const ArmCapacity& a,
               const std::vector<std::int64_t>& probe_cells);

// The setup's search section: the factor, bounds, precision, guide, the SLO's requirements
// with their labels, and the cost.
store::SearchSetup search_setup(const ScenarioSpec& spec);

}  // namespace kvsweep::orchestrator
