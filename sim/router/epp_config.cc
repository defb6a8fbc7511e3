// The endpoint picker's EndpointPickerConfig as kvsweep models it: read, checked, defaulted.
#include "sim/router/epp_config.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/join.h"
#include "common/spellcheck.h"

namespace kvsweep::sim {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The role a plugin type plays in a scheduling profile.
enum class Role { kScorer, kPicker, kFilter, kProfileHandler };

Role role_of(const std::string& type) {
  if (type.size() > 7 && type.compare(type.size() - 7, 7, "-scorer") == 0) return Role::kScorer;
  if (type.size() > 7 && type.compare(type.size() - 7, 7, "-picker") == 0) return Role::kPicker;
  if (type == "single-profile-handler" || type == "pd-profile-handler") {
    return Role::kProfileHandler;
  }
  return Role::kFilter;
}

// "path:line:column: " for a place in the file `errors` reports on.
std::string place(const YamlErrors& errors, const YAML::Mark& mark) {
  return errors.path() + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1) + ": ";
}

// A plugin as the config declares it, checked.
struct Plugin {
  std::string name;
  std::string type;
  Role role = Role::kFilter;
  EppScorer scorer;  // kind and parameters, when a scorer
  int max_num_of_endpoints = 1;
  bool modelled = true;  // false: the EPP's, run only by the real EPP
  YAML::Mark mark;
};

// The EPP reads an int parameter with Go's json: a fraction or a string is an error there too.
std::optional<int> int_param(YamlMapReader& params, const std::string& key, int min_value) {
  const YAML::Node value = params.get(key);
  if (!value.IsDefined()) return std::nullopt;
  return params.to_int<int>(value, key, min_value);
}

// The parameters kvsweep reads of each modelled type; defaults as the pinned release's factory
// functions set them (a non-positive LRU capacity, threshold or endpoint count falls back to the
// default there, so it does here).
void read_parameters(const YAML::Node& node, const std::string& prefix, YamlErrors& errors,
                     Plugin* plugin) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    errors.add(node.Mark(), prefix, "expected a mapping, got " + describe_node(node));
    return;
  }
  YamlMapReader params(node, prefix, errors);
  EppScorer& s = plugin->scorer;
  if (plugin->type == "prefix-cache-scorer") {
    if (auto v = int_param(params, "hashBlockSize", 1)) s.hash_block_size = *v;
    if (auto v = int_param(params, "maxPrefixBlocksToMatch", 1)) s.max_prefix_blocks = *v;
    if (auto v = int_param(params, "lruCapacityPerServer", 0); v && *v > 0) {
      s.lru_capacity_per_server = *v;
    }
  } else if (plugin->type == "load-aware-scorer") {
    if (auto v = int_param(params, "threshold", 0); v && *v > 0) s.queue_threshold = *v;
  } else if (plugin->role == Role::kPicker) {
    if (auto v = int_param(params, "maxNumOfEndpoints", 0); v && *v > 0) {
      plugin->max_num_of_endpoints = *v;
    }
  }
  params.finish();
}

std::optional<EppScorerKind> scorer_kind(const std::string& type) {
  if (type == "prefix-cache-scorer") return EppScorerKind::kPrefixCache;
  if (type == "queue-scorer") return EppScorerKind::kQueue;
  if (type == "kv-cache-utilization-scorer") return EppScorerKind::kKvCacheUtilization;
  if (type == "load-aware-scorer") return EppScorerKind::kLoadAware;
  return std::nullopt;
}

// Names other releases gave the same plugins (the Extension's earlier samples and later
// renames), for "did you mean": an edit distance would not find most of them.
std::optional<std::string> renamed(const std::string& type) {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"prefix-cache", "prefix-cache-scorer"},
      {"max-score", "max-score-picker"},
      {"random", "random-picker"},
      {"kv-cache-scorer", "kv-cache-utilization-scorer"},
      {"kv-cache-utilization", "kv-cache-utilization-scorer"},
      {"queue", "queue-scorer"},
      {"load-aware", "load-aware-scorer"},
      {"single-profile", "single-profile-handler"},
  };
  for (const auto& [old_name, name] : names) {
    if (old_name == type) return name;
  }
  return closest_word(type, epp_plugin_types());
}

std::string unknown_type_message(const std::string& type) {
  std::string message = "plugin type '" + type + "' is not found in registry";
  if (auto near = renamed(type)) message += "; did you mean '" + *near + "'?";
  return message +
         " (the EPP of llm-d-inference-scheduler v0.3.2 knows: " + join(epp_plugin_types()) + ")";
}

// Calls read(item, its path) for each entry of the list at `path`: absent or null is an empty
// list; anything else but a list, and an entry that is not a mapping, is an error located there.
// (A missing key's node is invalid: only IsDefined() may be asked of it.)
template <typename ReadEntry>
void for_each_mapping(const YAML::Node& list, const std::string& path, YamlErrors& errors,
                      ReadEntry read) {
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    errors.add(list.Mark(), path, "expected a list, got " + describe_node(list));
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string at = path + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) {
      errors.add(item.Mark(), at, "expected a mapping, got " + describe_node(item));
      continue;
    }
    read(item, at);
  }
}

// plugins: every entry read and checked; the names in order. A type kvsweep does not model is
// kept (a profile may refer to it) and named in `unmodelled`.
std::vector<Plugin> read_plugins(const YAML::Node& list, const std::string& at, YamlErrors& errors,
                                 std::vector<std::string>* unmodelled) {
  std::vector<Plugin> plugins;
  std::set<std::string> names;
  for_each_mapping(
      list, at + "plugins", errors, [&](const YAML::Node& item, const std::string& prefix) {
        YamlMapReader reader(item, prefix, errors);
        Plugin plugin;
        plugin.mark = item.Mark();
        reader.read_string("name", &plugin.name);
        reader.read_string("type", &plugin.type);
        const YAML::Node parameters = reader.get("parameters");
        reader.finish();
        if (plugin.type.empty()) {
          errors.add(item.Mark(), prefix,
                     "plugin definition for '" + plugin.name + "' is missing a type");
          return;
        }
        const YAML::Mark type_mark = item["type"].Mark();
        if (plugin.name.empty()) plugin.name = plugin.type;  // the loader's setDefaultsPhaseOne
        if (!names.insert(plugin.name).second) {
          errors.add(item.Mark(), prefix, "plugin name '" + plugin.name + "' used more than once");
          return;
        }
        if (!contains(epp_plugin_types(), plugin.type)) {
          errors.add(type_mark, prefix + ".type", unknown_type_message(plugin.type));
          return;
        }
        plugin.role = role_of(plugin.type);
        if (!contains(epp_modelled_plugin_types(), plugin.type)) {
          unmodelled->push_back(place(errors, type_mark) + prefix + ".type: plugin type '" +
                                plugin.type + "'");
          plugin.modelled = false;
          plugins.push_back(std::move(plugin));
          return;
        }
        plugin.scorer.name = plugin.name;
        if (auto kind = scorer_kind(plugin.type)) plugin.scorer.kind = *kind;
        read_parameters(parameters, prefix + ".parameters", errors, &plugin);
        plugins.push_back(std::move(plugin));
      });
  return plugins;
}

struct ProfileEntry {
  std::string ref;
  std::optional<int> weight;
  YAML::Mark mark;
};

struct Profile {
  std::string name;
  std::vector<ProfileEntry> entries;
  YAML::Mark mark;
};

std::vector<Profile> read_profiles(const YAML::Node& list, const std::string& at,
                                   YamlErrors& errors) {
  std::vector<Profile> profiles;
  std::set<std::string> names;
  for_each_mapping(
      list, at + "schedulingProfiles", errors,
      [&](const YAML::Node& item, const std::string& prefix) {
        YamlMapReader reader(item, prefix, errors);
        Profile profile;
        profile.mark = item.Mark();
        reader.read_string("name", &profile.name);
        const YAML::Node entries = reader.get("plugins");
        reader.finish();
        if (profile.name.empty()) {
          errors.add(item.Mark(), prefix, "SchedulingProfile must have a name");
          return;
        }
        if (!names.insert(profile.name).second) {
          errors.add(item.Mark(), prefix,
                     "the name '" + profile.name +
                         "' has been specified for more than one SchedulingProfile");
          return;
        }
        for_each_mapping(
            entries, prefix + ".plugins", errors,
            [&](const YAML::Node& e, const std::string& entry_path) {
              YamlMapReader entry_reader(e, entry_path, errors);
              ProfileEntry entry;
              entry.mark = e.Mark();
              entry_reader.read_string("pluginRef", &entry.ref);
              // The EPP's weight is a Go int: a YAML 2.0 decodes to 2 there, 1.5 is an error.
              const YAML::Node weight = entry_reader.get("weight");
              if (weight.IsDefined()) {
                double value = 0;
                if (weight.IsScalar() && YAML::convert<double>::decode(weight, value) &&
                    value >= 0 && value <= 1e6 &&
                    value == static_cast<double>(static_cast<int>(value))) {
                  entry.weight = static_cast<int>(value);
                } else {
                  errors.add(weight.Mark(), entry_path + ".weight",
                             "expected a whole number >= 0, got " + describe_node(weight));
                }
              }
              entry_reader.finish();
              if (entry.ref.empty()) {
                errors.add(e.Mark(), entry_path,
                           "SchedulingProfile '" + profile.name +
                               "' plugins must have a plugin reference");
                return;
              }
              profile.entries.push_back(std::move(entry));
            });
        profiles.push_back(std::move(profile));
      });
  return profiles;
}

}  // namespace

const std::vector<std::string>& epp_plugin_types() {
  // The Extension's in-tree plugins (cmd/epp/runner/runner.go, registerInTreePlugins) and
  // llm-d's (pkg/plugins/register.go), at the pinned commits.
  static const std::vector<std::string> types = {
      "prefix-cache-scorer",    "max-score-picker",        "random-picker",
      "weighted-random-picker", "single-profile-handler",  "kv-cache-utilization-scorer",
      "queue-scorer",           "lora-affinity-scorer",    "by-label",
      "by-label-selector",      "decode-filter",           "prefill-filter",
      "prefill-header-handler", "pd-profile-handler",      "precise-prefix-cache-scorer",
      "load-aware-scorer",      "session-affinity-scorer", "active-request-scorer",
  };
  return types;
}

const std::vector<std::string>& epp_modelled_plugin_types() {
  static const std::vector<std::string> types = {
      "prefix-cache-scorer", "queue-scorer",  "kv-cache-utilization-scorer", "load-aware-scorer",
      "max-score-picker",    "random-picker", "single-profile-handler",      "decode-filter",
  };
  return types;
}

std::optional<EppConfig> read_epp_config(const std::string& path, const std::string& text,
                                         std::vector<YamlError>* errors) {
  YamlErrors located(path, text, errors);
  const std::optional<YAML::Node> root = load_yaml_document(text, located);
  if (!root) return std::nullopt;
  auto config = read_epp_config_node(*root, "", located);
  if (config) config->text = text;
  return config;
}

std::optional<EppConfig> read_epp_config_node(const YAML::Node& node, const std::string& field,
                                              YamlErrors& located) {
  const std::string at = field.empty() ? "" : field + ".";
  const std::size_t errors_before = located.count();
  const YAML::Node* root = &node;
  if (!root->IsMap()) {
    located.add(root->Mark(), field,
                std::string("expected an ") + kEppKind + " mapping, got " + describe_node(*root));
    return std::nullopt;
  }
  YamlMapReader reader(*root, field, located);
  std::string api_version;
  std::string kind;
  reader.require("apiVersion");
  reader.require("kind");
  reader.read_string("apiVersion", &api_version);
  reader.read_string("kind", &kind);
  if (!api_version.empty() && api_version != kEppApiVersion) {
    located.add((*root)["apiVersion"].Mark(), at + "apiVersion",
                "expected " + std::string(kEppApiVersion) + ", got \"" + api_version + "\"");
  }
  if (!kind.empty() && kind != kEppKind) {
    located.add((*root)["kind"].Mark(), at + "kind",
                "expected " + std::string(kEppKind) + ", got \"" + kind + "\"");
  }
  reader.require("plugins");
  std::vector<std::string> unmodelled;
  std::vector<Plugin> plugins = read_plugins(reader.get("plugins"), at, located, &unmodelled);
  std::vector<Profile> profiles = read_profiles(reader.get("schedulingProfiles"), at, located);
  reader.finish();
  if (located.count() > errors_before) return std::nullopt;

  std::map<std::string, const Plugin*> by_name;
  for (const Plugin& p : plugins) by_name[p.name] = &p;
  // No profile: the loader makes "default" of every filter, scorer and picker (weight 1).
  if (profiles.empty()) {
    Profile all;
    all.name = "default";
    all.mark = root->Mark();
    for (const Plugin& p : plugins) {
      if (p.role != Role::kProfileHandler) all.entries.push_back({p.name, std::nullopt, p.mark});
    }
    profiles.push_back(std::move(all));
  }
  for (const Profile& profile : profiles) {
    for (const ProfileEntry& e : profile.entries) {
      if (!by_name.count(e.ref)) {
        located.add(e.mark, "schedulingProfiles", e.ref + " is a reference to an undefined Plugin");
      }
    }
  }
  if (profiles.size() > 1) {
    unmodelled.push_back(place(located, profiles[1].mark) + at +
                         "schedulingProfiles: " + std::to_string(profiles.size()) +
                         " scheduling profiles (kvsweep models the one a single-profile-handler "
                         "runs, not a handler such as pd-profile-handler choosing among them)");
  }
  if (located.count() > errors_before) return std::nullopt;

  EppConfig config;
  config.text = YAML::Dump(node);
  config.profile = profiles.front().name;
  config.unmodelled = std::move(unmodelled);
  bool has_picker = false;
  for (const ProfileEntry& e : profiles.front().entries) {
    const Plugin& p = *by_name.at(e.ref);
    if (!p.modelled) continue;  // named in config.unmodelled
    switch (p.role) {
      case Role::kScorer: {
        EppScorer scorer = p.scorer;
        scorer.weight = e.weight.value_or(1);
        config.scorers.push_back(scorer);
        break;
      }
      case Role::kPicker:
        if (has_picker) {
          located.add(e.mark, at + "schedulingProfiles",
                      "failed to set '" + p.name +
                          "' as picker, already have a registered "
                          "picker plugin '" +
                          config.picker_name + "'");
          return std::nullopt;
        }
        has_picker = true;
        config.picker =
            p.type == "random-picker" ? EppPickerKind::kRandom : EppPickerKind::kMaxScore;
        config.picker_name = p.name;
        config.max_num_of_endpoints = p.max_num_of_endpoints;
        break;
      case Role::kFilter:
        config.filters.push_back(p.name);
        break;
      case Role::kProfileHandler:
        break;
    }
  }
  return config;
}

std::string epp_unmodelled_error(const EppConfig& config) {
  if (config.unmodelled.empty()) return "";
  return "not modelled by kvsweep's router: " + join(config.unmodelled, "; ") +
         " (it models one scheduling profile of: " + join(epp_modelled_plugin_types()) +
         "); only the real EPP (kind llmd) runs this configuration";
}

std::shared_ptr<const EppConfig> parse_epp_config(const std::string& path, const std::string& text,
                                                  std::string* error) {
  std::vector<YamlError> errors;
  auto config = read_epp_config(path, text, &errors);
  if (!config) {
    error->clear();
    for (const YamlError& e : errors) *error += (error->empty() ? "" : "\n") + e.text;
    return nullptr;
  }
  return std::make_shared<const EppConfig>(std::move(*config));
}

}  // namespace kvsweep::sim
