// Which replicas the router may route to: out after consecutive failures, back when one answers.
#include "sim/router/replica_health.h"

#include <algorithm>

namespace kvsweep::sim {
namespace {

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

ReplicaHealth::ReplicaHealth(int replicas, int failure_threshold)
    : threshold_(failure_threshold),
      healthy_(static_cast<std::size_t>(replicas), 1),
      failures_(static_cast<std::size_t>(replicas), 0),
      ejections_(static_cast<std::size_t>(replicas), 0),
      last_error_(static_cast<std::size_t>(replicas)) {}

void ReplicaHealth::on_success(int replica, const std::string& how) {
  const auto r = static_cast<std::size_t>(replica);
  failures_[r] = 0;
  if (healthy_[r]) return;
  healthy_[r] = 1;
  record(replica, false, how);
}

void ReplicaHealth::on_failure(int replica, const std::string& why) {
  const auto r = static_cast<std::size_t>(replica);
  ++failures_[r];
  last_error_[r] = why;
  if (!healthy_[r] || threshold_ < 1 || failures_[r] < threshold_) return;
  healthy_[r] = 0;
  ++ejections_[r];
  record(replica, true,
         std::to_string(failures_[r]) + " consecutive failure" + (failures_[r] == 1 ? "" : "s") +
             "; last: " + why);
}

int ReplicaHealth::healthy_count() const {
  return static_cast<int>(std::count(healthy_.begin(), healthy_.end(), std::uint8_t{1}));
}

std::span<const std::uint8_t> ReplicaHealth::routable() const {
  const int healthy = healthy_count();
  if (healthy == 0 || healthy == static_cast<int>(healthy_.size())) return {};
  return healthy_;
}

void ReplicaHealth::record(int replica, bool ejected, std::string reason) {
  events_.push_back(HealthEvent{next_seq_++, unix_now_s(), replica, ejected, std::move(reason)});
  if (events_.size() > kKeptEvents) events_.pop_front();
}

}  // namespace kvsweep::sim
