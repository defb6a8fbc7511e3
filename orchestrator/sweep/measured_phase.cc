// The measured phase between /metrics scrapes (orchestrator/sweep/measured_phase.h).
#include "orchestrator/sweep/measured_phase.h"

#include <optional>

#include "common/wall_clock.h"
#include "orchestrator/sweep/metrics_scraper.h"

namespace kvsweep::orchestrator {

void measure_between_scrapes(const MetricsScrapes& scrapes, const Log& log,
                             const MeasuredDrive& drive, CellMeasurement& m) {
  ScrapeResult before = scrape_metrics(scrapes.urls, "before", 0, *log);
  const double start_wall = unix_now_s();
  std::optional<PeriodicScraper> during;
  if (scrapes.interval_s > 0 && !scrapes.urls.empty()) {
    during.emplace(scrapes.urls, scrapes.interval_s, start_wall, log);
  }
  std::function<void()> underway;
  if (during) underway = [&during] { during->scrape_now(); };
  m.measured = drive(underway);
  ScrapeResult middle = during ? during->take() : ScrapeResult{};
  ScrapeResult after =
      scrape_metrics(scrapes.urls, "after", unix_now_s() - m.measured.epoch_wall_s, *log);
  const double shift = start_wall - m.measured.epoch_wall_s;
  for (auto& sample : middle.samples) sample.t_s += shift;
  for (ScrapeResult* r : {&before, &middle, &after}) {
    m.samples.insert(m.samples.end(), r->samples.begin(), r->samples.end());
    m.scrape_errors.insert(m.scrape_errors.end(), r->errors.begin(), r->errors.end());
  }
}

}  // namespace kvsweep::orchestrator
