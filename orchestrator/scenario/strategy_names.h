// Routing strategy names: kvsweep's canonical ones and each serving system's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

// The canonical name for a strategy level as a user may write it: kvsweep's names (random,
// round-robin, least-load, prefix-hash, kv-aware, session) and the systems' own (KubeAI
// LeastLoad / PrefixHash, Dynamo kv / round-robin / random / least-loaded). nullopt if unknown.
std::optional<std::string> canonical_strategy(const std::string& level);

// KubeAI's spec.loadBalancing.strategy for a canonical name: LeastLoad | PrefixHash.
std::optional<std::string> kubeai_strategy(const std::string& canonical);

// Dynamo's DYN_ROUTER_MODE for a level: kv, round-robin, random, least-loaded, or one of
// Dynamo's own modes without a kvsweep equivalent (power-of-two, device-aware-weighted, direct)
// passed through.
std::optional<std::string> dynamo_router_mode(const std::string& level);

// Every name canonical_strategy() accepts, for "did you mean" messages.
std::vector<std::string> known_strategy_spellings();

}  // namespace kvsweep::orchestrator
