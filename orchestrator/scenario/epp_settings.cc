// Factor paths into a named EndpointPickerConfig and the configuration a cell runs.
#include "orchestrator/scenario/epp_settings.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "common/error_kinds.h"
#include "common/join.h"
#include "common/spellcheck.h"
#include "common/yaml_reader.h"
#include "sim/router/epp_config.h"

namespace kvsweep::orchestrator {
namespace {

// An EPP configuration's text, parsed by the one YAML reader (its alias cap and duplicate
// keys). The text was read and checked when the scenario loaded, so a refusal here means it
// changed underneath: thrown, naming the first error.
YAML::Node parse_epp_text(const std::string& text) {
  std::vector<YamlError> errors;
  YamlErrors sink("EPP configuration", text, &errors);
  std::optional<YAML::Node> root = load_yaml_document(text, sink);
  if (!root || !errors.empty()) {
    throw std::runtime_error(errors.empty() ? "EPP configuration: not YAML" : errors.front().text);
  }
  return *root;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A plugin's name in the config: its `name`, else its `type` (as the EPP names it).
std::string plugin_name(const YAML::Node& plugin) {
  if (plugin["name"] && plugin["name"].IsScalar()) return plugin["name"].Scalar();
  return plugin["type"] && plugin["type"].IsScalar() ? plugin["type"].Scalar() : "";
}

std::string plugin_type(const YAML::Node& plugin) {
  return plugin["type"] && plugin["type"].IsScalar() ? plugin["type"].Scalar() : "";
}

// The plugin entry named `name` in `root`'s plugins, or an undefined node.
YAML::Node find_plugin(const YAML::Node& root, const std::string& name) {
  const YAML::Node plugins = root["plugins"];
  if (plugins && plugins.IsSequence()) {
    for (std::size_t i = 0; i < plugins.size(); ++i) {
      if (plugin_name(plugins[i]) == name) return plugins[i];
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool has_profiles(const YAML::Node& root) {
  const YAML::Node profiles = root["schedulingProfiles"];
  return profiles && profiles.IsSequence() && profiles.size() > 0;
}

// Whether a scheduling profile refers to `name` (with no profile, the EPP's default one holds
// every plugin but the profile handler).
bool in_a_profile(const YAML::Node& root, const std::string& name) {
  if (!has_profiles(root)) return true;
  const YAML::Node profiles = root["schedulingProfiles"];
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    const YAML::Node entries = profiles[p]["plugins"];
    if (!entries || !entries.IsSequence()) continue;
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const YAML::Node ref = entries[e]["pluginRef"];
      if (ref && ref.IsScalar() && ref.Scalar() == name) return true;
    }
  }
  return false;
}

// Writes out the profile the EPP makes when the config has none: "default", every plugin but
// the profile handler, in the plugins' order.
void write_default_profile(YAML::Node& root) {
  YAML::Node profile(YAML::NodeType::Map);
  profile["name"] = "default";
  YAML::Node entries(YAML::NodeType::Sequence);
  const YAML::Node& view = root;
  const YAML::Node plugins = view["plugins"];
  for (std::size_t i = 0; i < plugins.size(); ++i) {
    if (ends_with(plugin_type(plugins[i]), "-profile-handler")) continue;
    YAML::Node entry(YAML::NodeType::Map);
    entry["pluginRef"] = plugin_name(plugins[i]);
    entries.push_back(entry);
  }
  profile["plugins"] = entries;
  YAML::Node profiles(YAML::NodeType::Sequence);
  profiles.push_back(profile);
  root["schedulingProfiles"] = profiles;
}

// Lookups go through const nodes: yaml-cpp's non-const operator[] adds the key it looks for.
void set_weight(YAML::Node& root, const std::string& plugin, const std::string& value) {
  if (!has_profiles(root)) write_default_profile(root);
  const YAML::Node& view = root;
  const YAML::Node profiles = view["schedulingProfiles"];
  for (std::size_t p = 0; p < profiles.size(); ++p) {
    const YAML::Node entries = profiles[p]["plugins"];
    if (!entries || !entries.IsSequence()) continue;
    for (std::size_t e = 0; e < entries.size(); ++e) {
      const YAML::Node ref = entries[e]["pluginRef"];
      if (!ref || !ref.IsScalar() || ref.Scalar() != plugin) continue;
      YAML::Node entry = entries[e];  // the same node, to write into
      entry["weight"] = value;
    }
  }
}

const EppConfigSpec& own_config(const ScenarioSpec& spec, const std::string& name) {
  const EppConfigSpec* own = spec.epp_config(name);
  if (own == nullptr) throw UsageError("no EPP configuration named " + name);
  return *own;
}

}  // namespace

std::optional<EppSettingPath> split_epp_setting_path(const ScenarioSpec& spec,
                                                     const std::string& path,
                                                     std::string* problem) {
  const std::string rest = path.substr(4);  // after "epp."
  // The longest configuration name the path starts with: names may hold dots.
  const EppConfigSpec* config = nullptr;
  for (const auto& [name, candidate] : spec.epp_configs) {
    if (rest.rfind(name + ".", 0) == 0 && (config == nullptr || name.size() > config->name.size()))
      config = &candidate;
  }
  if (config == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, candidate] : spec.epp_configs) names.push_back(name);
    const std::string first = rest.substr(0, rest.find('.'));
    *problem = "no EPP configuration named \"" + first + "\"";
    if (names.empty()) {
      *problem += " (name one under epp:)";
    } else if (auto s = closest_word(first, names)) {
      *problem += "; did you mean '" + *s + "'?";
    } else {
      *problem += " (named under epp: " + join(names) + ")";
    }
    return std::nullopt;
  }
  const std::string inside = rest.substr(config->name.size() + 1);
  const std::size_t last = inside.rfind('.');
  if (last == std::string::npos || last == 0 || last + 1 == inside.size()) {
    *problem = "expected epp." + config->name + ".<plugin>.<weight or parameter>, e.g. epp." +
               config->name + ".prefix-cache-scorer.weight";
    return std::nullopt;
  }
  EppSettingPath split{config->name, inside.substr(0, last), inside.substr(last + 1)};
  const YAML::Node root = parse_epp_text(config->config->text);
  const YAML::Node plugin = find_plugin(root, split.plugin);
  if (!plugin) {
    std::vector<std::string> names;
    const YAML::Node plugins = root["plugins"];
    for (std::size_t i = 0; plugins && i < plugins.size(); ++i)
      names.push_back(plugin_name(plugins[i]));
    *problem = "EPP configuration " + config->name + " has no plugin " + split.plugin;
    if (auto s = closest_word(split.plugin, names)) {
      *problem += "; did you mean '" + *s + "'?";
    } else {
      *problem += " (its plugins: " + join(names) + ")";
    }
    return std::nullopt;
  }
  if (split.key == "weight") {
    if (!ends_with(plugin_type(plugin), "-scorer")) {
      *problem = "plugin " + split.plugin + " of EPP configuration " + config->name + " is a " +
                 plugin_type(plugin) + ", not a scorer: only a scorer has a weight";
      return std::nullopt;
    }
    if (!in_a_profile(root, split.plugin)) {
      *problem = "scorer " + split.plugin + " is in no scheduling profile of EPP configuration " +
                 config->name + ": it scores nothing, so its weight would change nothing";
      return std::nullopt;
    }
  }
  return split;
}

std::string apply_epp_settings(
    const std::string& text, const std::vector<std::pair<EppSettingPath, std::string>>& settings) {
  YAML::Node root = parse_epp_text(text);
  for (const auto& [path, value] : settings) {
    if (path.key == "weight") {
      set_weight(root, path.plugin, value);
      continue;
    }
    YAML::Node plugin = find_plugin(root, path.plugin);
    if (!plugin) continue;  // split_epp_setting_path refused it
    plugin["parameters"][path.key] = value;
  }
  return YAML::Dump(root) + "\n";
}

namespace {

// `settings` of one cell that reach configuration `name`, split.
std::vector<std::pair<EppSettingPath, std::string>> settings_of(
    const ScenarioSpec& spec, const std::string& name,
    const std::vector<std::pair<std::string, std::string>>& settings) {
  std::vector<std::pair<EppSettingPath, std::string>> mine;
  for (const auto& [path, value] : settings) {
    std::string problem;
    auto split = split_epp_setting_path(spec, path, &problem);
    if (!split) throw UsageError(path + ": " + problem);
    if (split->config == name) mine.emplace_back(std::move(*split), value);
  }
  return mine;
}

}  // namespace

std::shared_ptr<const EppConfigSpec> epp_config_for(const ScenarioSpec& spec, const Treatment& t,
                                                    const std::string& level) {
  const EppConfigSpec* own = spec.epp_config(level);
  if (own == nullptr) return nullptr;
  const auto mine = settings_of(spec, level, t.epp_settings);
  if (mine.empty()) return std::make_shared<const EppConfigSpec>(*own);
  const std::string text = apply_epp_settings(own->config->text, mine);
  std::string error;
  auto config = sim::parse_epp_config("epp." + level, text, &error);
  if (!config) throw UsageError(error);
  return std::make_shared<const EppConfigSpec>(
      EppConfigSpec{own->name, own->file, config, own->mark});
}

std::string check_epp_settings(const ScenarioSpec& spec, const std::string& config,
                               const std::vector<std::pair<std::string, std::string>>& settings) {
  const EppConfigSpec& own = own_config(spec, config);
  std::vector<std::pair<EppSettingPath, std::string>> mine;
  try {
    mine = settings_of(spec, config, settings);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  std::vector<YamlError> errors;
  sim::read_epp_config("", apply_epp_settings(own.config->text, mine), &errors);
  if (errors.empty()) return "";
  return errors.front().field.empty() ? errors.front().message
                                      : errors.front().field + ": " + errors.front().message;
}

}  // namespace kvsweep::orchestrator
