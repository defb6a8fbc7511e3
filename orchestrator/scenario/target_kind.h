// What the scenario loader must know of each target kind to check a scenario's factors: the
// factors the kind applies and when each changes. targets/target_kinds.cc holds the one list,
// next to the targets that apply them, and the loader's callers hand it in.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"

namespace kvsweep::orchestrator {

struct TargetKind {
  std::string name;  // target.kind: "sim", "kubeai", ...
  // The knobs it applies (the factors beyond the load driver's fields). Unused when
  // factors_from_levels.
  std::vector<std::string> factors;  // its knobs: target.<knob> in a scenario
  // kubectl, endpoints: it applies whatever factors target.levels defines.
  bool factors_from_levels = false;
  // When each of its factors changes unless the scenario says otherwise: deploy-time where a
  // change restarts or recreates servers, run-time where it is a live patch or another URL.
  FactorPhase default_phase = FactorPhase::kRun;
  std::vector<std::string> other_phase;  // the factors whose default is the other phase

  // The target factors this kind applies in `spec` (target.levels' keys for factors_from_levels).
  std::vector<std::string> factors_of(const ScenarioSpec& spec) const {
    if (!factors_from_levels) return factors;
    std::vector<std::string> names;
    for (const auto& [factor, levels] : spec.target.levels) names.push_back(factor);
    return names;
  }

  // The default phase of one of its knobs.
  FactorPhase phase_of(const std::string& factor) const {
    for (const auto& name : other_phase) {
      if (name == factor) {
        return default_phase == FactorPhase::kRun ? FactorPhase::kDeploy : FactorPhase::kRun;
      }
    }
    return default_phase;
  }
};

using TargetKinds = std::vector<TargetKind>;

}  // namespace kvsweep::orchestrator
