// Expands a scenario's factors into the ordered cells of a sweep.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/scenario_spec.h"

namespace kvsweep::orchestrator {

struct CellPlan {
  int ordinal = 0;           // position in the sweep, from 0
  std::string strategy;
  int concurrency = 0;
  int repeat = 0;            // 0 .. repeats-1
  std::string key;           // deterministic: same scenario text and levels, same key
  std::string factors_json;  // {"concurrency":8,"strategy":"random"}
};

// Strategy outer (it is applied to the fleet, so it changes as rarely as possible), then
// concurrency, then repeats.
std::vector<CellPlan> expand_plan(const ScenarioSpec& spec);

// Hex xxh64 of the scenario text: identifies what was run.
std::string scenario_hash(const std::string& text);

}  // namespace kvsweep::orchestrator
