// Progress snapshots of the running cell, written to the store as the load driver reports
// progress, so another process (kvsweep serve) can follow the sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/load_options.h"
#include "store/store.h"

namespace kvsweep::orchestrator {

// Thread contract: the runner's thread only (it shares the runner's Store). One per load phase.
class ProgressSnapshots {
 public:
  // `claimed_by`: the run id whose claim on the cell each snapshot needs ("" = none).
  ProgressSnapshots(store::Store& store, std::int64_t cell_id, std::string phase,
                    std::vector<std::string> metrics_urls, std::string claimed_by = "");

  // Stores one snapshot (a one-row insert: the write lock is held for microseconds, never
  // across the cell). A failure to write (a disk full, a lock held past the busy timeout)
  // must not cost the cell its measurement: it is kept, and said once, by failure().
  void write(const driver::Progress& progress);

  // The first write error, "" when every write succeeded.
  const std::string& failure() const { return failure_; }

 private:
  store::Store& store_;
  std::int64_t cell_id_;
  std::string phase_;
  std::vector<std::string> metrics_urls_;
  std::string claimed_by_;
  std::string failure_;
};

}  // namespace kvsweep::orchestrator
