// Scrapes replicas' Prometheus /metrics into store rows.
#include "orchestrator/metrics_scraper.h"

#include <nlohmann/json.hpp>

#include "common/prometheus_text.h"
#include "driver/http_fetch.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kScrapeTimeoutS = 10;

bool keep(const std::string& name) {
  const bool vllm = name.rfind("vllm:", 0) == 0;
  const bool bucket = name.size() > 7 && name.compare(name.size() - 7, 7, "_bucket") == 0;
  return vllm && !bucket;
}

}  // namespace

ScrapeResult scrape_metrics(const std::vector<std::string>& urls, const std::string& phase,
                            double t_s) {
  ScrapeResult result;
  for (const auto& url : urls) {
    const auto r = driver::http_get(url, kScrapeTimeoutS);
    if (!r.error.empty() || r.status != 200) {
      result.errors.push_back(url + ": " +
                              (r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error));
      continue;
    }
    for (auto& sample : parse_prometheus_text(r.body)) {
      if (!keep(sample.name)) continue;
      store::MetricSample row;
      row.phase = phase;
      row.source = url;
      row.name = std::move(sample.name);
      row.labels_json = nlohmann::json(sample.labels).dump();
      row.value = sample.value;
      row.t_s = t_s;
      result.samples.push_back(std::move(row));
    }
  }
  return result;
}

}  // namespace kvsweep::orchestrator
