// The router's per-replica index of cached block hashes: exact (KV events) or approximate (TTL).
#include "sim/router/kv_index.h"

#include <algorithm>

namespace kvsweep::sim {
namespace {

// Expired approximate entries are dropped this often (in recorded requests): cheap amortised
// cleanup without a timer.
constexpr std::uint64_t kPruneEvery = 1024;

}  // namespace

KvIndex::KvIndex(int replicas) : blocks_(replicas), sizes_(replicas, 0) {}

void KvIndex::apply(int replica, const KvEvent& event) {
  auto& blocks = blocks_[static_cast<std::size_t>(replica)];
  if (event.kind == KvEvent::Kind::kStored) {
    blocks[event.block_hash] = Clock::time_point::max();
  } else {
    blocks.erase(event.block_hash);
  }
  sizes_[static_cast<std::size_t>(replica)] = blocks.size();
}

void KvIndex::record(int replica, std::span<const std::uint64_t> hashes, Clock::duration ttl,
                     Clock::time_point now) {
  auto& blocks = blocks_[static_cast<std::size_t>(replica)];
  const Clock::time_point expiry = now + ttl;
  for (std::uint64_t hash : hashes) {
    auto& entry = blocks[hash];
    if (entry < expiry) entry = expiry;
  }
  sizes_[static_cast<std::size_t>(replica)] = blocks.size();
  if (++records_since_prune_ >= kPruneEvery) prune(now);
}

void KvIndex::clear() {
  for (auto& blocks : blocks_) blocks.clear();
  std::fill(sizes_.begin(), sizes_.end(), 0);
}

void KvIndex::clear(int replica) {
  blocks_[static_cast<std::size_t>(replica)].clear();
  sizes_[static_cast<std::size_t>(replica)] = 0;
}

void KvIndex::overlaps(std::span<const std::uint64_t> hashes, std::vector<int>* out,
                       Clock::time_point now) const {
  out->assign(blocks_.size(), 0);
  for (std::size_t r = 0; r < blocks_.size(); ++r) {
    int matched = 0;
    for (std::uint64_t hash : hashes) {
      const auto found = blocks_[r].find(hash);
      if (found == blocks_[r].end() || found->second <= now) break;
      ++matched;
    }
    (*out)[r] = matched;
  }
}

void KvIndex::prune(Clock::time_point now) {
  records_since_prune_ = 0;
  for (std::size_t r = 0; r < blocks_.size(); ++r) {
    std::erase_if(blocks_[r], [now](const auto& entry) { return entry.second <= now; });
    sizes_[r] = blocks_[r].size();
  }
}

}  // namespace kvsweep::sim
