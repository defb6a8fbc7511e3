// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/yaml_reader.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/target_kind.h"

namespace kvsweep::orchestrator {

// One located problem of a scenario file (common/yaml_reader.h formats it).
using ScenarioError = YamlError;

// Parses scenario text. Collects every error rather than stopping at the first, so a user
// fixes a file in one pass. Returns nullopt when there was any error. `kinds` are the target
// kinds a scenario may name, with the factors each applies (targets/target_kinds.h has
// kvsweep's).
std::optional<ScenarioSpec> parse_scenario(const std::string& text, const std::string& path,
                                           std::vector<ScenarioError>* errors,
                                           const TargetKinds& kinds);

// A scenario is a page or two of YAML; a file a thousand times that is a wrong path.
inline constexpr std::uintmax_t kMaxScenarioBytes = 1 << 20;

// Reads the file, then parse_scenario. Only a regular file of at most kMaxScenarioBytes is
// read (common/input_file.h): /dev/urandom or a FIFO is one error at once, not a read forever.
std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               std::vector<ScenarioError>* errors,
                                               const TargetKinds& kinds);

}  // namespace kvsweep::orchestrator
