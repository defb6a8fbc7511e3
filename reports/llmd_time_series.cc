// The servers' scrapes of a cell as llm-d Benchmark Report v0.2.1 observability time series.
#include "reports/llmd_time_series.h"

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <optional>
#include <utility>

#include "common/wall_clock.h"
#include "figures/cell_metrics.h"

namespace kvsweep::reports {
namespace {

using Json = nlohmann::ordered_json;

// "2026-11-27T08:00:01.250Z": the schema's date-time, to the millisecond (scrapes can fall
// within one second: "before", and "during" at the first answer).
std::string timestamp(double unix_s) {
  const double whole = std::floor(unix_s);
  const auto ms = static_cast<int>(std::lround((unix_s - whole) * 1000));
  std::string text = utc_iso8601(whole + (ms == 1000 ? 1 : 0));
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03d", ms == 1000 ? 0 : ms);
  return text.substr(0, text.size() - 1) + fraction + "Z";
}

// A scrape: its time, then its phase (before < during < after), so two scrapes stamped alike
// stay two points in order.
using Scrape = std::pair<double, int>;
int phase_rank(const std::string& phase) {
  if (phase == "before") return 0;
  return phase == "during" ? 1 : 2;
}

// One source's value of each metric at each scrape, label sets summed.
using Series = std::map<Scrape, double>;
using SourceMetrics = std::map<std::string, Series>;

// The first of `names` the source has.
const Series* first_of(const SourceMetrics& metrics, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const auto it = metrics.find(name); it != metrics.end()) return &it->second;
  }
  return nullptr;
}

Json series_of(const Series& points, double epoch_wall_s, const char* units, double scale = 1) {
  Json data = Json::array();
  for (const auto& [scrape, value] : points) {
    data.push_back({{"ts", timestamp(epoch_wall_s + scrape.first)}, {"value", value * scale}});
  }
  return {{"units", units}, {"series", data}};
}

// Percent of the tokens looked up between one scrape and the next that the cache held, at the
// later scrape; an interval with no lookup has no rate.
Series interval_hit_rate(const Series& hits, const Series& queries) {
  Series rate;
  std::optional<std::pair<double, double>> previous;  // hits, queries
  for (const auto& [scrape, q] : queries) {
    const auto h = hits.find(scrape);
    if (h == hits.end()) continue;
    if (previous && q > previous->second) {
      rate[scrape] = (h->second - previous->first) / (q - previous->second) * 100.0;
    }
    previous = std::make_pair(h->second, q);
  }
  return rate;
}

}  // namespace

Json observability_time_series(const std::vector<store::MetricSample>& samples, double epoch_wall_s,
                               const std::string& component_label) {
  std::map<std::string, SourceMetrics> by_source;
  for (const auto& s : samples) {
    by_source[s.source][s.name][Scrape{s.t_s, phase_rank(s.phase)}] += s.value;
  }
  Json components = Json::array();
  for (const auto& [source, metrics] : by_source) {
    Json series = Json::object();
    const auto put = [&](const char* key, const Series* points, const char* units,
                         double scale = 1) {
      if (points != nullptr && !points->empty()) {
        series[key] = series_of(*points, epoch_wall_s, units, scale);
      }
    };
    put("num_requests_running", first_of(metrics, {"vllm:num_requests_running"}), "count");
    put("num_requests_waiting", first_of(metrics, {"vllm:num_requests_waiting"}), "count");
    // vLLM 0.9 renamed the prefix-cache counters; a source uses one pair or the other.
    const bool current = metrics.count(figures::kPrefixCacheQueries) > 0;
    const Series* queries = first_of(
        metrics, {current ? figures::kPrefixCacheQueries : figures::kGpuPrefixCacheQueries});
    const Series* hits =
        first_of(metrics, {current ? figures::kPrefixCacheHits : figures::kGpuPrefixCacheHits});
    put("prefix_cache_queries", queries, "count");
    put("prefix_cache_hits", hits, "count");
    if (queries != nullptr && hits != nullptr) {
      const Series rate = interval_hit_rate(*hits, *queries);
      put("prefix_cache_hit_rate", &rate, "percent");
    }
    // vLLM reports usage as a fraction; the report's unit is percent.
    put("kv_cache_usage", first_of(metrics, {figures::kKvCacheUsage, figures::kGpuCacheUsage}),
        "percent", 100.0);
    put("num_preemptions", first_of(metrics, {figures::kPreemptions}), "count");
    if (series.empty()) continue;
    components.push_back(
        {{"component_label", component_label}, {"replica_id", source}, {"time_series", series}});
  }
  if (components.empty()) return Json::object();
  return {{"components", components}};
}

}  // namespace kvsweep::reports
