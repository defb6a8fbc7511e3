// Expands a scenario's factors into the ordered cells of a sweep.
#include "orchestrator/scenario/plan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kvsweep::orchestrator {
namespace {

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// The factors in plan order: deploy-time first, then run-time, each group as written.
std::vector<const FactorSpec*> plan_order(const ScenarioSpec& spec) {
  std::vector<const FactorSpec*> order;
  for (const auto& f : spec.factors) {
    if (f.phase == FactorPhase::kDeploy) order.push_back(&f);
  }
  for (const auto& f : spec.factors) {
    if (f.phase == FactorPhase::kRun) order.push_back(&f);
  }
  return order;
}

bool in_label(const FactorSpec& f) {
  return f.name != "concurrency" && (f.name == "strategy" || f.levels.size() > 1);
}

// `levels` holds one level per factor of spec.factors, by factor name.
std::string arm_label(const ScenarioSpec& spec, const std::map<std::string, std::string>& levels) {
  std::string label;
  for (const auto& f : spec.factors) {
    if (!in_label(f)) continue;
    const std::string& level = levels.at(f.name);
    label += (label.empty() ? "" : ", ") + (f.name == "strategy" ? level : f.name + "=" + level);
  }
  return label.empty() ? "all" : label;
}

}  // namespace

std::string scenario_hash(const std::string& text, const std::string& target_override) {
  const std::string identity =
      target_override.empty() ? text : text + "\n#target=" + target_override;
  return hex64(XXH64(identity.data(), identity.size(), 0));
}

std::vector<CellPlan> expand_plan(const ScenarioSpec& spec, const std::string& target_override) {
  const std::string hash = scenario_hash(spec.text, target_override);
  const std::vector<const FactorSpec*> order = plan_order(spec);
  std::vector<CellPlan> cells;
  std::vector<std::size_t> position(order.size(), 0);  // an odometer over the levels
  std::string previous_deploy;
  int group = -1;
  while (true) {
    std::map<std::string, std::string> levels;
    std::string deploy_tuple;
    for (std::size_t i = 0; i < order.size(); ++i) {
      levels[order[i]->name] = order[i]->levels[position[i]];
      if (order[i]->phase == FactorPhase::kDeploy) {
        deploy_tuple += order[i]->name + "=" + order[i]->levels[position[i]] + "\n";
      }
    }
    if (cells.empty() || deploy_tuple != previous_deploy) ++group;
    previous_deploy = deploy_tuple;
    for (int repeat = 0; repeat < spec.repeats; ++repeat) {
      CellPlan cell;
      cell.ordinal = static_cast<int>(cells.size());
      cell.arm = arm_label(spec, levels);
      cell.concurrency = std::stoi(levels.at("concurrency"));
      cell.repeat = repeat;
      cell.deploy_group = group;
      nlohmann::json factors = nlohmann::json::object();
      for (const auto& f : spec.factors) {
        const std::string& level = levels.at(f.name);
        if (is_load_factor(f.name)) {
          if (f.name != "concurrency") cell.load_levels[f.name] = level;
        } else {
          cell.treatment.levels.emplace_back(f.name, level);
        }
        factors[f.name] =
            f.name == "concurrency" ? nlohmann::json(cell.concurrency) : nlohmann::json(level);
      }
      cell.factors_json = factors.dump();
      const std::string identity = hash + "|" + cell.factors_json + "|" + std::to_string(repeat);
      cell.key = hex64(XXH64(identity.data(), identity.size(), 0));
      cells.push_back(std::move(cell));
    }
    // Advance the odometer: the last factor turns fastest.
    std::size_t i = order.size();
    while (i > 0) {
      --i;
      if (++position[i] < order[i]->levels.size()) break;
      position[i] = 0;
      if (i == 0) return cells;
    }
    if (order.empty()) return cells;
  }
}

std::vector<std::string> arm_labels(const ScenarioSpec& spec) {
  std::vector<std::string> arms;
  for (const auto& cell : expand_plan(spec)) {
    if (std::find(arms.begin(), arms.end(), cell.arm) == arms.end()) arms.push_back(cell.arm);
  }
  return arms;
}

}  // namespace kvsweep::orchestrator
