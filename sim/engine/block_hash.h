// Chained hashes of full KV blocks: the prefix-cache keys of vLLM automatic prefix caching.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/tokenizer.h"

namespace kvsweep::sim {

// Parent of the first block. Fixed, so that two replicas built with the same block size give
// the same hashes for the same tokens (a KV-aware router may rely on that).
inline constexpr std::uint64_t kRootBlockHash = 0x6b7673776565700aULL;

// hash_i = XXH3_64(tokens of block i) seeded with hash_{i-1}: a block's key depends on every
// token before it, so identical content after a different prefix never hits.
std::uint64_t hash_block(std::uint64_t parent, std::span<const TokenId> block_tokens);

// Extends `hashes` (the chain of tokens' first hashes->size() full blocks) with the hashes of
// every further FULL block of `tokens`. Partial tail blocks get no hash: vLLM never caches them.
// Incremental so that generated tokens can be hashed as their blocks fill.
void extend_block_hashes(std::span<const TokenId> tokens, int block_size,
                         std::vector<std::uint64_t>* hashes);

}  // namespace kvsweep::sim
