// The measured phase between /metrics scrapes, as a sweep's cell and `kvsweep load` both run
// it: one mechanism, so the two record their servers' counters the same way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/log.h"
#include "driver/load_options.h"
#include "orchestrator/sweep/cell_recorder.h"

namespace kvsweep::orchestrator {

// Which servers' /metrics to scrape, and how often while the load runs (0: before and after
// only).
struct MetricsScrapes {
  std::vector<std::string> urls;
  double interval_s = 0;
};

// Runs the measured load; it passes `on_measured_underway` on as LoadOptions'
// on_measured_underway (empty when nothing is scraped during the phase).
using MeasuredDrive =
    std::function<driver::LoadResult(const std::function<void()>& on_measured_underway)>;

// Scrapes every url before the load, every interval_s during it (and at once when the servers
// answer a measured request: KV-cache usage means something only under load, and a phase
// shorter than the interval is scraped under load too) and after it. Sets m.measured,
// m.samples (on the driver's epoch: "before" at 0, "during" moved there from the phase's start
// as seen here) and m.scrape_errors (one line per failed scrape, "URL: why").
void measure_between_scrapes(const MetricsScrapes& scrapes, const Log& log,
                             const MeasuredDrive& drive, CellMeasurement& m);

}  // namespace kvsweep::orchestrator
