// Tests for figures/bootstrap.cc and figures/compare.cc: verdicts from synthetic samples.
#include "figures/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/stats.h"
#include "figures/bootstrap.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::figures {
namespace {

// n requests with TTFT around ttft_ms (seeded jitter), 10 output tokens each.
std::vector<store::RequestRow> requests(int n, double ttft_ms, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < n; ++i) {
    store::RequestRow r;
    r.ok = true;
    r.ttft_ms = ttft_ms * (0.8 + 0.4 * static_cast<double>(rng() % 1000) / 1000.0);
    r.output_tokens = 10;
    r.e2e_ms = r.ttft_ms + 9 * 20.0;
    rows.push_back(r);
  }
  return rows;
}

const MetricChange& metric(const std::vector<MetricChange>& all, const std::string& name) {
  for (const auto& m : all) {
    if (m.metric == name) return m;
  }
  throw std::runtime_error("no metric " + name);
}

TEST(Compare, SameSamplesAreNoChange) {
  const auto a = run_samples(requests(200, 100, 1));  // enough for the p95 to be called
  const auto changes = compare_runs(a, a, {});
  for (const auto& m : changes) {
    EXPECT_EQ(m.verdict, Verdict::kNoChange) << m.metric;
    ASSERT_TRUE(m.change.has_value());
    EXPECT_EQ(m.change->change, 0);
    EXPECT_LE(m.change->low, 0);
    EXPECT_GE(m.change->high, 0);
  }
}

TEST(Compare, SlowerTtftIsARegressionAndFasterAnImprovement) {
  // 200 requests a side: enough beyond the p95 for it to be called (10 a side).
  const auto a = run_samples(requests(200, 100, 1));
  const auto slow = run_samples(requests(200, 150, 2));
  const auto changes = compare_runs(a, slow, {});
  EXPECT_EQ(metric(changes, "ttft_mean_ms").verdict, Verdict::kRegression);
  EXPECT_EQ(metric(changes, "ttft_p95_ms").verdict, Verdict::kRegression);
  EXPECT_EQ(metric(changes, "throughput_per_stream").verdict, Verdict::kRegression);
  EXPECT_EQ(metric(changes, "tpot_mean_ms").verdict, Verdict::kNoChange);  // same decode pace
  EXPECT_GT(metric(changes, "ttft_mean_ms").change->low, 0.3);
  EXPECT_EQ(metric(compare_runs(slow, a, {}), "ttft_mean_ms").verdict, Verdict::kImprovement);
}

TEST(Compare, FewSamplesAreInsufficientData) {
  const auto changes =
      compare_runs(run_samples(requests(19, 100, 1)), run_samples(requests(60, 500, 2)), {});
  for (const auto& m : changes) EXPECT_EQ(m.verdict, Verdict::kInsufficientData) << m.metric;
  CompareResult result;
  result.rows.push_back({"random", 8, changes});
  EXPECT_FALSE(result.any_regression());
  EXPECT_NE(compare_table(result, {}).find("(n=19/60, need 20)"), std::string::npos);
}

// n requests whose TTFT is ttft_ms within +-0.05% (a spread so small that any change of the
// mean has an interval excluding 0), `tokens` output tokens and `tpot_ms` between them.
std::vector<store::RequestRow> steady_requests(int n, double ttft_ms, int tokens = 10,
                                               double tpot_ms = 20) {
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < n; ++i) {
    store::RequestRow r;
    r.ok = true;
    r.ttft_ms = ttft_ms * (1 + 0.0001 * ((i % 11) - 5));
    r.output_tokens = tokens;
    r.e2e_ms = r.ttft_ms + (tokens - 1) * tpot_ms;
    rows.push_back(r);
  }
  return rows;
}

// The requests a percentile needs on each side: at least min_tail_samples (10) beyond it, and
// never fewer than min_samples (20).
TEST(Compare, APercentileNeedsTenRequestsBeyondIt) {
  const CompareOptions options;
  EXPECT_EQ(samples_needed({Statistic::kMean, 0}, options), 20u);
  EXPECT_EQ(samples_needed({Statistic::kRatioOfSums, 0}, options), 20u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 50}, options), 20u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 90}, options), 100u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 95}, options), 200u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 99}, options), 1000u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 99.9}, options), 10000u);
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 10}, options), 100u);       // the low tail
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 100}, options), SIZE_MAX);  // the maximum
  CompareOptions more;
  more.min_tail_samples = 20;
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 95}, more), 400u);
  more.min_samples = 500;
  EXPECT_EQ(samples_needed({Statistic::kPercentile, 95}, more), 500u);
}

// deploy_nightly_loop once failed on this: two nights of 24 requests on the same build, the
// p95 (their second largest) 3.60 ms then 6.84 ms, +90% with an interval above 0. A p95 of 24
// requests is not called: 200 are needed a side.
TEST(Compare, AP95OfTwentyFourRequestsIsInsufficientData) {
  auto a_rows = steady_requests(24, 3.0);
  auto b_rows = steady_requests(24, 3.0);
  a_rows[0].ttft_ms = a_rows[1].ttft_ms = 3.60;
  a_rows[2].ttft_ms = 3.70;
  b_rows[0].ttft_ms = b_rows[1].ttft_ms = 6.84;
  b_rows[2].ttft_ms = 7.00;
  const auto changes = compare_runs(run_samples(a_rows), run_samples(b_rows), {});
  const MetricChange& p95 = metric(changes, "ttft_p95_ms");
  EXPECT_EQ(p95.verdict, Verdict::kInsufficientData);
  EXPECT_EQ(p95.needed, 200u);
  EXPECT_FALSE(p95.change.has_value());
  EXPECT_DOUBLE_EQ(p95.a, 3.60);  // the statistic is still shown
  EXPECT_DOUBLE_EQ(p95.b, 6.84);
  // The mean moved 0.41 ms (+13%): under the 1 ms floor, no change whatever its interval.
  const MetricChange& mean = metric(changes, "ttft_mean_ms");
  EXPECT_EQ(mean.needed, 20u);
  EXPECT_EQ(mean.verdict, Verdict::kNoChange);
  EXPECT_TRUE(mean.below_floor);
  for (const auto& m : changes) EXPECT_NE(m.verdict, Verdict::kRegression) << m.metric;
  CompareResult result;
  result.rows.push_back({"prefix-hash", 1, changes});
  EXPECT_FALSE(result.any_regression());
  const std::string table = compare_table(result, {});
  EXPECT_NE(table.find("(n=24/24, need 200)   insufficient data"), std::string::npos) << table;
  // At 199 a side still not; at 200 the same shift is a regression.
  auto shifted = [](int n, double ttft_ms) {  // TTFTs spread evenly over [t, 1.2 t]
    auto rows = steady_requests(n, ttft_ms);
    for (int i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)].ttft_ms *= 1 + 0.2 * i / n;
    return rows;
  };
  EXPECT_EQ(metric(compare_runs(run_samples(shifted(199, 3.0)), run_samples(shifted(199, 6.0)), {}),
                   "ttft_p95_ms")
                .verdict,
            Verdict::kInsufficientData);
  EXPECT_EQ(metric(compare_runs(run_samples(shifted(200, 3.0)), run_samples(shifted(200, 6.0)), {}),
                   "ttft_p95_ms")
                .verdict,
            Verdict::kRegression);
  // The JSON says what each metric needed.
  EXPECT_EQ(compare_json(result, {})["rows"][0]["metrics"][2]["needed"], 200);
}

// A latency change must be at least 5% and at least 1 ms to be a verdict; each is a setting.
TEST(Compare, ALatencyChangeUnderFivePercentOrOneMillisecondIsNoChange) {
  auto verdict = [](double a_ms, double b_ms, const CompareOptions& options) {
    return metric(compare_runs(run_samples(steady_requests(200, a_ms)),
                               run_samples(steady_requests(200, b_ms)), options),
                  "ttft_mean_ms");
  };
  const CompareOptions defaults;
  EXPECT_EQ(defaults.min_change, 0.05);
  EXPECT_EQ(defaults.min_change_ms, 1.0);
  // 10.0 -> 10.9 ms: +9%, but 0.9 ms.
  const MetricChange small = verdict(10.0, 10.9, defaults);
  EXPECT_EQ(small.verdict, Verdict::kNoChange);
  EXPECT_TRUE(small.below_floor);
  ASSERT_TRUE(small.change.has_value());
  EXPECT_GT(small.change->low, 0.08);  // the interval alone would call it
  EXPECT_EQ(verdict(10.0, 11.2, defaults).verdict, Verdict::kRegression);  // +12%, 1.2 ms
  EXPECT_EQ(verdict(10.0, 8.8, defaults).verdict, Verdict::kImprovement);  // -12%, 1.2 ms
  // 100 -> 104 ms: 4 ms, but +4%.
  EXPECT_EQ(verdict(100, 104, defaults).verdict, Verdict::kNoChange);
  EXPECT_TRUE(verdict(100, 104, defaults).below_floor);
  EXPECT_EQ(verdict(100, 106, defaults).verdict, Verdict::kRegression);
  EXPECT_FALSE(verdict(100, 106, defaults).below_floor);
  // Each floor is a setting.
  CompareOptions no_ms_floor;
  no_ms_floor.min_change_ms = 0;
  EXPECT_EQ(verdict(10.0, 10.9, no_ms_floor).verdict, Verdict::kRegression);
  CompareOptions wider;
  wider.min_change_ms = 2;
  EXPECT_EQ(verdict(10.0, 11.2, wider).verdict, Verdict::kNoChange);
  CompareOptions no_relative_floor;
  no_relative_floor.min_change = 0;
  EXPECT_EQ(verdict(100, 104, no_relative_floor).verdict, Verdict::kRegression);
  // TPOT is a latency too: 20 -> 20.8 ms is +4%, 0.8 ms.
  EXPECT_EQ(metric(compare_runs(run_samples(steady_requests(200, 100, 10, 20)),
                                run_samples(steady_requests(200, 100, 10, 20.8)), no_ms_floor),
                   "tpot_mean_ms")
                .verdict,
            Verdict::kNoChange);  // under 5%
  EXPECT_EQ(
      metric(compare_runs(run_samples(steady_requests(200, 100, 10, 20)),
                          run_samples(steady_requests(200, 100, 10, 20.8)), no_relative_floor),
             "tpot_mean_ms")
          .verdict,
      Verdict::kNoChange);  // under 1 ms
}

// A throughput has the relative floor only (its unit is not milliseconds).
TEST(Compare, AThroughputChangeUnderFivePercentIsNoChange) {
  // 10 tokens over e2e = 100 + 9 x tpot ms: tpot 20 -> 280 ms; 18.6 -> 267.4 ms (+4.7%
  // throughput); 18 -> 262 ms (+6.9%).
  auto throughput = [](double tpot_b, const CompareOptions& options) {
    return metric(compare_runs(run_samples(steady_requests(200, 100, 10, 20)),
                               run_samples(steady_requests(200, 100, 10, tpot_b)), options),
                  "throughput_per_stream");
  };
  const MetricChange small = throughput(18.6, {});
  EXPECT_NEAR(small.change->change, 280 / 267.4 - 1, 1e-3);
  EXPECT_EQ(small.verdict, Verdict::kNoChange);
  EXPECT_TRUE(small.below_floor);
  EXPECT_EQ(throughput(18, {}).verdict, Verdict::kImprovement);
  CompareOptions huge_ms_floor;
  huge_ms_floor.min_change_ms = 1000;  // not read for a throughput
  EXPECT_EQ(throughput(18, huge_ms_floor).verdict, Verdict::kImprovement);
  CompareOptions no_floor;
  no_floor.min_change = 0;
  EXPECT_EQ(throughput(18.6, no_floor).verdict, Verdict::kImprovement);
}

// An experiment of one done cell at (strategy, concurrency) with n requests.
std::int64_t one_cell_experiment(store::Store& store, const std::string& strategy, int concurrency,
                                 int n) {
  const auto id = store.add_experiment(kvsweep::testing::small_experiment());
  store::CellRow cell;
  cell.experiment_id = id;
  cell.key = strategy + "/" + std::to_string(concurrency);
  cell.arm = strategy;
  cell.concurrency = concurrency;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  store.add_requests(cell.id, requests(n, 100, 1));
  return id;
}

TEST(Compare, NoLevelInCommonComparesNothingAndSaysWhy) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto a = one_cell_experiment(store, "random", 8, 40);
  const auto b = one_cell_experiment(store, "round-robin", 2, 40);
  const CompareResult result = compare_experiments(store, a, b, {});
  EXPECT_TRUE(result.rows.empty());
  EXPECT_EQ(result.nothing_compared,
            "no (strategy, concurrency) level in common: A has random @ 8; B has round-robin @ 2");
  const std::string table = compare_table(result, {});
  EXPECT_EQ(table.find("regression(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("\nnothing compared: no (strategy, concurrency) level in common"),
            std::string::npos)
      << table;
  const auto json = compare_json(result, {});
  EXPECT_EQ(json["compared"], false);
  EXPECT_EQ(json["nothing_compared"], result.nothing_compared);
}

TEST(Compare, ASideWithoutFinishedCellsComparesNothing) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto a = one_cell_experiment(store, "random", 8, 40);
  const auto b = store.add_experiment(kvsweep::testing::small_experiment());
  EXPECT_EQ(compare_experiments(store, a, b, {}).nothing_compared,
            "B (experiment 2 (small-sim, simulated)) has no finished cells");
}

// A prediction is never read as a measurement: each side's label says where its figures
// come from.
TEST(Compare, LabelsSayWhichSideIsPredicted) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  store::ExperimentRow predicted = kvsweep::testing::small_experiment();
  predicted.setup.target->kind = "predict";
  const auto a = store.add_experiment(predicted);
  const auto b = store.add_experiment(kvsweep::testing::small_experiment());
  const CompareResult result = compare_experiments(store, a, b, {});
  EXPECT_EQ(result.a_label, "experiment 1 (small-sim, predicted)");
  EXPECT_EQ(result.b_label, "experiment 2 (small-sim, simulated)");
}

TEST(Compare, TooFewSamplesForEveryMetricComparesNothing) {
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto a = one_cell_experiment(store, "random", 8, 10);
  const auto b = one_cell_experiment(store, "random", 8, 40);
  const CompareResult result = compare_experiments(store, a, b, {});
  ASSERT_EQ(result.rows.size(), 1u);
  EXPECT_EQ(result.nothing_compared,
            "every metric of the 1 common level(s) has fewer than 20 samples on a side "
            "(lower --min-samples or measure more requests)");
  // One metric with enough samples is a comparison: the gate reads its verdicts.
  const auto c = one_cell_experiment(store, "random", 8, 40);
  EXPECT_EQ(compare_experiments(store, b, c, {}).nothing_compared, "");
  EXPECT_EQ(compare_json(compare_experiments(store, b, c, {}), {})["compared"], true);
}

TEST(Compare, NoIntervalForAnyMetricComparesNothing) {
  // Enough TTFT samples, but A's are all 0: no relative change exists; no other metric has data.
  std::vector<store::RequestRow> zero(30);
  for (auto& r : zero) r.ok = true;
  CompareResult result;
  result.rows.push_back({"random", 8, compare_runs(run_samples(zero), run_samples(zero), {})});
  ASSERT_EQ(result.rows[0].metrics[0].n_a, 30u);
  EXPECT_EQ(result.rows[0].metrics[0].verdict, Verdict::kInsufficientData);
  kvsweep::testing::TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto a = store.add_experiment(kvsweep::testing::small_experiment());
  store::CellRow cell;
  cell.experiment_id = a;
  cell.arm = "random";
  cell.concurrency = 8;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  store.add_requests(cell.id, zero);
  EXPECT_EQ(compare_cells(store, cell, cell, {}).nothing_compared,
            "no metric of the 1 common level(s) has a bootstrap interval (A's statistic is 0, so "
            "no relative change)");
}

TEST(Bootstrap, SameSeedSameInterval) {
  const auto a = run_samples(requests(40, 100, 1)).ttft_ms;
  const auto b = run_samples(requests(40, 110, 2)).ttft_ms;
  const StatisticSpec p95{Statistic::kPercentile, 95};
  const auto x = bootstrap_change(a, b, p95, {});
  const auto y = bootstrap_change(a, b, p95, {});
  EXPECT_TRUE(x.valid);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_LT(x.low, x.high);
}

// The algorithm as first written: copy each resample, compute the statistic on the copy (a
// full sort for a percentile). With the same draws the counting resampler must give its
// interval bit for bit.
ChangeInterval plain_bootstrap(const std::vector<WeightedSample>& a,
                               const std::vector<WeightedSample>& b, const StatisticSpec& spec,
                               const BootstrapOptions& options) {
  ChangeInterval out;
  const double base = compute_statistic(a, spec);
  out.valid = true;
  out.change = compute_statistic(b, spec) / base - 1;
  BootstrapRandom random(options.seed);
  auto draw = [&random](std::size_t n) { return random.below(n); };
  std::vector<WeightedSample> ra(a.size());
  std::vector<WeightedSample> rb(b.size());
  std::vector<double> changes;
  for (int r = 0; r < options.resamples; ++r) {
    for (auto& s : ra) s = a[draw(a.size())];
    for (auto& s : rb) s = b[draw(b.size())];
    const double sa = compute_statistic(ra, spec);
    if (sa == 0) continue;
    changes.push_back(compute_statistic(rb, spec) / sa - 1);
  }
  std::sort(changes.begin(), changes.end());
  const double tail = (1 - options.confidence) / 2 * 100;
  out.low = percentile(changes, tail);
  out.high = percentile(changes, 100 - tail);
  return out;
}

TEST(Bootstrap, DrawsAreUniformAndTheSameForTheSameSeed) {
  BootstrapRandom a(5);
  BootstrapRandom b(5);
  std::vector<int> counts(10);
  for (int i = 0; i < 100000; ++i) {
    const std::size_t x = a.below(10);
    ASSERT_EQ(x, b.below(10));
    ASSERT_LT(x, 10u);
    ++counts[x];
  }
  for (const int c : counts) EXPECT_NEAR(c, 10000, 500);  // 5 sigma of a binomial(1e5, 0.1)
  BootstrapRandom other(6);
  int same = 0;
  for (int i = 0; i < 100; ++i) same += a.below(1000000) == other.below(1000000);
  EXPECT_LT(same, 3);
}

TEST(Bootstrap, TheCountingResamplerGivesThePlainAlgorithmsIntervalBitForBit) {
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> value(4, 0.7);
  for (const std::size_t n : {1u, 2u, 7u, 150u, 1001u}) {
    std::vector<WeightedSample> a;
    std::vector<WeightedSample> b;
    for (std::size_t i = 0; i < n; ++i) {
      // Rounded to whole milliseconds: many ties, as real TTFTs have.
      a.push_back({std::round(value(random)), 0.5 + (i % 5)});
      b.push_back({std::round(value(random) * 1.1), 0.5 + (i % 3)});
    }
    for (const StatisticSpec spec :
         {StatisticSpec{Statistic::kMean, 0}, StatisticSpec{Statistic::kPercentile, 0},
          StatisticSpec{Statistic::kPercentile, 50}, StatisticSpec{Statistic::kPercentile, 95},
          StatisticSpec{Statistic::kPercentile, 99.9}, StatisticSpec{Statistic::kPercentile, 100},
          StatisticSpec{Statistic::kRatioOfSums, 0}}) {
      BootstrapOptions options;
      options.resamples = 200;
      options.seed = 3 + n;
      const ChangeInterval fast = bootstrap_change(a, b, spec, options);
      const ChangeInterval plain = plain_bootstrap(a, b, spec, options);
      ASSERT_TRUE(fast.valid);
      EXPECT_EQ(fast.change, plain.change) << n << " " << spec.p;
      EXPECT_EQ(fast.low, plain.low) << n << " " << static_cast<int>(spec.kind) << " " << spec.p;
      EXPECT_EQ(fast.high, plain.high) << n << " " << static_cast<int>(spec.kind) << " " << spec.p;
    }
  }
}

// The joint bootstrap as first written: copy the drawn requests, then compute each metric's
// statistic on the copy over the requests that have its values. The counting form must give
// the same interval (sums taken in another order: equal within rounding; percentiles exact).
std::vector<ChangeInterval> plain_joint_bootstrap(const RequestColumns& a, const RequestColumns& b,
                                                  const std::vector<JointMetric>& metrics,
                                                  const BootstrapOptions& options) {
  auto pick = [](const RequestColumns& columns, const std::vector<std::size_t>& rows) {
    RequestColumns out(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      for (const std::size_t r : rows) out[c].push_back(columns[c][r]);
    }
    return out;
  };
  std::vector<ChangeInterval> out(metrics.size());
  BootstrapRandom random(options.seed);
  std::vector<std::vector<double>> changes(metrics.size());
  const std::size_t na = a[0].size();
  const std::size_t nb = b[0].size();
  for (int r = 0; r < options.resamples; ++r) {
    std::vector<std::size_t> ra(na);
    std::vector<std::size_t> rb(nb);
    for (auto& i : ra) i = random.below(na);
    for (auto& i : rb) i = random.below(nb);
    const RequestColumns da = pick(a, ra);
    const RequestColumns db = pick(b, rb);
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const double sa = joint_statistic(da, metrics[m]);
      if (sa == 0) continue;
      changes[m].push_back(joint_statistic(db, metrics[m]) / sa - 1);
    }
  }
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    out[m].valid = true;
    out[m].change = joint_statistic(b, metrics[m]) / joint_statistic(a, metrics[m]) - 1;
    std::sort(changes[m].begin(), changes[m].end());
    const double tail = (1 - options.confidence) / 2 * 100;
    out[m].low = percentile(changes[m], tail);
    out[m].high = percentile(changes[m], 100 - tail);
  }
  return out;
}

TEST(Bootstrap, TheJointCountingResamplerGivesThePlainJointAlgorithmsInterval) {
  std::mt19937_64 random(17);
  std::lognormal_distribution<double> value(4, 0.7);
  const double none = std::numeric_limits<double>::quiet_NaN();
  const std::vector<JointMetric> metrics = {
      {0, {Statistic::kMean, 0}, 0},         {0, {Statistic::kPercentile, 0}, 0},
      {0, {Statistic::kPercentile, 50}, 0},  {0, {Statistic::kPercentile, 95}, 0},
      {0, {Statistic::kPercentile, 100}, 0}, {1, {Statistic::kMean, 0}, 0},
      {1, {Statistic::kPercentile, 90}, 0},  {2, {Statistic::kRatioOfSums, 0}, 3},
  };
  for (const std::size_t n : {3u, 8u, 150u, 1001u}) {
    RequestColumns a(4);
    RequestColumns b(4);
    for (std::size_t i = 0; i < n; ++i) {
      for (auto* side : {&a, &b}) {
        // Whole milliseconds (many ties, as real TTFTs have); every third request has no TPOT
        // and every fourth no e2e, so the metrics read different requests of one draw.
        (*side)[0].push_back(std::round(value(random) * (side == &b ? 1.1 : 1.0)));
        (*side)[1].push_back(i % 3 == 0 ? none : std::round(value(random)));
        (*side)[2].push_back(i % 4 == 0 ? none : double(1 + i % 50));
        (*side)[3].push_back(i % 4 == 0 ? none : 0.5 + (i % 7));
      }
    }
    BootstrapOptions options;
    options.resamples = 200;
    options.seed = 5 + n;
    const auto fast = joint_bootstrap_change(a, b, metrics, options);
    const auto plain = plain_joint_bootstrap(a, b, metrics, options);
    ASSERT_EQ(fast.size(), metrics.size());
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      ASSERT_TRUE(fast[m].valid) << n << " metric " << m;
      EXPECT_EQ(fast[m].change, plain[m].change) << n << " metric " << m;
      const double scale = std::max(1e-12, std::fabs(plain[m].high) + std::fabs(plain[m].low));
      EXPECT_NEAR(fast[m].low, plain[m].low, 1e-12 * scale) << n << " metric " << m;
      EXPECT_NEAR(fast[m].high, plain[m].high, 1e-12 * scale) << n << " metric " << m;
      if (metrics[m].spec.kind == Statistic::kPercentile) {
        EXPECT_EQ(fast[m].low, plain[m].low) << n << " metric " << m;
        EXPECT_EQ(fast[m].high, plain[m].high) << n << " metric " << m;
      }
    }
  }
}

TEST(Bootstrap, AJointMetricWithoutValuesOnASideHasNoInterval) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const RequestColumns a = {{10, 20, 30}, {none, none, none}};
  const RequestColumns b = {{11, 21, 31}, {1, 2, 3}};
  const auto intervals = joint_bootstrap_change(
      a, b, {{0, {Statistic::kMean, 0}, 0}, {1, {Statistic::kMean, 0}, 0}}, {});
  EXPECT_TRUE(intervals[0].valid);
  EXPECT_LT(intervals[0].low, intervals[0].high);
  EXPECT_FALSE(intervals[1].valid);
  EXPECT_FALSE(joint_bootstrap_change({}, b, {{0, {Statistic::kMean, 0}, 0}}, {})[0].valid);
}

}  // namespace
}  // namespace kvsweep::figures
