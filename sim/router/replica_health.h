// Which replicas the router may route to: out after consecutive failures, back when one answers.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

namespace kvsweep::sim {

struct HealthOptions {
  // How often every replica's /health is probed, taken-out ones included (that is how they come
  // back). 0 turns health checking off: no probes and no taking out, every replica is routed to.
  std::chrono::milliseconds probe_interval{1000};
  // Consecutive failures (a refused connect of a routed request or fan-out, a failed probe)
  // that take a replica out of routing. Any success resets the count.
  int failure_threshold = 3;
  // A probe without an answer within this long has failed; 0: the probe interval, at most 2 s.
  std::chrono::milliseconds probe_timeout{0};
};

// A replica taken out of routing or put back.
struct HealthEvent {
  std::uint64_t seq = 0;  // from 1, in order
  double unix_s = 0;      // wall-clock time of the event
  int replica = 0;
  bool ejected = false;  // true: taken out; false: put back
  std::string reason;    // "3 consecutive failures; last: connect: Connection refused"
};

// The health state machine, no I/O: the router feeds it outcomes and asks whom it may route to.
// Thread contract: the router's io thread only.
class ReplicaHealth {
 public:
  ReplicaHealth(int replicas, int failure_threshold);

  // The replica answered (a connect succeeded, a probe got 200): counts reset; a replica that
  // was out is put back.
  void on_success(int replica, const std::string& how);
  // The replica failed; at the threshold it is taken out (once, until it succeeds again).
  void on_failure(int replica, const std::string& why);

  bool healthy(int replica) const { return healthy_[static_cast<std::size_t>(replica)] != 0; }
  int healthy_count() const;
  // Per replica, 1 when it may be routed to. Empty when every replica may be (all healthy, or
  // none is: with nothing healthy the router tries them all rather than refuse every request).
  std::span<const std::uint8_t> routable() const;
  std::uint64_t ejections(int replica) const {
    return ejections_[static_cast<std::size_t>(replica)];
  }
  int consecutive_failures(int replica) const {
    return failures_[static_cast<std::size_t>(replica)];
  }
  const std::string& last_error(int replica) const {
    return last_error_[static_cast<std::size_t>(replica)];
  }
  // The latest events, oldest first (at most kKeptEvents).
  const std::deque<HealthEvent>& events() const { return events_; }
  static constexpr std::size_t kKeptEvents = 1000;

 private:
  void record(int replica, bool ejected, std::string reason);

  int threshold_;
  std::vector<std::uint8_t> healthy_;
  std::vector<int> failures_;
  std::vector<std::uint64_t> ejections_;
  std::vector<std::string> last_error_;
  std::deque<HealthEvent> events_;
  std::uint64_t next_seq_ = 1;
};

}  // namespace kvsweep::sim
