// Loads one of the shipped seed scenarios (scenarios/<name>.yaml) for the CLI tests that check
// what a seed plans and sends. KVSWEEP_SOURCE_DIR is the checkout, set by the test's CMake.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {

// Every load error is a test failure; a scenario that does not load at all throws.
inline ScenarioSpec load_seed_scenario(const std::string& name) {
  std::vector<ScenarioError> errors;
  const std::string path = std::string(KVSWEEP_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
  std::optional<ScenarioSpec> spec = load_scenario_file(path, &errors, target_kinds());
  for (const auto& e : errors) ADD_FAILURE() << e.text;
  if (!spec) throw std::runtime_error("cannot load " + path);
  return *spec;
}

}  // namespace kvsweep::orchestrator
