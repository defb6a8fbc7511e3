// "did you mean ...?": the closest known word to a misspelt one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep {

// Levenshtein distance (insert, delete, substitute each cost 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if it is close enough to be a plausible typo
// (distance <= max(1, length/3)); ties go to the earlier candidate.
std::optional<std::string> closest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace kvsweep
