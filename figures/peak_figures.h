// A cell's peak output token rate and peak concurrency, as vLLM's benchmark client computes
// them (its result keys max_output_tokens_per_s and max_concurrent_requests).
#pragma once

#include <vector>

#include "store/rows.h"

namespace kvsweep::figures {

struct PeakFigures {
  double max_output_tokens_per_s = 0;  // tokens in the busiest 1 s bucket
  int max_concurrent_requests = 0;     // most requests in flight at one instant
};

// Over the measured (non-warm-up) successful requests, as docs/metrics.md defines it: token
// times are sent + ttft, then each ITL gap later, counted in 1 s buckets from the first send;
// concurrency is an exact sweep over [sent, sent + e2e), an end before a start at the same
// time. Zero for both when no request succeeded.
PeakFigures peak_figures(const std::vector<store::RequestRow>& requests);

}  // namespace kvsweep::figures
