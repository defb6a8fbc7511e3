// Prometheus' histogram_quantile over bucket deltas between two scrapes.
#include "serve/histogram_quantile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace kvsweep::serve {
namespace {

// "0.25", "+Inf", "1e-3": le values as exporters write them.
std::optional<double> parse_le(const std::string& text) {
  if (text == "+Inf" || text == "Inf" || text == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<Bucket> histogram_buckets(const std::vector<PrometheusSample>& samples,
                                      std::string_view name) {
  const std::string series = std::string(name) + "_bucket";
  std::map<double, double> counts;
  for (const auto& s : samples) {
    if (s.name != series) continue;
    const auto le = s.labels.find("le");
    if (le == s.labels.end()) continue;
    if (const auto bound = parse_le(le->second)) counts[*bound] += s.value;
  }
  std::vector<Bucket> buckets;
  for (const auto& [bound, count] : counts) buckets.push_back({bound, count});
  return buckets;
}

std::vector<Bucket> bucket_increase(const std::vector<Bucket>& older,
                                    const std::vector<Bucket>& newer) {
  std::map<double, double> before;
  for (const auto& b : older) before[b.upper_bound] = b.count;
  bool reset = false;
  for (const auto& b : newer) {
    const auto it = before.find(b.upper_bound);
    if (it != before.end() && b.count < it->second) reset = true;
  }
  std::vector<Bucket> increase;
  for (const auto& b : newer) {
    const auto it = before.find(b.upper_bound);
    if (reset) {
      increase.push_back(b);
    } else if (it != before.end()) {
      increase.push_back({b.upper_bound, b.count - it->second});
    }
  }
  return increase;
}

void add_buckets(std::vector<Bucket>& a, const std::vector<Bucket>& b) {
  std::map<double, double> sum;
  for (const auto& x : a) sum[x.upper_bound] += x.count;
  for (const auto& x : b) sum[x.upper_bound] += x.count;
  a.clear();
  for (const auto& [bound, count] : sum) a.push_back({bound, count});
}

std::optional<double> histogram_quantile(double q, const std::vector<Bucket>& buckets) {
  if (buckets.size() < 2 || !std::isinf(buckets.back().upper_bound)) return std::nullopt;
  const double observations = buckets.back().count;
  if (observations <= 0 || std::isnan(q)) return std::nullopt;
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  double rank = q * observations;
  // The first bucket, +Inf excluded, whose cumulative count reaches the rank.
  std::size_t b = 0;
  while (b < buckets.size() - 1 && buckets[b].count < rank) ++b;
  if (b == buckets.size() - 1) return buckets[buckets.size() - 2].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0) return buckets[0].upper_bound;
  double start = 0;
  const double end = buckets[b].upper_bound;
  double count = buckets[b].count;
  if (b > 0) {
    start = buckets[b - 1].upper_bound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  if (count <= 0) return end;  // cannot happen with a monotonic histogram; never divide by 0
  return start + (end - start) * (rank / count);
}

}  // namespace kvsweep::serve
