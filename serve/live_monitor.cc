// Live TTFT quantiles and KV hit rate from /metrics scrapes over a sliding window.
#include "serve/live_monitor.h"

#include <future>
#include <utility>

#include "common/prometheus_text.h"

namespace kvsweep::serve {
namespace {

// Counter increase with Prometheus' reset rule: a counter that went down restarted from 0.
double increase(double older, double newer) { return newer >= older ? newer - older : newer; }

// The hit and query counters of one scrape: vLLM's (current names, else the gpu_ ones before
// v0.9), else Dynamo frontend's cached / input token sums.
std::pair<std::optional<double>, std::optional<double>> hit_counters(
    const std::vector<PrometheusSample>& samples) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
      {"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total"},
      {"dynamo_frontend_cached_tokens_sum", "dynamo_frontend_input_sequence_tokens_sum"},
  };
  for (const auto& [hits, queries] : kNames) {
    const auto h = sum_metric(samples, hits);
    const auto q = sum_metric(samples, queries);
    if (h && q) return {h, q};
  }
  return {std::nullopt, std::nullopt};
}

Fetch capped_http_get(std::size_t max_reply_bytes) {
  return [max_reply_bytes](const std::string& url, double timeout_s) {
    return driver::http_get(url, timeout_s, max_reply_bytes);
  };
}

}  // namespace

LiveMonitor::LiveMonitor(std::vector<std::string> urls, LiveSettings settings, Fetch fetch)
    : urls_(std::move(urls)),
      settings_(settings),
      fetch_(fetch ? std::move(fetch) : capped_http_get(settings.max_reply_bytes)),
      history_(urls_.size()),
      status_(urls_.size()) {
  for (std::size_t i = 0; i < urls_.size(); ++i) status_[i].url = urls_[i];
}

double LiveMonitor::last_polled_wall_s() const {
  std::lock_guard lock(mutex_);
  return last_polled_wall_s_;
}

LiveSnapshot LiveMonitor::poll(double now_wall_s) {
  {
    std::lock_guard round_lock(round_mutex_);
    bool due = false;
    {
      std::lock_guard lock(mutex_);
      last_polled_wall_s_ = now_wall_s;
      if (started_wall_s_ == 0) started_wall_s_ = now_wall_s;
      due = last_round_wall_s_ < 0 || now_wall_s - last_round_wall_s_ >= settings_.interval_s;
    }
    if (due) round(now_wall_s);
  }
  std::lock_guard lock(mutex_);
  return {started_wall_s_, status_, points_};
}

void LiveMonitor::round(double now_wall_s) {
  std::vector<std::future<driver::HttpResponse>> answers;
  for (const auto& url : urls_) {
    answers.push_back(
        std::async(std::launch::async, [this, url] { return fetch_(url, settings_.timeout_s); }));
  }
  std::lock_guard lock(mutex_);
  last_round_wall_s_ = now_wall_s;
  for (std::size_t i = 0; i < urls_.size(); ++i) {
    const driver::HttpResponse r = answers[i].get();
    SourceStatus& status = status_[i];
    auto& kept = history_[i];
    // Scrapes older than the window are of no more use (one is kept just past its edge, so a
    // full window always has a start).
    while (kept.size() > 1 && kept[1].wall_s <= now_wall_s - settings_.window_s) {
      kept.erase(kept.begin());
    }
    if (r.status != 200 || !r.error.empty()) {  // a cut or timed-out body has a status too
      status.error = !r.error.empty() ? r.error : "HTTP " + std::to_string(r.status);
    } else {
      const auto samples = parse_prometheus_text(r.body);
      Scrape s;
      s.wall_s = now_wall_s;
      for (const char* name : {kDynamoTtft, kVllmTtft}) {
        s.ttft = histogram_buckets(samples, name);
        if (!s.ttft.empty()) {
          s.ttft_metric = name;
          break;
        }
      }
      std::tie(s.hits, s.queries) = hit_counters(samples);
      status.error.clear();
      status.last_ok_wall_s = now_wall_s;
      status.ttft_metric = s.ttft_metric;
      kept.push_back(std::move(s));
    }
    status.stale = !status.error.empty() || !status.last_ok_wall_s ||
                   now_wall_s - *status.last_ok_wall_s > 3 * settings_.interval_s;
  }
  points_.push_back(point_at(now_wall_s));
  if (points_.size() > settings_.max_points) points_.erase(points_.begin());
}

LivePoint LiveMonitor::point_at(double now_wall_s) const {
  LivePoint point;
  point.wall_s = now_wall_s;
  std::vector<Bucket> ttft;
  double hits = 0;
  double queries = 0;
  bool any_hits = false;
  for (std::size_t i = 0; i < urls_.size(); ++i) {
    const auto& kept = history_[i];
    if (status_[i].stale || kept.size() < 2) continue;
    ++point.fresh_sources;
    const Scrape& newest = kept.back();
    const Scrape& oldest = kept.front();
    if (!newest.ttft.empty() && oldest.ttft_metric == newest.ttft_metric) {
      add_buckets(ttft, bucket_increase(oldest.ttft, newest.ttft));
    }
    if (newest.hits && oldest.hits && newest.queries && oldest.queries) {
      hits += increase(*oldest.hits, *newest.hits);
      queries += increase(*oldest.queries, *newest.queries);
      any_hits = true;
    }
  }
  if (!ttft.empty()) point.requests = ttft.back().count;
  const auto to_ms = [](std::optional<double> s) {
    return s ? std::optional<double>(*s * 1000) : std::nullopt;
  };
  point.ttft_p50_ms = to_ms(histogram_quantile(0.5, ttft));
  point.ttft_p95_ms = to_ms(histogram_quantile(0.95, ttft));
  if (any_hits && queries > 0) point.kv_hit = hits / queries;
  return point;
}

}  // namespace kvsweep::serve
