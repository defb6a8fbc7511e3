// Live figures from servers' /metrics: scrapes a set of URLs every few seconds and turns the
// increase of their TTFT histograms and prefix-cache counters over a sliding window into TTFT
// p50/p95 (Prometheus' histogram_quantile rule) and a KV hit rate, as a Grafana panel would.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "driver/http_fetch.h"
#include "serve/histogram_quantile.h"

namespace kvsweep::serve {

// The TTFT histograms read, in order of preference on one URL: Dynamo's frontend (what the
// caller waited for, Dynamo's own overhead included), then vLLM's engine.
inline constexpr const char* kDynamoTtft = "dynamo_frontend_time_to_first_token_seconds";
inline constexpr const char* kVllmTtft = "vllm:time_to_first_token_seconds";

struct LiveSettings {
  double interval_s = 2;         // a round of scrapes at most this often
  double window_s = 30;          // the sliding window the increases are taken over
  double timeout_s = 1.5;        // per URL; a slower answer is a failed scrape (--fetch-timeout)
  std::size_t max_points = 300;  // points kept for the chart, oldest dropped
  // A /metrics reply larger than this is cut and its source marked stale with the reason
  // (--metrics-max-bytes); a real vLLM reply is tens of KB.
  std::size_t max_reply_bytes = driver::kDefaultMaxReplyBytes;
  std::size_t max_urls = 16;  // /metrics URLs one request may name (--max-urls); beyond: 400
};

// A URL whose last scrape failed, or that has not answered for 3 intervals, is stale: left out
// of the figures (never counted as 0) and shown with its reason.
struct SourceStatus {
  std::string url;
  bool stale = true;
  std::string error;  // the last failure, "" after a success
  std::optional<double> last_ok_wall_s;
  std::string ttft_metric;  // the histogram found there, "" when none
};

// Figures over the window ending at one round; nullopt when no fresh source had the series
// or no request finished in the window.
struct LivePoint {
  double wall_s = 0;
  std::optional<double> ttft_p50_ms;
  std::optional<double> ttft_p95_ms;
  std::optional<double> kv_hit;  // fraction
  double requests = 0;           // TTFT observations in the window, every fresh source
  int fresh_sources = 0;
};

struct LiveSnapshot {
  double started_wall_s = 0;
  std::vector<SourceStatus> sources;
  std::vector<LivePoint> points;  // oldest first
};

using Fetch = std::function<driver::HttpResponse(const std::string& url, double timeout_s)>;

// Thread contract: poll() from any thread; rounds never overlap (a caller arriving during one
// waits for it, at most one timeout).
class LiveMonitor {
 public:
  // Without `fetch`: driver::http_get, capped at settings.max_reply_bytes.
  LiveMonitor(std::vector<std::string> urls, LiveSettings settings, Fetch fetch = {});

  // Scrapes every URL (in parallel) when the last round is at least an interval old, then
  // returns the figures so far.
  LiveSnapshot poll(double now_wall_s);
  double last_polled_wall_s() const;
  const std::vector<std::string>& urls() const { return urls_; }

 private:
  // One URL's answer to one round.
  struct Scrape {
    double wall_s = 0;
    std::vector<Bucket> ttft;
    std::string ttft_metric;
    std::optional<double> hits;     // prefix-cache hit tokens (or Dynamo's cached tokens)
    std::optional<double> queries;  // prefix-cache queried tokens (or Dynamo's input tokens)
  };
  void round(double now_wall_s);
  LivePoint point_at(double now_wall_s) const;

  const std::vector<std::string> urls_;
  const LiveSettings settings_;
  const Fetch fetch_;
  std::mutex round_mutex_;    // one round at a time
  mutable std::mutex mutex_;  // guards everything below
  double started_wall_s_ = 0;
  double last_round_wall_s_ = -1;
  double last_polled_wall_s_ = 0;
  std::vector<std::vector<Scrape>> history_;  // per URL, successful scrapes in the window
  std::vector<SourceStatus> status_;
  std::vector<LivePoint> points_;
};

}  // namespace kvsweep::serve
