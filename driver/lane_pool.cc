// LanePool: a transfer thread's transfer lanes, and which one a new transfer goes on.
#include "driver/lane_pool.h"

namespace kvsweep::driver {

LanePool::LanePool(int epoll_fd, std::vector<TransferLane*>* run_now)
    : epoll_fd_(epoll_fd), run_now_(run_now) {}

TransferLane* LanePool::pick() {
  while (!idle_lanes_.empty()) {
    TransferLane* lane = idle_lanes_.back();
    if (lane->has_room() && lane->idle_connections() > 0) return lane;
    lane->listed_idle = false;
    idle_lanes_.pop_back();
  }
  while (!room_lanes_.empty()) {
    TransferLane* lane = room_lanes_.back();
    if (lane->has_room()) return lane;
    lane->listed_room = false;
    room_lanes_.pop_back();
  }
  lanes_.push_back(std::make_unique<TransferLane>(
      epoll_fd_, static_cast<std::uint32_t>(lanes_.size()), run_now_));
  TransferLane* lane = lanes_.back().get();
  lane->listed_room = true;
  room_lanes_.push_back(lane);
  return lane;
}

TransferLane* LanePool::find(std::uint32_t id) const {
  return id < lanes_.size() ? lanes_[id].get() : nullptr;
}

void LanePool::on_transfer_removed(TransferLane* lane) {
  if (!lane->listed_idle && lane->idle_connections() > 0) {
    lane->listed_idle = true;
    idle_lanes_.push_back(lane);
  }
  if (!lane->listed_room) {
    lane->listed_room = true;
    room_lanes_.push_back(lane);
  }
}

void LanePool::clear() {
  idle_lanes_.clear();
  room_lanes_.clear();
  lanes_.clear();
}

}  // namespace kvsweep::driver
