// What a target applies for one cell: its knobs' levels, and where an arm's load goes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kvsweep::orchestrator {

// The levels of the target's knobs (target.<knob> in the factors, directly or in named arms),
// in the scenario's factor order: {{"strategy", "kv-aware"}}. A knob's level is its text as
// written; each kind reads its own knobs (and refused bad levels when it was built).
struct Treatment {
  std::vector<std::pair<std::string, std::string>> levels;
  // An arm's own server (target.base_url), in normal form: the load and the serving gates go
  // there instead of the target's base_url, and nothing is applied for it (seed 002's plain
  // Kubernetes Service beside KubeAI). "" = the target's own.
  std::string base_url{};
  // epp.<config>.<plugin>.<key> levels ({path, value}): settings put into the named EPP
  // configurations (epp_settings.h) wherever the cell runs one.
  std::vector<std::pair<std::string, std::string>> epp_settings{};

  // The level of `factor`, or nullptr when the treatment does not set it.
  const std::string* find(const std::string& factor) const {
    for (const auto& [name, level] : levels) {
      if (name == factor) return &level;
    }
    return nullptr;
  }
  bool operator==(const Treatment&) const = default;
};

}  // namespace kvsweep::orchestrator
