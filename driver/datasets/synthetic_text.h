// Deterministic filler text of a given token length, and per-item seeds derived from one seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace kvsweep::driver {

// Tokens -> text: 4 bytes per token. The sim's tokenizer cuts text into 4-byte tokens (so a
// text of n tokens here is exactly n tokens there, and 16-token sim blocks line up with our
// blocks), and ~4 characters per token is what BPE tokenizers average on English. A real
// tokenizer may count our vocabulary words as fewer tokens; lengths are approximate off-sim.
inline constexpr int kBytesPerToken = 4;

// A seed for item `index` of stream `stream` (e.g. prefix 3, or hash_id 4711), mixed by
// splitmix64 so neighbouring indices give unrelated generators.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// `head` followed by vocabulary words from `rng`, cut to exactly tokens * kBytesPerToken bytes
// (the head too, when it is longer). Words are ASCII, so a cut never splits a character.
std::string text_of_tokens(const std::string& head, int tokens, std::mt19937_64& rng);

}  // namespace kvsweep::driver
