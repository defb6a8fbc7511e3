// Expands a scenario's factors into the ordered cells of a sweep.
#include "orchestrator/plan.h"

#include <xxhash.h>

#include <cstdio>
#include <nlohmann/json.hpp>

namespace kvsweep::orchestrator {
namespace {

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

std::string scenario_hash(const std::string& text) {
  return hex64(XXH64(text.data(), text.size(), 0));
}

std::vector<CellPlan> expand_plan(const ScenarioSpec& spec) {
  const std::string hash = scenario_hash(spec.text);
  std::vector<CellPlan> cells;
  for (const auto& strategy : spec.strategies) {
    for (int concurrency : spec.concurrency) {
      for (int repeat = 0; repeat < spec.repeats; ++repeat) {
        CellPlan cell;
        cell.ordinal = static_cast<int>(cells.size());
        cell.strategy = strategy;
        cell.concurrency = concurrency;
        cell.repeat = repeat;
        const nlohmann::json factors{{"strategy", strategy}, {"concurrency", concurrency}};
        cell.factors_json = factors.dump();
        const std::string identity = hash + "|" + cell.factors_json + "|" + std::to_string(repeat);
        cell.key = hex64(XXH64(identity.data(), identity.size(), 0));
        cells.push_back(std::move(cell));
      }
    }
  }
  return cells;
}

}  // namespace kvsweep::orchestrator
