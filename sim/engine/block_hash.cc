// Chained hashes of full KV blocks: the prefix-cache keys of vLLM automatic prefix caching.
#include "sim/engine/block_hash.h"

#include <xxhash.h>

namespace kvsweep::sim {

std::uint64_t hash_block(std::uint64_t parent, std::span<const TokenId> block_tokens) {
  return XXH3_64bits_withSeed(block_tokens.data(), block_tokens.size_bytes(), parent);
}

void extend_block_hashes(std::span<const TokenId> tokens, int block_size,
                         std::vector<std::uint64_t>* hashes) {
  const std::size_t size = static_cast<std::size_t>(block_size);
  const std::size_t full_blocks = tokens.size() / size;
  while (hashes->size() < full_blocks) {
    const std::size_t index = hashes->size();
    const std::uint64_t parent = index == 0 ? kRootBlockHash : hashes->back();
    hashes->push_back(hash_block(parent, tokens.subspan(index * size, size)));
  }
}

}  // namespace kvsweep::sim
