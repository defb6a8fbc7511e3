// The router's per-replica index of cached block hashes: exact (KV events) or approximate (TTL).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/engine/block_pool.h"

namespace kvsweep::sim {

// What a KV-aware router believes each replica holds. Fed either by the replicas' own KV events
// (apply(): exact, as Dynamo with kv events on) or, where no events exist (kvsweep proxy in front
// of real servers), by the router's own decisions (record(): every block of a routed request is
// assumed cached on its replica for `ttl`, as Dynamo's --no-kv-events mode with TTL 120 s).
// Blocks are chained hashes, so a hash names its whole prefix and a set per replica is as good
// as a radix tree for counting consecutive matches from the root. Single-threaded (io thread).
class KvIndex {
 public:
  using Clock = std::chrono::steady_clock;

  explicit KvIndex(int replicas);

  void apply(int replica, const KvEvent& event);
  void record(int replica, std::span<const std::uint64_t> hashes, Clock::duration ttl,
              Clock::time_point now = Clock::now());
  void clear();
  void clear(int replica);  // that replica's cache was reset

  // Per replica: how many of `hashes`, from the first, it holds (stops at the first miss).
  void overlaps(std::span<const std::uint64_t> hashes, std::vector<int>* out,
                Clock::time_point now = Clock::now()) const;
  // Blocks believed cached on each replica (expired approximate entries may still count until
  // the next prune).
  const std::vector<std::size_t>& sizes() const { return sizes_; }

 private:
  void prune(Clock::time_point now);

  // hash -> expiry; Clock::time_point::max() for event-fed entries.
  std::vector<std::unordered_map<std::uint64_t, Clock::time_point>> blocks_;
  std::vector<std::size_t> sizes_;
  std::uint64_t records_since_prune_ = 0;
};

}  // namespace kvsweep::sim
