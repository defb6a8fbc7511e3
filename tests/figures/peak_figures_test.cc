// Tests for figures/peak_figures.cc: peak output tokens per second and peak concurrent
// requests, computed from request rows the way vLLM's benchmark client computes them.
#include "figures/peak_figures.h"

#include <gtest/gtest.h>

#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

using kvsweep::testing::failed_request;
using kvsweep::testing::ok_request;

// Times are binary fractions, so no token lands on a bucket edge by rounding.
std::vector<store::RequestRow> rows() {
  store::RequestRow warm = ok_request(9, 0.25, 10, 60, 8, 6, 0, {10, 10, 10, 10, 10});
  warm.warmup = true;  // measured figures ignore warm-up
  return {
      // tokens at 0.125, 0.375, 0.625, 0.875 (bucket 0) and 1.125 (bucket 1); in flight 0-1.125
      ok_request(0, 0.0, 125, 1125, 10, 5, 0, {250, 250, 250, 250}),
      // tokens at 0.55 ... 0.75, all bucket 0; in flight 0.5-0.75
      ok_request(1, 0.5, 50, 250, 10, 5, 0, {50, 50, 50, 50}),
      // sent the moment request 1 ends: a departure comes before an arrival at the same time
      ok_request(2, 0.75, 100, 100, 10, 1, 0, {}),
      failed_request(3, 0.125, 2000, "timeout"),  // vLLM counts successful requests only
      warm,
  };
}

TEST(PeakFigures, HighestOneSecondBucketOfTokenTimes) {
  // Bucket 0: 4 + 5 + 1 tokens; bucket 1: 1.
  EXPECT_DOUBLE_EQ(peak_figures(rows()).max_output_tokens_per_s, 10.0);
}

TEST(PeakFigures, PeakConcurrencyIsASweepOverHalfOpenIntervals) {
  EXPECT_EQ(peak_figures(rows()).max_concurrent_requests, 2);
}

TEST(PeakFigures, NothingSucceededIsZero) {
  const PeakFigures none = peak_figures({failed_request(0, 0.0, 100, "timeout")});
  EXPECT_EQ(none.max_output_tokens_per_s, 0.0);
  EXPECT_EQ(none.max_concurrent_requests, 0);
}

}  // namespace
}  // namespace kvsweep::figures
