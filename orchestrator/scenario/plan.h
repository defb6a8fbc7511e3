// Expands a scenario's factors into the ordered cells of a sweep, each with its settings
// resolved and typed: nothing downstream reads a level's text again.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/yaml_reader.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

// One cell of a sweep: which levels it runs and everything they decide. The runner, `plan` and
// a predictor read these fields only; the scenario's factors are not consulted again.
struct CellPlan {
  int ordinal = 0;      // position in the sweep, from 0
  std::string arm;      // what the reports compare ("PrefixHash", "k8s-service", "cache, x=512")
  int concurrency = 0;  // closed loop: users; open loop: the in-flight cap
  int repeat = 0;       // 0 .. repeats-1
  // The level of every factor, in the order written: {"arm", "k8s-service"}, {"concurrency",
  // "800"}; and every field those levels set, in the same order.
  std::vector<std::pair<std::string, std::string>> levels;
  std::vector<Setting> settings;
  // What the target applies: its knobs' levels and an arm's own base_url. Under --target sim,
  // what the fleet applies instead: target.sim.<knob> levels in place of the knobs, no URL.
  Treatment treatment;
  // The load section with the cell's levels applied, typed (request rate, turn order, cache
  // policy, dataset...), with the rehearsal's cuts under --target sim.
  LoadSpec load;
  std::uint64_t seed = 1;  // the dataset's and the arrival schedule's
  // Cells with the same index replay the same workload (same load.dataset and seed); indices
  // count from 0 in order of first use.
  int workload = 0;
  int deploy_group = 0;      // cells sharing one deployment (same deploy-time levels), from 0
  std::string key;           // deterministic: same scenario text, target and levels, same key
  std::string factors_json;  // {"concurrency":8,"strategy":"random"}: factor -> level label
};

// Deploy-time factors outermost (in the order written), so each deployment is made once; then
// run-time factors in the order written; repeats innermost. `target_override` ("" or "sim")
// goes into every key, so a rehearsal on the sim never resumes a cluster sweep, and "sim"
// applies the stand-in's knobs and target.sim's cuts. Throws std::invalid_argument when a cell
// cannot be resolved, which a loaded scenario never has (the loader expands it once).
std::vector<CellPlan> expand_plan(const ScenarioSpec& spec,
                                  const std::string& target_override = "");

// expand_plan, saying every cell that cannot be resolved to `sink` (located errors) and
// leaving it out: how the loader checks every combination of levels.
std::vector<CellPlan> expand_plan_checked(const ScenarioSpec& spec,
                                          const std::string& target_override, YamlErrors& sink);

// The arms in plan order, each once: how the reports label what they compare. A factor is part
// of the label when it has two or more levels (strategy and named arms always are);
// concurrency never is. Strategy and named arms show their level, others "name=level".
std::vector<std::string> arm_labels(const ScenarioSpec& spec);

// Hex xxh64 of the scenario text (and the override): identifies what was run.
std::string scenario_hash(const std::string& text, const std::string& target_override = "");

}  // namespace kvsweep::orchestrator
