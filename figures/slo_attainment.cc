// SLO attainment of a cell: per requirement, what each request contributes (met units of
// counted units), then one bootstrap over whole requests for every requirement at once.
#include "figures/slo_attainment.h"

#include <algorithm>
#include <cmath>

#include "common/stats.h"
#include "figures/bootstrap.h"
#include "figures/cell_metrics.h"
#include "figures/units.h"

namespace kvsweep::figures {
namespace {

std::string percent(double fraction) { return format_number(fraction * 100) + "%"; }

// What one request contributes to one requirement: how many of its units met it, of how many.
struct Contribution {
  double met = 0;
  double units = 0;
};

Contribution contribution(const store::RequestRow& r, const SloRequirement& q) {
  if (q.itl_ms) {
    // Per token: every inter-token gap is a unit; a failed request counts once, unmet.
    if (!r.ok || r.first_token_s < 0) {
      return {0, std::max<double>(1, static_cast<double>(r.itl_ms.size()))};
    }
    double met = 0;
    for (const double gap : r.itl_ms) met += gap <= *q.itl_ms ? 1 : 0;
    return {met, static_cast<double>(r.itl_ms.size())};
  }
  // As vLLM's goodput (and compute_cell_metrics' good requests): a reply without a first
  // token is not good; a one-token reply has no TPOT and meets a TPOT threshold.
  if (!r.ok || r.first_token_s < 0) return {0, 1};
  bool good = true;
  if (q.ttft_ms) good = good && r.ttft_ms <= *q.ttft_ms;
  if (q.tpot_ms) {
    const std::optional<double> tpot = request_tpot_ms(r);
    good = good && (!tpot || *tpot <= *q.tpot_ms);
  }
  if (q.e2e_ms) good = good && r.e2e_ms <= *q.e2e_ms;
  return {good ? 1.0 : 0.0, 1};
}

}  // namespace

const char* slo_verdict_name(SloVerdict verdict) {
  switch (verdict) {
    case SloVerdict::kPass:
      return "pass";
    case SloVerdict::kFail:
      return "fail";
    case SloVerdict::kUndecided:
      return "undecided";
  }
  return "undecided";
}

std::string requirement_label(const SloRequirement& q) {
  std::vector<std::string> parts;
  if (q.ttft_ms) parts.push_back("TTFT <= " + format_number(*q.ttft_ms) + " ms");
  if (q.tpot_ms) parts.push_back("TPOT <= " + format_number(*q.tpot_ms) + " ms");
  if (q.itl_ms) parts.push_back("ITL <= " + format_number(*q.itl_ms) + " ms");
  if (q.e2e_ms) parts.push_back("E2E <= " + format_number(*q.e2e_ms) + " ms");
  if (parts.size() == 1) return "p" + format_number(q.fraction * 100) + " " + parts[0];
  std::string joined;
  for (const auto& part : parts) joined += (joined.empty() ? "" : ", ") + part;
  return percent(q.fraction) + " good (" + joined + ")";
}

SloAttainment judge_slo(const std::vector<store::RequestRow>& requests, const SloSpec& slo,
                        std::uint64_t seed) {
  SloAttainment out;
  const std::size_t n_req = slo.requirements.size();
  // contributions[i * n_req + q]: request i's part of requirement q.
  std::vector<Contribution> contributions;
  for (const store::RequestRow& r : requests) {
    if (r.warmup) continue;
    ++out.requests;
    for (const SloRequirement& q : slo.requirements) contributions.push_back(contribution(r, q));
  }
  const std::size_t n = static_cast<std::size_t>(out.requests);
  std::vector<Contribution> totals(n_req);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t q = 0; q < n_req; ++q) {
      totals[q].met += contributions[i * n_req + q].met;
      totals[q].units += contributions[i * n_req + q].units;
    }
  }
  // Each resample draws n whole requests with replacement; every requirement reads that draw.
  std::vector<std::vector<double>> resampled(n_req);
  if (n > 0) {
    BootstrapRandom random(seed);
    const int resamples = std::max(1, slo.resamples);
    std::vector<Contribution> sums(n_req);
    for (int b = 0; b < resamples; ++b) {
      std::fill(sums.begin(), sums.end(), Contribution{});
      for (std::size_t k = 0; k < n; ++k) {
        const Contribution* drawn = &contributions[random.below(n) * n_req];
        for (std::size_t q = 0; q < n_req; ++q) {
          sums[q].met += drawn[q].met;
          sums[q].units += drawn[q].units;
        }
      }
      for (std::size_t q = 0; q < n_req; ++q) {
        // A resample of requests without a unit (only one-token replies, for ITL) attains
        // nothing it can show: count it as fully met, as no gap missed.
        resampled[q].push_back(sums[q].units > 0 ? sums[q].met / sums[q].units : 1.0);
      }
    }
  }
  const double tail = (1 - slo.confidence) / 2 * 100;
  bool all_pass = n > 0;
  bool any_fail = false;
  for (std::size_t q = 0; q < n_req; ++q) {
    RequirementAttainment a;
    a.label = requirement_label(slo.requirements[q]);
    a.target = slo.requirements[q].fraction;
    a.units = totals[q].units;
    a.attainment = totals[q].units > 0 ? totals[q].met / totals[q].units : 0;
    if (!resampled[q].empty()) {
      std::sort(resampled[q].begin(), resampled[q].end());
      a.low = percentile(resampled[q], tail);
      a.high = percentile(resampled[q], 100 - tail);
    }
    all_pass = all_pass && a.units > 0 && a.low >= a.target;
    any_fail = any_fail || (a.units > 0 && a.high < a.target);
    out.requirements.push_back(a);
  }
  out.verdict = any_fail   ? SloVerdict::kFail
                : all_pass ? SloVerdict::kPass
                           : SloVerdict::kUndecided;
  return out;
}

std::string slo_line(const SloAttainment& attainment) {
  std::string line = slo_verdict_name(attainment.verdict);
  line += ":";
  bool first = true;
  for (const RequirementAttainment& a : attainment.requirements) {
    line += first ? " " : "; ";
    first = false;
    line += a.label + " met by " + format_fixed(a.attainment * 100, 1) + "% [" +
            format_fixed(a.low * 100, 1) + ", " + format_fixed(a.high * 100, 1) + "]";
  }
  line += " of " + std::to_string(attainment.requests) + " requests";
  return line;
}

}  // namespace kvsweep::figures
