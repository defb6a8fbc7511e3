// A scenario's cells run into a scratch store, predicted or on the scenario's own target, and
// read back as the reports read them (each cell's stored summary: its figures and verdict);
// and a fleet's closed-loop capacity found by prediction, without any verdict: users double
// until throughput stops rising.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "figures/cell_metrics.h"

namespace kvsweep::orchestrator {

struct ScenarioCell {
  std::string key;
  std::string arm;
  int concurrency = 0;      // closed loop: users; open loop: the in-flight cap
  double request_rate = 0;  // open loop's; 0 a closed loop
  std::uint64_t seed = 1;
  figures::CellMetrics metrics;  // from the cell's stored summary
};

// Where run_scenario_text runs the cells: `--target predict`, or the scenario's own target (a
// `kind: sim` scenario's embedded fleet: real HTTP on loopback, in real time).
enum class CellsOn { kPredict, kScenarioTarget };

// Parses `text` as a scenario (`path` names it in errors), runs its whole plan into a store in
// `scratch_dir` (removed after), and returns every cell in plan order. Throws
// std::invalid_argument with the located errors of a bad scenario, std::runtime_error when a
// cell did not finish (its status and error).
std::vector<ScenarioCell> run_scenario_text(const std::string& text, const std::string& path,
                                            const std::string& scratch_dir,
                                            CellsOn on = CellsOn::kPredict);

struct CapacityStep {
  int users = 0;
  double requests_per_s = 0;  // completions per second of the whole window
};
struct ClosedLoopCapacity {
  double requests_per_s = 0;  // the most any step completed
  int users = 0;              // at that step
  std::vector<CapacityStep> steps;
};

// The capacity of what `scenario_for(users)` describes (a closed loop of that many users, one
// cell): predicted at 1, 2, 4, ... users until a doubling raises the completions per second by
// less than `min_rise` (2%), or `max_users` is passed. Figures, not verdicts: nothing it
// decides reads a cell's verdict.
ClosedLoopCapacity closed_loop_capacity(const std::function<std::string(int users)>& scenario_for,
                                        const std::string& scratch_dir, double min_rise = 0.02,
                                        int max_users = 1 << 16);

}  // namespace kvsweep::orchestrator
