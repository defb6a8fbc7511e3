// Scrapes replicas' Prometheus /metrics into store rows.
#pragma once

#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::orchestrator {

struct ScrapeResult {
  std::vector<store::MetricSample> samples;  // vllm:* series only, histogram buckets dropped
  std::vector<std::string> errors;           // one line per url that could not be scraped
};

// GETs each url in turn. t_s is stored with every sample (seconds since the cell's epoch).
ScrapeResult scrape_metrics(const std::vector<std::string>& urls, const std::string& phase,
                            double t_s);

}  // namespace kvsweep::orchestrator
