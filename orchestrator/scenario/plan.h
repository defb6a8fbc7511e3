// Expands a scenario's factors into the ordered cells of a sweep.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

struct CellPlan {
  int ordinal = 0;  // position in the sweep, from 0
  std::string arm;  // what the reports compare: the strategy, or "factor=level, ..."
  int concurrency = 0;
  int repeat = 0;                                  // 0 .. repeats-1
  Treatment treatment;                             // the target factors' levels
  std::map<std::string, std::string> load_levels;  // request_rate, max_tokens, cache, if factors
  int deploy_group = 0;      // cells sharing one deployment (same deploy-time levels), from 0
  std::string key;           // deterministic: same scenario text, target and levels, same key
  std::string factors_json;  // {"concurrency":8,"strategy":"random"}
};

// Deploy-time factors outermost (in the order written), so each deployment is made once; then
// run-time factors in the order written; repeats innermost. `target_override` ("" or "sim")
// goes into every key, so a rehearsal on the sim never resumes a cluster sweep.
std::vector<CellPlan> expand_plan(const ScenarioSpec& spec,
                                  const std::string& target_override = "");

// The arms in plan order, each once: how the reports label what they compare. A factor is part
// of the label when it has two or more levels (strategy always is); concurrency never is.
std::vector<std::string> arm_labels(const ScenarioSpec& spec);

// Hex xxh64 of the scenario text (and the override): identifies what was run.
std::string scenario_hash(const std::string& text, const std::string& target_override = "");

}  // namespace kvsweep::orchestrator
