// What a target applies for one cell: the levels of the factors the load driver does not set.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kvsweep::orchestrator {

// The levels of the factors a target applies (every factor but the load driver's), in the
// scenario's factor order: {{"strategy", "kv-aware"}}.
struct Treatment {
  std::vector<std::pair<std::string, std::string>> levels;

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
