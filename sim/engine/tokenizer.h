// Deterministic tokenizer stand-in: identical text prefixes give identical token prefixes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::sim {

using TokenId = std::uint32_t;

// Cuts text into consecutive 4-byte pieces (the last may be shorter) and maps each piece to
// a token id by hash: about 4 characters per token, as real BPE tokenizers average on English,
// and a shared text prefix of n bytes always yields the same first n/4 tokens.
std::vector<TokenId> tokenize(std::string_view text);

// The text of generated token `index` of a request seeded by `seed`: a short word with a
// leading space, deterministic for (seed, index).
std::string generated_piece(std::uint64_t seed, int index);

}  // namespace kvsweep::sim
