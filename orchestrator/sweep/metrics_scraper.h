// Scrapes replicas' and endpoint pickers' Prometheus /metrics into store rows.
#pragma once

#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "store/rows.h"

namespace kvsweep::orchestrator {

struct ScrapeResult {
  // vLLM's, Dynamo's and llm-d's endpoint picker's series only (metrics_scraper.cc keep()),
  // histogram buckets dropped (their _sum and _count kept).
  std::vector<store::MetricSample> samples;
  std::vector<std::string> errors;  // one line per url that could not be scraped
};

// GETs each url in turn, logging each at debug level. t_s is stored with every sample (seconds
// since the cell's epoch).
ScrapeResult scrape_metrics(const std::vector<std::string>& urls, const std::string& phase,
                            double t_s, spdlog::logger& log);

// Scrapes `urls` every interval_s on its own thread (phase "during", t_s relative to
// epoch_wall_s) until take() or destruction, so a cell records KV usage peaks and preemptions
// while it runs, not only the counters' ends. scrape_now() adds a scrape at once: a phase
// shorter than the interval is scraped too when its caller says it is under way.
class PeriodicScraper {
 public:
  PeriodicScraper(std::vector<std::string> urls, double interval_s, double epoch_wall_s, Log log);
  ~PeriodicScraper();
  PeriodicScraper(const PeriodicScraper&) = delete;
  PeriodicScraper& operator=(const PeriodicScraper&) = delete;

  // Wakes the thread for a scrape now (the period restarts after it). Never blocks: safe from
  // the load driver's run thread (LoadOptions::on_measured_underway).
  void scrape_now();
  ScrapeResult take();  // stops the thread and returns everything scraped

 private:
  void stop();

  std::mutex mutex_;  // guards result_ and wanted_now_
  ScrapeResult result_;
  bool wanted_now_ = false;
  Log log_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: it starts in the constructor and uses the members above
};

}  // namespace kvsweep::orchestrator
