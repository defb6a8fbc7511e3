// Peak output tokens per second and peak concurrent requests over a cell's request rows.
#include "figures/peak_figures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace kvsweep::figures {

PeakFigures peak_figures(const std::vector<store::RequestRow>& requests) {
  std::vector<const store::RequestRow*> ok;
  double first_sent_s = std::numeric_limits<double>::infinity();
  for (const auto& r : requests) {
    if (r.warmup || !r.ok) continue;
    ok.push_back(&r);
    first_sent_s = std::min(first_sent_s, r.sent_s);
  }
  PeakFigures peak;
  if (ok.empty()) return peak;

  // vLLM rebuilds each token's time from ttft and the ITL list; a gap the driver split into k
  // tokens (docs/metrics.md, itl) is k tokens here too. A reply with no content has no token.
  std::map<long long, int> tokens_per_bucket;
  for (const auto* r : ok) {
    if (r->first_token_s < 0) continue;
    double t = r->sent_s - first_sent_s + r->ttft_ms / 1000.0;
    ++tokens_per_bucket[static_cast<long long>(std::floor(t))];
    for (double gap_ms : r->itl_ms) {
      t += gap_ms / 1000.0;
      ++tokens_per_bucket[static_cast<long long>(std::floor(t))];
    }
  }
  for (const auto& [bucket, tokens] : tokens_per_bucket) {
    peak.max_output_tokens_per_s = std::max(peak.max_output_tokens_per_s, double(tokens));
  }

  // Half-open intervals: -1 sorts before +1 at equal times, so a request sent the instant
  // another ends does not count both.
  std::vector<std::pair<double, int>> events;
  for (const auto* r : ok) {
    events.emplace_back(r->sent_s, +1);
    events.emplace_back(r->sent_s + r->e2e_ms / 1000.0, -1);
  }
  std::sort(events.begin(), events.end());
  int in_flight = 0;
  for (const auto& [time, delta] : events) {
    in_flight += delta;
    peak.max_concurrent_requests = std::max(peak.max_concurrent_requests, in_flight);
  }
  return peak;
}

}  // namespace kvsweep::figures
