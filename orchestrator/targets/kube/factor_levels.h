// Checks shared by the constructors of the cluster targets: which factors a target applies,
// how their levels are read, and the messages that reject them before anything is touched.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/join.h"
#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator::kube {

// A knob the scenario's factors set (target.<knob>, directly or in named arms) and every level
// they give it, in the order written.
struct KnobLevels {
  std::string name;
  std::vector<std::string> levels;
};

// The knobs the target applies, in the order first written.
std::vector<KnobLevels> target_factors(const ScenarioSpec& spec);

// Throws TargetError "factor NAME: kind KIND cannot apply it; it applies A, B (the load
// driver applies concurrency, ...)" unless every knob is in `accepted`.
void check_factor_names(const ScenarioSpec& spec, const std::string& kind,
                        const std::vector<std::string>& accepted);

// A level that must be a whole number >= `min`; nullopt if it is not.
std::optional<long long> integer_level(const std::string& level, long long min);

// Throws TargetError "FIELD: required for kind KIND (WHY)" when `value` is empty.
void require_field(const std::string& value, const std::string& field, const std::string& kind,
                   const std::string& why);

// True when some cell starts with a cold cache (load.cache, or a factor's level of it).
bool scenario_needs_cold(const ScenarioSpec& spec);

// Throws TargetError unless target.cold_method is one the target supports.
void check_cold_method(const ScenarioSpec& spec, const std::string& kind,
                       const std::vector<std::string>& accepted);

}  // namespace kvsweep::orchestrator::kube
