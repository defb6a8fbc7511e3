// Joins words for messages and labels: "a, b, c".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep {

inline std::string join(const std::vector<std::string>& words, std::string_view separator = ", ") {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

}  // namespace kvsweep
