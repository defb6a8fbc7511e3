// Checks shared by the constructors of the cluster targets.
#include "orchestrator/targets/kube/factor_levels.h"

#include <algorithm>
#include <charconv>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/targets/planned_target.h"

namespace kvsweep::orchestrator::kube {

std::vector<KnobLevels> target_factors(const ScenarioSpec& spec) {
  std::vector<KnobLevels> out;
  for (const auto& knob : spec.knobs()) out.push_back({knob, spec.knob_levels(knob)});
  return out;
}

void check_factor_names(const ScenarioSpec& spec, const std::string& kind,
                        const std::vector<std::string>& accepted) {
  for (const KnobLevels& factor : target_factors(spec)) {
    if (std::find(accepted.begin(), accepted.end(), factor.name) != accepted.end()) continue;
    const std::string applies =
        accepted.empty() ? "it applies no factor of its own" : "it applies " + join(accepted);
    throw TargetError("factor " + factor.name + ": kind " + kind + " cannot apply it; " + applies +
                      " (the load driver applies concurrency, seed and every load.* field)");
  }
}

std::optional<long long> integer_level(const std::string& level, long long min) {
  long long value = 0;
  const char* end = level.data() + level.size();
  const auto [ptr, ec] = std::from_chars(level.data(), end, value);
  if (level.empty() || ec != std::errc() || ptr != end || value < min) return std::nullopt;
  return value;
}

void require_field(const std::string& value, const std::string& field, const std::string& kind,
                   const std::string& why) {
  if (value.empty()) {
    throw TargetError(field + ": required for kind " + kind + " (" + why + ")");
  }
}

bool scenario_needs_cold(const ScenarioSpec& spec) {
  const std::vector<CellPlan> cells = expand_plan(spec);
  return std::any_of(cells.begin(), cells.end(),
                     [](const CellPlan& c) { return c.load.cache == CachePolicy::kCold; });
}

void check_cold_method(const ScenarioSpec& spec, const std::string& kind,
                       const std::vector<std::string>& accepted) {
  const std::string& method = spec.target.cold_method;
  if (std::find(accepted.begin(), accepted.end(), method) != accepted.end()) return;
  throw TargetError("target.cold_method: kind " + kind + " cannot make a cache cold with \"" +
                    method + "\"; it accepts " + join(accepted));
}

}  // namespace kvsweep::orchestrator::kube
