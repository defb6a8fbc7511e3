// The endpoint picker's EndpointPickerConfig as kvsweep models it: read, checked, defaulted.
//
// Pinned to the Gateway API Inference Extension v1.0.0 (commit ffea2632) as built into
// llm-d-inference-scheduler v0.3.2 (commit c834d27a), whose EPP adds load-aware-scorer and
// decode-filter to the Extension's plugins. Plugin type names are those of that release
// (prefix-cache-scorer, max-score-picker; not the older prefix-cache / max-score).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/yaml_reader.h"

namespace kvsweep::sim {

inline constexpr const char* kEppApiVersion = "inference.networking.x-k8s.io/v1alpha1";
inline constexpr const char* kEppKind = "EndpointPickerConfig";

enum class EppScorerKind {
  kPrefixCache,         // prefix-cache-scorer, estimated from the EPP's own routing history
  kQueue,               // queue-scorer: waiting requests, min-max normalised over the candidates
  kKvCacheUtilization,  // kv-cache-utilization-scorer: 1 - KV cache usage
  kLoadAware,           // load-aware-scorer (llm-d): 0.5 empty queue, down to 0 at threshold
};

// One scorer of the profile with its weight and its plugin's parameters (the defaults are the
// pinned release's).
struct EppScorer {
  std::string name;  // the plugin's name (its type when the config gives none)
  EppScorerKind kind = EppScorerKind::kQueue;
  int weight = 1;  // the loader's DefaultScorerWeight when the profile gives none
  // prefix-cache-scorer: characters per hashed block, blocks matched at most, and the blocks
  // each server's LRU remembers.
  int hash_block_size = 64;
  int max_prefix_blocks = 256;
  int lru_capacity_per_server = 31250;
  int queue_threshold = 128;  // load-aware-scorer's "threshold"
};

enum class EppPickerKind { kMaxScore, kRandom };

// The one scheduling profile a single-profile-handler runs: its filters, scorers and picker.
struct EppConfig {
  std::string profile = "default";
  std::vector<EppScorer> scorers;  // in the profile's order
  EppPickerKind picker = EppPickerKind::kMaxScore;
  std::string picker_name = "max-score-picker";
  int max_num_of_endpoints = 1;
  std::vector<std::string> filters;  // decode-filter: kept every replica (none has a role)
  std::string text;                  // the config as written
  // What kvsweep's router does not model, each "path:line:column: field: what": a plugin type
  // the EPP has and kvsweep does not, a second scheduling profile. The real EPP runs such a
  // configuration (kind llmd writes it into the ConfigMap); kvsweep's router refuses it
  // (epp_unmodelled_error). The fields above hold only what is modelled.
  std::vector<std::string> unmodelled;
};

// "" when kvsweep's router can run `config` (sim, replicas, predict, --target sim, sim serve);
// otherwise why not, every part it does not model named with its place, and what it models.
std::string epp_unmodelled_error(const EppConfig& config);

// Every plugin type the pinned EPP registers, modelled or not, for messages.
const std::vector<std::string>& epp_plugin_types();
// The plugin types kvsweep models.
const std::vector<std::string>& epp_modelled_plugin_types();

// Reads an EndpointPickerConfig from `text`, reporting located errors (`path`:line:column,
// the line, a caret) into `errors`: the EPP's own message where it has one ("plugin type 'x'
// is not found in registry"), with the known types listed. Unknown fields are refused, as the
// EPP's strict decoder does; unknown parameters of a modelled plugin too (the EPP would ignore
// them, a typo would go unseen). A plugin type the EPP has but kvsweep does not model, and a
// second scheduling profile, are read, not refused: they go to EppConfig::unmodelled (the
// parameters of such a plugin are the EPP's to check). nullopt when there was an error.
std::optional<EppConfig> read_epp_config(const std::string& path, const std::string& text,
                                         std::vector<YamlError>* errors);

// The same from a node of a larger file (a scenario's inline config): errors are located there,
// their fields under `field` ("epp.estimated-prefix"); text is the node written out as YAML.
std::optional<EppConfig> read_epp_config_node(const YAML::Node& node, const std::string& field,
                                              YamlErrors& errors);

// The same, with the errors joined into one message (for an admin request's 400).
std::shared_ptr<const EppConfig> parse_epp_config(const std::string& path, const std::string& text,
                                                  std::string* error);

}  // namespace kvsweep::sim
