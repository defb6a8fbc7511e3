// The running page's view: every sweep whose experiment is running in any process on the
// store, read from the cell rows and the progress snapshots its runner writes.
#pragma once

#include <nlohmann/json.hpp>

#include "store/store_readers.h"

namespace kvsweep::serve {

// No snapshot for this long while a cell runs: said on the page (the process may be gone, or
// a deployment is still becoming ready).
inline constexpr double kQuietAfterS = 15;

// {now_wall_s, running: [{id, name, url, started_at, cells_total, cells_done, cells_failed,
// current: {k, label, strategy, concurrency, url, phase, done, total, failed, elapsed_s,
// requests_per_s, live_requests_per_s, ttft_p50_ms, ttft_p95_ms, updated_s_ago, quiet,
// metrics_urls} or null, finished: [{k, label, status, url}], svg (with charts: the current
// cell's TTFT p50 and p95 over the phase)}], latest: {id, name, status, url} or null}.
nlohmann::ordered_json running_view(const store::StoreReader& store, double now_wall_s,
                                    bool charts);

// The /metrics URLs of the newest progress snapshot of any running cell: what the live page
// scrapes when told to follow the running sweep, with its concurrency. Empty when none.
struct RunningTarget {
  std::vector<std::string> metrics_urls;
  int concurrency = 0;
  std::int64_t experiment_id = 0;
};
RunningTarget running_target(const store::StoreReader& store);

}  // namespace kvsweep::serve
