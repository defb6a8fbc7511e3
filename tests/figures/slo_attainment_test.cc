// SLO attainment: what counts as met, the interval, the verdict, and agreement with the
// goodput count vLLM's --goodput rule gives (figures/cell_metrics.h).
#include "figures/slo_attainment.h"

#include <gtest/gtest.h>

#include "figures/cell_metrics.h"
#include "tests/reports/request_builders.h"

namespace kvsweep::figures {
namespace {

using testing::failed_request;
using testing::ok_request;

// 400 requests whose TTFTs are 1, 2, ..., 400 ms, each with 8 output tokens 10 ms apart.
std::vector<store::RequestRow> ramp(int n = 400) {
  std::vector<store::RequestRow> rows;
  for (int i = 1; i <= n; ++i) {
    rows.push_back(ok_request(i, i * 0.01, i, i + 70.0, 100, 8, 0, {10, 10, 10, 10, 10, 10, 10}));
  }
  return rows;
}

SloSpec ttft_slo(double max_ms, double fraction = 0.95) {
  SloSpec slo;
  SloRequirement q;
  q.ttft_ms = max_ms;
  q.fraction = fraction;
  slo.requirements.push_back(q);
  return slo;
}

TEST(SloAttainment, ComfortablyAboveTheTargetPasses) {
  const SloAttainment a = judge_slo(ramp(), ttft_slo(395));  // 395 of 400 met: 98.75%
  ASSERT_EQ(a.requirements.size(), 1u);
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment, 395.0 / 400);
  EXPECT_EQ(a.requirements[0].units, 400);
  EXPECT_LE(a.requirements[0].low, 395.0 / 400);
  EXPECT_GE(a.requirements[0].high, 395.0 / 400);
  EXPECT_GE(a.requirements[0].low, 0.95);
  EXPECT_EQ(a.verdict, SloVerdict::kPass);
  EXPECT_EQ(a.requirements[0].label, "p95 TTFT <= 395 ms");
}

TEST(SloAttainment, FarBelowTheTargetFails) {
  const SloAttainment a = judge_slo(ramp(), ttft_slo(300));  // 75%
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment, 0.75);
  EXPECT_LT(a.requirements[0].high, 0.95);
  EXPECT_EQ(a.verdict, SloVerdict::kFail);
}

TEST(SloAttainment, ExactlyAtTheTargetIsUndecided) {
  // 380 of 400 is 95.0%: the interval straddles the target, so more data must decide it.
  const SloAttainment a = judge_slo(ramp(), ttft_slo(380));
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment, 0.95);
  EXPECT_LT(a.requirements[0].low, 0.95);
  EXPECT_GT(a.requirements[0].high, 0.95);
  EXPECT_EQ(a.verdict, SloVerdict::kUndecided);
}

TEST(SloAttainment, TheIntervalNarrowsWithMoreRequests) {
  // The same 97.5% attainment over 40 and over 4,000 requests: only the larger cell is sure.
  const auto width = [](const SloAttainment& a) {
    return a.requirements[0].high - a.requirements[0].low;
  };
  const SloAttainment few = judge_slo(ramp(40), ttft_slo(39));
  const SloAttainment many = judge_slo(ramp(4000), ttft_slo(3900));
  EXPECT_DOUBLE_EQ(few.requirements[0].attainment, many.requirements[0].attainment);
  EXPECT_GT(width(few), 5 * width(many));
  EXPECT_EQ(few.verdict, SloVerdict::kUndecided);
  EXPECT_EQ(many.verdict, SloVerdict::kPass);
}

TEST(SloAttainment, AFailedRequestMeetsNothingAndWarmupIsIgnored) {
  std::vector<store::RequestRow> rows = ramp(100);  // all meet TTFT <= 1000
  for (int i = 0; i < 10; ++i) rows.push_back(failed_request(1000 + i, 1.0, 5, "timeout"));
  store::RequestRow warm = failed_request(2000, 0, 5, "timeout");
  warm.warmup = true;
  rows.push_back(warm);
  const SloAttainment a = judge_slo(rows, ttft_slo(1000, 0.9));
  EXPECT_EQ(a.requests, 110);
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment, 100.0 / 110);
}

TEST(SloAttainment, ItlCountsGapsNotRequests) {
  std::vector<store::RequestRow> rows = ramp(10);  // 7 gaps of 10 ms each
  rows[0].itl_ms = {10, 10, 10, 10, 10, 10, 50};   // one slow gap of 70
  SloSpec slo;
  SloRequirement q;
  q.itl_ms = 20;
  q.fraction = 0.99;
  slo.requirements.push_back(q);
  const SloAttainment a = judge_slo(rows, slo);
  EXPECT_EQ(a.requirements[0].units, 70);
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment, 69.0 / 70);
  EXPECT_EQ(a.requirements[0].label, "p99 ITL <= 20 ms");
}

TEST(SloAttainment, OneSeedOneInterval) {
  const SloAttainment a = judge_slo(ramp(), ttft_slo(385), 7);
  const SloAttainment b = judge_slo(ramp(), ttft_slo(385), 7);
  EXPECT_EQ(a.requirements[0].low, b.requirements[0].low);
  EXPECT_EQ(a.requirements[0].high, b.requirements[0].high);
}

TEST(SloAttainment, NoMeasuredRequestIsUndecided) {
  const SloAttainment a = judge_slo({}, ttft_slo(100));
  EXPECT_EQ(a.verdict, SloVerdict::kUndecided);
  EXPECT_EQ(a.requirements[0].units, 0);
}

TEST(SloAttainment, EveryRequirementMustPass) {
  SloSpec slo = ttft_slo(400);  // 100%
  SloRequirement e2e;
  e2e.e2e_ms = 200;  // e2e = ttft + 70: 130 of 400 met
  e2e.fraction = 0.5;
  slo.requirements.push_back(e2e);
  const SloAttainment a = judge_slo(ramp(), slo);
  EXPECT_EQ(a.verdict, SloVerdict::kFail);
  EXPECT_EQ(slo_line(a).rfind("fail: p95 TTFT <= 400 ms met by 100.0% [100.0, 100.0]; p50 E2E", 0),
            0u)
      << slo_line(a);
}

// The `good` requirement is vLLM's goodput rule: its attainment times the measured requests is
// the good-request count compute_cell_metrics gives with the same thresholds.
TEST(SloAttainment, GoodAgreesWithTheGoodputCount) {
  std::vector<store::RequestRow> rows = ramp();
  for (std::size_t i = 0; i < rows.size(); i += 3) {
    rows[i].e2e_ms = rows[i].ttft_ms + 7 * 30;  // a third decode at 30 ms per token
  }
  SloSpec slo;
  SloRequirement good;
  good.ttft_ms = 250;
  good.tpot_ms = 20;
  good.fraction = 0.5;
  slo.requirements.push_back(good);
  Slo goodput;
  goodput.ttft_ms = 250;
  goodput.tpot_ms = 20;
  const CellMetrics m = compute_cell_metrics(rows, {}, goodput);
  const SloAttainment a = judge_slo(rows, slo);
  EXPECT_DOUBLE_EQ(a.requirements[0].attainment * 400,
                   static_cast<double>(m.good_requests.value_or(-1)));
  EXPECT_EQ(a.requirements[0].label, "50% good (TTFT <= 250 ms, TPOT <= 20 ms)");
}

}  // namespace
}  // namespace kvsweep::figures
