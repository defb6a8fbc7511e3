// Claims on a sweep's cells: this process as an owner, a live owner told from a dead one, and
// the heartbeat that keeps this run's claims alive while it runs, long waits included.
#pragma once

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/log.h"
#include "store/rows.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// How old a heartbeat may grow before its claim is dead (run --claim-timeout). A minute: a
// retried Kubernetes Job's pod starts within seconds and is refused until then, while its
// backoff (10 s, 20 s, 40 s...) brings it back soon after.
inline constexpr double kDefaultClaimTimeoutS = 60;

// Thrown by run_sweep when another live run holds cells of the experiment to resume, or took
// the experiment over from this run. This run stores nothing after it.
class ClaimedByAnotherRun : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string this_host_name();  // gethostname, "unknown" when it fails

// This process with a fresh random run id (64 bits from std::random_device).
store::ClaimOwner this_process_owner();

// True while the claim's owner may still run the cell: its heartbeat is younger than
// timeout_s. A process on this host (same host name and pid namespace) that no longer exists
// is dead at once, so a resume after a kill -9 need not wait out the timeout.
bool claim_is_live(const store::CellClaim& claim, const store::ClaimOwner& me, double now_s,
                   double timeout_s);

// "pid 4242 on bench-host (run 1f2e3d4c5b6a7988), last heartbeat 3 s ago"
std::string describe_claim(const store::CellClaim& claim, double now_s);

// A quarter of the timeout (at most 15 s, at least 50 ms): three beats can be missed before
// the claim lapses.
double heartbeat_interval_s(double timeout_s);

// Beats (Store::beat) every interval_s from its own thread and its own connection to the
// store, until destroyed. A beat that fails (a busy or full disk) is logged and retried at the
// next interval; if beats fail for longer than the timeout another run may take the cells over,
// and this run's next write to one of them throws store::ClaimLost.
class Heartbeat {
 public:
  Heartbeat(const std::string& store_path, std::string run_id, double interval_s, Log log);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  void loop();

  store::Store store_;  // used by the heartbeat thread only
  std::string run_id_;
  double interval_s_;
  Log log_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything above is set
};

}  // namespace kvsweep::orchestrator
