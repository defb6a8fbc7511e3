// Claims on a sweep's cells: this process as an owner, live or dead owners, the heartbeat.
#include "orchestrator/sweep/cell_claims.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

#include "common/wall_clock.h"

namespace kvsweep::orchestrator {
namespace {

// Two containers may share a host name; their pid namespaces tell them apart.
std::string pid_namespace() {
  char buffer[128] = {};
  const ssize_t n = readlink("/proc/self/ns/pid", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
}

bool process_gone(std::int64_t pid) {
  // kill(pid, 0) sends nothing; ESRCH means no such process (EPERM: it exists, not ours).
  return pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string this_host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

store::ClaimOwner this_process_owner() {
  std::random_device device;
  const std::uint64_t id = (static_cast<std::uint64_t>(device()) << 32) | device();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  return store::ClaimOwner{hex, this_host_name(), getpid(), pid_namespace()};
}

bool claim_is_live(const store::CellClaim& claim, const store::ClaimOwner& me, double now_s,
                   double timeout_s) {
  const store::ClaimOwner& owner = claim.owner;
  const bool same_host = owner.host == me.host && !owner.pid_namespace.empty() &&
                         owner.pid_namespace == me.pid_namespace;
  if (same_host && owner.pid != me.pid && process_gone(owner.pid)) return false;
  return now_s - claim.heartbeat_s < timeout_s;
}

std::string describe_claim(const store::CellClaim& claim, double now_s) {
  const double age_s = std::max(0.0, now_s - claim.heartbeat_s);
  return "pid " + std::to_string(claim.owner.pid) + " on " + claim.owner.host + " (run " +
         claim.owner.run_id + "), last heartbeat " + std::to_string(std::llround(age_s)) + " s ago";
}

double heartbeat_interval_s(double timeout_s) { return std::clamp(timeout_s / 4, 0.05, 15.0); }

Heartbeat::Heartbeat(const std::string& store_path, std::string run_id, double interval_s, Log log)
    : store_(store::Store::open(store_path)),
      run_id_(std::move(run_id)),
      interval_s_(interval_s),
      log_(std::move(log)),
      thread_([this] { loop(); }) {}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeat::loop() {
  const auto interval = std::chrono::duration<double>(interval_s_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, interval, [this] { return stop_; })) {
    lock.unlock();
    try {
      const int held = store_.beat(run_id_, unix_now_s());
      log_->debug("heartbeat of run {}: {} claimed cells", run_id_, held);
    } catch (const std::exception& e) {
      log_->warn("heartbeat of run {} not stored: {}", run_id_, e.what());
    }
    lock.lock();
  }
}

}  // namespace kvsweep::orchestrator
