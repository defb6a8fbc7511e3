// ShardPool: a transfer thread's curl shards, and which one a new transfer goes on.
#include "driver/shard_pool.h"

namespace kvsweep::driver {

ShardPool::ShardPool(int epoll_fd, std::vector<CurlShard*>* run_now)
    : epoll_fd_(epoll_fd), run_now_(run_now) {}

CurlShard* ShardPool::pick() {
  while (!idle_shards_.empty()) {
    CurlShard* shard = idle_shards_.back();
    if (shard->has_room() && shard->idle_connections() > 0) return shard;
    shard->listed_idle = false;
    idle_shards_.pop_back();
  }
  while (!room_shards_.empty()) {
    CurlShard* shard = room_shards_.back();
    if (shard->has_room()) return shard;
    shard->listed_room = false;
    room_shards_.pop_back();
  }
  shards_.push_back(
      std::make_unique<CurlShard>(epoll_fd_, static_cast<std::uint32_t>(shards_.size()), run_now_));
  CurlShard* shard = shards_.back().get();
  shard->listed_room = true;
  room_shards_.push_back(shard);
  return shard;
}

CurlShard* ShardPool::find(std::uint32_t id) const {
  return id < shards_.size() ? shards_[id].get() : nullptr;
}

void ShardPool::on_transfer_removed(CurlShard* shard) {
  if (!shard->listed_idle && shard->idle_connections() > 0) {
    shard->listed_idle = true;
    idle_shards_.push_back(shard);
  }
  if (!shard->listed_room) {
    shard->listed_room = true;
    room_shards_.push_back(shard);
  }
}

void ShardPool::clear() {
  idle_shards_.clear();
  room_shards_.clear();
  shards_.clear();
}

}  // namespace kvsweep::driver
