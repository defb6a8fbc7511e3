// Progress snapshots of the running cell, written to the store for kvsweep serve.
#include "orchestrator/sweep/progress_snapshots.h"

#include <stdexcept>
#include <utility>

#include "common/wall_clock.h"

namespace kvsweep::orchestrator {

ProgressSnapshots::ProgressSnapshots(store::Store& store, std::int64_t cell_id, std::string phase,
                                     std::vector<std::string> metrics_urls, std::string claimed_by)
    : store_(store),
      cell_id_(cell_id),
      phase_(std::move(phase)),
      metrics_urls_(std::move(metrics_urls)),
      claimed_by_(std::move(claimed_by)) {}

void ProgressSnapshots::write(const driver::Progress& progress) {
  store::ProgressSnapshot s;
  s.cell_id = cell_id_;
  s.phase = phase_;
  s.wall_s = unix_now_s();
  s.elapsed_s = progress.elapsed_s;
  s.done = progress.done;
  s.total = progress.total;
  s.failed = progress.failed;
  s.requests_per_s = progress.requests_per_s;
  // The driver reports 0 before the first success; the store says "none yet" with -1.
  const bool any_ttft = progress.done > progress.failed;
  s.ttft_p50_ms = any_ttft ? progress.p50_ttft_ms : -1;
  s.ttft_p95_ms = any_ttft ? progress.p95_ttft_ms : -1;
  s.metrics_urls = metrics_urls_;
  try {
    // Not stored once the cell was taken over: the run finds out, and stops, when it records
    // the cell (store::ClaimLost); until then its snapshots must not mix into the new owner's.
    store_.add_progress(s, claimed_by_);
  } catch (const std::runtime_error& e) {
    if (failure_.empty()) failure_ = e.what();
  }
}

}  // namespace kvsweep::orchestrator
