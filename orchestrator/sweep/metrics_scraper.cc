// Scrapes replicas' and endpoint pickers' Prometheus /metrics into store rows.
#include "orchestrator/sweep/metrics_scraper.h"

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/prometheus_text.h"
#include "common/wall_clock.h"
#include "driver/http_fetch.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kScrapeTimeoutS = 10;

bool starts_with(const std::string& name, std::string_view prefix) {
  return name.compare(0, prefix.size(), prefix) == 0;
}

bool keep(const std::string& name) {
  // vLLM's engine series, Dynamo's frontend and router series (cached tokens, KV events), and
  // llm-d's endpoint picker: its scheduling and prefix-index series (inference_extension_*),
  // the pool it sees (inference_pool_*) and its requests (inference_objective_*), named
  // llm_d_epp_* by later llm-d releases (docs/metrics.md, "The endpoint picker's figures"),
  // and SGLang's waiting queue and running batch (the over-capacity rules (b) and (d),
  // docs/metrics.md "Verdicts").
  constexpr std::string_view kKept[] = {"vllm:",
                                        "dynamo_",
                                        "inference_extension_",
                                        "inference_pool_",
                                        "inference_objective_",
                                        "llm_d_epp_",
                                        "sglang:num_queue_reqs",
                                        "sglang:num_running_reqs"};
  bool served = false;
  for (const std::string_view prefix : kKept) served = served || starts_with(name, prefix);
  const bool bucket = name.size() > 7 && name.compare(name.size() - 7, 7, "_bucket") == 0;
  return served && !bucket;
}

}  // namespace

ScrapeResult scrape_metrics(const std::vector<std::string>& urls, const std::string& phase,
                            double t_s, spdlog::logger& log) {
  ScrapeResult result;
  for (const auto& url : urls) {
    const auto r = driver::http_get(url, kScrapeTimeoutS);
    if (!r.error.empty() || r.status != 200) {
      const std::string why = r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error;
      log.debug("scrape {} {}: {}", phase, url, why);
      result.errors.push_back(url + ": " + why);
      continue;
    }
    const std::size_t kept_before = result.samples.size();
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
    log.debug("scrape {} {}: HTTP 200, {} samples kept", phase, url,
              result.samples.size() - kept_before);
  }
  return result;
}

PeriodicScraper::PeriodicScraper(std::vector<std::string> urls, double interval_s,
                                 double epoch_wall_s, Log log)
    : log_(std::move(log)),
      thread_([this, urls = std::move(urls), interval_s, epoch_wall_s](std::stop_token stop) {
        const auto period = std::chrono::duration<double>(interval_s);
        while (true) {
          {
            std::unique_lock lock(mutex_);
            // Sleeps one period, or less when a scrape is wanted now or stop is requested.
            wake_.wait_for(lock, stop, period, [this] { return wanted_now_; });
            wanted_now_ = false;
          }
          if (stop.stop_requested()) return;
          // Not under the lock: a slow server must not block scrape_now().
          ScrapeResult r = scrape_metrics(urls, "during", unix_now_s() - epoch_wall_s, *log_);
          std::lock_guard lock(mutex_);
          result_.samples.insert(result_.samples.end(), r.samples.begin(), r.samples.end());
          result_.errors.insert(result_.errors.end(), r.errors.begin(), r.errors.end());
        }
      }) {}

void PeriodicScraper::scrape_now() {
  {
    std::lock_guard lock(mutex_);
    wanted_now_ = true;
  }
  wake_.notify_one();
}

PeriodicScraper::~PeriodicScraper() { stop(); }

void PeriodicScraper::stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

ScrapeResult PeriodicScraper::take() {
  stop();
  std::lock_guard lock(mutex_);
  return std::move(result_);
}

}  // namespace kvsweep::orchestrator
