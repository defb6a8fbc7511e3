// Factor paths into a named EndpointPickerConfig (epp.<config>.<plugin>.<key>: a scorer's weight
// or a plugin's parameter) and the configuration a cell runs with its levels put in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

// "epp.estimated-prefix.prefix-cache-scorer.weight", split: the configuration named under
// `epp:`, one of its plugins (by its name, which is its type when the config gives none) and
// `weight` (the plugin's weight in the scheduling profile) or a key of its `parameters`.
struct EppSettingPath {
  std::string config;
  std::string plugin;
  std::string key;
};

inline bool is_epp_setting_path(const std::string& path) { return path.rfind("epp.", 0) == 0; }

// Splits `path` against the scenario's configurations. nullopt with `problem` saying why when
// the configuration or the plugin is not there, or the key cannot be set on that plugin.
std::optional<EppSettingPath> split_epp_setting_path(const ScenarioSpec& spec,
                                                     const std::string& path, std::string* problem);

// The configuration text with `settings` ({path, value}, every path into that configuration)
// put in: the weight into the scheduling profile's entry (a profile of every plugin is written
// out first when the config has none, as the EPP would make it), a parameter into the plugin's
// `parameters`.
std::string apply_epp_settings(const std::string& text,
                               const std::vector<std::pair<EppSettingPath, std::string>>& settings);

// The configuration the strategy level `level` runs in a cell of treatment `t`: the scenario's
// own when no setting of the cell reaches it, otherwise the same name with its text rewritten
// and read again as the EPP reads it. nullptr when `level` names no configuration. Throws
// std::invalid_argument with the reader's message when the settings make it invalid (the
// loader has refused such a cell already).
std::shared_ptr<const EppConfigSpec> epp_config_for(const ScenarioSpec& spec, const Treatment& t,
                                                    const std::string& level);

// "" when the configuration that `settings` (one cell's, all for `config`) make reads as the
// EPP would read it; otherwise what the reader said, without its location in the rewritten
// text: "schedulingProfiles[0].plugins[1].weight: expected an integer, got \"high\"".
std::string check_epp_settings(const ScenarioSpec& spec, const std::string& config,
                               const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace kvsweep::orchestrator
