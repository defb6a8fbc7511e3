// The KV block pool and its prefix cache: ref counts, the LRU free queue, hash -> block map.
#include "sim/engine/block_pool.h"

#include <cassert>
#include <utility>

namespace kvsweep::sim {

BlockPool::BlockPool(int num_blocks)
    : ref_cnt_(num_blocks, 0),
      hash_(num_blocks, 0),
      has_hash_(num_blocks, false),
      prev_(num_blocks + 1),
      next_(num_blocks + 1) {
  const BlockId sentinel = num_blocks;
  prev_[sentinel] = sentinel;
  next_[sentinel] = sentinel;
  for (BlockId block = 0; block < num_blocks; ++block) push_tail(block);
}

std::vector<BlockId> BlockPool::find_cached(const std::vector<std::uint64_t>& hashes,
                                            int max_blocks) const {
  std::vector<BlockId> hits;
  if (!caching_) return hits;
  for (std::size_t i = 0; i < hashes.size() && static_cast<int>(i) < max_blocks; ++i) {
    auto found = cached_.find(hashes[i]);
    if (found == cached_.end()) break;
    hits.push_back(found->second);
  }
  return hits;
}

void BlockPool::touch(const std::vector<BlockId>& blocks) {
  for (BlockId block : blocks) {
    if (ref_cnt_[block] == 0) unlink(block);
    ++ref_cnt_[block];
  }
}

bool BlockPool::allocate(int count, std::vector<BlockId>* out) {
  if (count > num_free_) return false;
  const BlockId sentinel = num_blocks();
  for (int i = 0; i < count; ++i) {
    const BlockId block = next_[sentinel];
    unlink(block);
    evict_hash(block);
    ref_cnt_[block] = 1;
    out->push_back(block);
  }
  return true;
}

void BlockPool::cache_block(BlockId block, std::uint64_t hash) {
  if (!caching_) return;
  assert(!has_hash_[block]);
  hash_[block] = hash;
  has_hash_[block] = true;
  if (cached_.try_emplace(hash, block).second && listener_) {
    listener_(KvEvent{KvEvent::Kind::kStored, hash});
  }
}

void BlockPool::free_blocks(const std::vector<BlockId>& blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    assert(ref_cnt_[*it] > 0);
    if (--ref_cnt_[*it] == 0) {
      // With caching off, a freed block that still carries a hash from before would keep the
      // router's KV index crediting this replica with a prefix it can no longer serve.
      if (!caching_) evict_hash(*it);
      push_tail(*it);
    }
  }
}

void BlockPool::set_caching(bool enabled) {
  caching_ = enabled;
  if (!enabled) reset_cache();
}

bool BlockPool::reset_cache() {
  const BlockId sentinel = num_blocks();
  for (BlockId block = next_[sentinel]; block != sentinel; block = next_[block]) {
    evict_hash(block);
  }
  return num_free_ == num_blocks();
}

std::vector<BlockId> BlockPool::free_queue() const {
  std::vector<BlockId> order;
  const BlockId sentinel = num_blocks();
  for (BlockId block = next_[sentinel]; block != sentinel; block = next_[block]) {
    order.push_back(block);
  }
  return order;
}

void BlockPool::unlink(BlockId block) {
  next_[prev_[block]] = next_[block];
  prev_[next_[block]] = prev_[block];
  --num_free_;
}

void BlockPool::push_tail(BlockId block) {
  const BlockId sentinel = num_blocks();
  const BlockId tail = prev_[sentinel];
  next_[tail] = block;
  prev_[block] = tail;
  next_[block] = sentinel;
  prev_[sentinel] = block;
  ++num_free_;
}

// Only the block that the map points at owns the entry: evicting a duplicate must not remove
// the hash that another, still cached, block serves.
void BlockPool::evict_hash(BlockId block) {
  if (!has_hash_[block]) return;
  auto found = cached_.find(hash_[block]);
  if (found != cached_.end() && found->second == block) {
    cached_.erase(found);
    if (listener_) listener_(KvEvent{KvEvent::Kind::kRemoved, hash_[block]});
  }
  has_hash_[block] = false;
}

}  // namespace kvsweep::sim
