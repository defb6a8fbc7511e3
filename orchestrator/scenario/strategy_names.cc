// Routing strategy names: kvsweep's canonical ones and each serving system's own.
#include "orchestrator/scenario/strategy_names.h"

#include <utility>

namespace kvsweep::orchestrator {
namespace {

// spelling -> canonical
const std::vector<std::pair<std::string, std::string>>& spellings() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"random", "random"},         {"round-robin", "round-robin"},
      {"least-load", "least-load"}, {"prefix-hash", "prefix-hash"},
      {"kv-aware", "kv-aware"},     {"session", "session"},
      {"LeastLoad", "least-load"},  {"PrefixHash", "prefix-hash"},   // KubeAI
      {"kv", "kv-aware"},           {"least-loaded", "least-load"},  // Dynamo
  };
  return table;
}

}  // namespace

std::optional<std::string> canonical_strategy(const std::string& level) {
  for (const auto& [spelling, canonical] : spellings()) {
    if (spelling == level) return canonical;
  }
  return std::nullopt;
}

std::optional<std::string> kubeai_strategy(const std::string& canonical) {
  if (canonical == "least-load") return "LeastLoad";
  if (canonical == "prefix-hash") return "PrefixHash";
  return std::nullopt;
}

std::optional<std::string> dynamo_router_mode(const std::string& level) {
  if (level == "power-of-two" || level == "device-aware-weighted" || level == "direct") {
    return level;
  }
  const auto canonical = canonical_strategy(level);
  if (!canonical) return std::nullopt;
  if (*canonical == "kv-aware") return "kv";
  if (*canonical == "round-robin") return "round-robin";
  if (*canonical == "random") return "random";
  if (*canonical == "least-load") return "least-loaded";
  return std::nullopt;
}

std::vector<std::string> known_strategy_spellings() {
  std::vector<std::string> names;
  for (const auto& [spelling, canonical] : spellings()) names.push_back(spelling);
  names.insert(names.end(), {"power-of-two", "device-aware-weighted", "direct"});
  return names;
}

}  // namespace kvsweep::orchestrator
