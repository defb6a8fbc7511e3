// TransferLane: one libcurl multi handle carrying a bounded number of transfers on a shared epoll
// set.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "driver/curl_handles.h"
#include "driver/lane_size.h"
#include "driver/pacer.h"
#include "driver/stream_transfer.h"

namespace kvsweep::driver {

// What an epoll event of a transfer thread refers to, packed in epoll_event::data.u64.
enum class EventKind : std::uint8_t { kSocket = 0, kTimer = 1, kWake = 2 };
struct EventTag {
  EventKind kind = EventKind::kSocket;
  std::uint32_t lane = 0;
  int fd = -1;
};
std::uint64_t pack(const EventTag& tag);
EventTag unpack(std::uint64_t data);

// libcurl tells the lane which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to call it
// back (CURLMOPT_TIMERFUNCTION). Sockets go into the thread's epoll set tagged with this lane,
// so one wake-up costs O(ready sockets), not O(open); the timer is the lane's own timerfd in
// the same set, armed lazily (an earlier deadline re-arms it, a later one waits for the fire),
// and "call me back at once" puts the lane on the thread's run-now list instead of a syscall.
// Not thread-safe: used by its thread only. Invariant: the epoll set holds exactly the sockets
// libcurl asked this lane to watch, plus its timerfd.
class TransferLane {
 public:
  // `run_now` is the thread's list of lanes whose run_timeouts() is due at once.
  TransferLane(int epoll_fd, std::uint32_t id, std::vector<TransferLane*>* run_now);
  ~TransferLane();
  TransferLane(const TransferLane&) = delete;
  TransferLane& operator=(const TransferLane&) = delete;

  std::uint32_t id() const { return id_; }
  int active() const { return active_; }
  bool has_room() const { return active_ < kLaneTransfers; }
  // Open connections not carrying a transfer: a new transfer added here reuses one.
  int idle_connections() const { return connections_.open - active_; }
  ConnectionCount* connections() { return &connections_; }

  void add(CURL* easy);     // starts the transfer; throws std::runtime_error
  void remove(CURL* easy);  // stops it; the easy handle must have been added here

  void on_socket(int fd, std::uint32_t epoll_events);  // epoll reported one of its sockets
  void on_timer();                                     // its timerfd fired
  void run_timeouts();                                 // libcurl asked to be called at once

  // The next transfer that finished, if any. The handle stays added until remove().
  std::optional<CurlDone> next_done();

  // Bookkeeping of the thread's lane choice (lane_pool.cc): set while listed.
  bool listed_idle = false;
  bool listed_room = false;

 private:
  static int on_socket_change(CURL* easy, curl_socket_t socket, int what, void* self,
                              void* socket_data);
  static int on_timer_change(CURLM* multi, long timeout_ms, void* self);
  void action(curl_socket_t socket, int flags);
  void arm(std::chrono::steady_clock::time_point deadline);

  int epoll_fd_;
  std::uint32_t id_;
  std::vector<TransferLane*>* run_now_;
  bool on_run_now_ = false;
  Pacer timer_;
  std::optional<std::chrono::steady_clock::time_point> curl_deadline_;  // what libcurl asked
  std::optional<std::chrono::steady_clock::time_point> armed_;          // what timer_ holds
  int active_ = 0;
  ConnectionCount connections_;
  CURLM* multi_ = nullptr;  // last: its cleanup calls back into the members above
};

}  // namespace kvsweep::driver
