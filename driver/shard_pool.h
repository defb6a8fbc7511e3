// ShardPool: a transfer thread's curl shards, and which one a new transfer goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "driver/curl_shard.h"

namespace kvsweep::driver {

// Picks a shard for each new transfer: one with an idle connection (the most recently freed:
// keep-alive reuse), else one with room, else a new one. O(1) amortized: entries that went
// stale are dropped as they surface. Not thread-safe: owned and used by one transfer thread,
// which also releases the shards (libcurl handles die on the thread that used them).
class ShardPool {
 public:
  // `epoll_fd` and `run_now` are the thread's; every shard made here registers with them.
  ShardPool(int epoll_fd, std::vector<CurlShard*>* run_now);
  ShardPool(const ShardPool&) = delete;
  ShardPool& operator=(const ShardPool&) = delete;

  CurlShard* pick();  // may make a shard: throws std::runtime_error as CurlShard does
  CurlShard* find(std::uint32_t id) const;     // nullptr for an id no shard has (a stale event)
  void on_transfer_removed(CurlShard* shard);  // a transfer left `shard`: list it for reuse
  void clear();                                // releases every shard; none may carry a transfer

 private:
  int epoll_fd_;
  std::vector<CurlShard*>* run_now_;
  std::vector<std::unique_ptr<CurlShard>> shards_;
  std::vector<CurlShard*> idle_shards_;  // may hold an idle connection; most recent last
  std::vector<CurlShard*> room_shards_;  // had room for a transfer when listed
};

}  // namespace kvsweep::driver
