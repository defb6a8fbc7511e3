// How much of a cell met its service-level objective, with a bootstrap interval, and what the
// capacity search makes of it: pass, fail or undecided (docs/metrics.md, "SLO attainment").
#pragma once

#include <string>
#include <vector>

#include "common/search_spec.h"
#include "store/rows.h"

namespace kvsweep::figures {

// One requirement's attainment: the fraction of measured requests (of inter-token gaps, for
// ITL) that met it, and its percentile-bootstrap interval over whole requests.
struct RequirementAttainment {
  std::string label;  // "p95 TTFT <= 1000 ms", "95% good (TTFT <= 1000 ms, TPOT <= 100 ms)"
  double target = 0;  // the requirement's fraction
  double attainment = 0;
  double low = 0;
  double high = 0;
  double units = 0;  // requests (gaps for ITL) it was counted over
};

enum class SloVerdict {
  kPass,       // every requirement's interval lies at or above its target
  kFail,       // some requirement's interval lies below its target
  kUndecided,  // neither: more requests (another try) may decide it
};

// "pass", "fail", "undecided".
const char* slo_verdict_name(SloVerdict verdict);

struct SloAttainment {
  std::vector<RequirementAttainment> requirements;  // in the SLO's order
  SloVerdict verdict = SloVerdict::kUndecided;
  std::int64_t requests = 0;  // measured requests judged (warm-up ignored)
};

// A requirement as a person reads it.
std::string requirement_label(const SloRequirement& requirement);

// Judges a cell's measured requests against `slo` (non-empty). A failed request meets no
// requirement; a request without a TPOT (one output token) meets a TPOT threshold, as vLLM's
// goodput counts it. No measured request: undecided, with zero units. The resampling is
// seeded by `seed`, so the same rows give the same interval.
SloAttainment judge_slo(const std::vector<store::RequestRow>& requests, const SloSpec& slo,
                        std::uint64_t seed = 1);

// One line: "pass: p95 TTFT <= 1000 ms met by 97.1% [96.0, 98.1] of 400 requests".
std::string slo_line(const SloAttainment& attainment);

}  // namespace kvsweep::figures
