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

// Read from the levels, not from an expanded plan: the run expands its plan once (the
// loader has checked every level's value of load.cache already).
bool scenario_needs_cold(const ScenarioSpec& spec) {
  const FactorSpec* factor = spec.factor_setting("load.cache");
  if (factor == nullptr) return spec.load.cache == CachePolicy::kCold;
  for (const FactorLevel& level : factor->levels) {
    const auto cache = std::find_if(level.settings.begin(), level.settings.end(),
                                    [](const Setting& s) { return s.path == "load.cache"; });
    // A named arm that leaves the cache alone keeps the file's.
    const bool cold = cache == level.settings.end() ? spec.load.cache == CachePolicy::kCold
                                                    : cache->value == "cold";
    if (cold) return true;
  }
  return false;
}

void check_cold_method(const ScenarioSpec& spec, const std::string& kind,
                       const std::vector<std::string>& accepted) {
  const std::string& method = spec.target.cold_method;
  if (std::find(accepted.begin(), accepted.end(), method) != accepted.end()) return;
  throw TargetError("target.cold_method: kind " + kind + " cannot make a cache cold with \"" +
                    method + "\"; it accepts " + join(accepted));
}

}  // namespace kvsweep::orchestrator::kube
