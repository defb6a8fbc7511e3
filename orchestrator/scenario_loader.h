// Reads and validates a scenario YAML file; every problem is reported with file:line:column.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario_spec.h"

namespace kvsweep::orchestrator {

struct ScenarioError {
  int line = 0;        // 1-based, 0 when the error has no position (file unreadable)
  int column = 0;
  std::string field;   // dotted path, "load.max_tokens"
  std::string message; // "expected an integer >= 1, got \"many\""
  std::string text;    // the whole formatted error: location, message, source line, caret
};

// Parses scenario text. Collects every error rather than stopping at the first, so a user
// fixes a file in one pass. Returns nullopt when there was any error.
std::optional<ScenarioSpec> parse_scenario(const std::string& text, const std::string& path,
                                           std::vector<ScenarioError>* errors);

// Reads the file, then parse_scenario.
std::optional<ScenarioSpec> load_scenario_file(const std::string& path,
                                               std::vector<ScenarioError>* errors);

// Parses "90s", "5m", "1h", "250ms" or a plain number of seconds. nullopt when malformed.
std::optional<double> parse_duration_s(const std::string& text);

}  // namespace kvsweep::orchestrator
