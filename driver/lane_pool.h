// LanePool: a transfer thread's transfer lanes, and which one a new transfer goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "driver/transfer_lane.h"

namespace kvsweep::driver {

// Picks a lane for each new transfer: one with an idle connection (the most recently freed:
// keep-alive reuse), else one with room, else a new one. O(1) amortized: entries that went
// stale are dropped as they surface. Not thread-safe: owned and used by one transfer thread,
// which also releases the lanes (libcurl handles die on the thread that used them).
class LanePool {
 public:
  // `epoll_fd` and `run_now` are the thread's; every lane made here registers with them.
  LanePool(int epoll_fd, std::vector<TransferLane*>* run_now);
  LanePool(const LanePool&) = delete;
  LanePool& operator=(const LanePool&) = delete;

  TransferLane* pick();  // may make a lane: throws std::runtime_error as TransferLane does
  TransferLane* find(std::uint32_t id) const;    // nullptr for an id no lane has (a stale event)
  void on_transfer_removed(TransferLane* lane);  // a transfer left `lane`: list it for reuse
  void clear();                                  // releases every lane; none may carry a transfer

 private:
  int epoll_fd_;
  std::vector<TransferLane*>* run_now_;
  std::vector<std::unique_ptr<TransferLane>> lanes_;
  std::vector<TransferLane*> idle_lanes_;  // may hold an idle connection; most recent last
  std::vector<TransferLane*> room_lanes_;  // had room for a transfer when listed
};

}  // namespace kvsweep::driver
