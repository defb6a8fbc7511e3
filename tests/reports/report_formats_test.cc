// Tests for reports/headlines.cc and reports/csv_table.cc.
#include <gtest/gtest.h>

#include "reports/csv_table.h"
#include "reports/headlines.h"

namespace kvsweep::reports {
namespace {

store::CellRow cell(const std::string& strategy, int concurrency) {
  store::CellRow c;
  c.arm = strategy;
  c.concurrency = concurrency;
  c.status = "done";
  return c;
}

figures::CellMetrics metrics(double ttft_mean_ms, double total_tok_s, std::int64_t ok = 50) {
  figures::CellMetrics m;
  m.ok = ok;
  m.ttft_ms.count = static_cast<std::size_t>(ok);
  m.ttft_ms.mean = ttft_mean_ms;
  m.ttft_ms.p95 = ttft_mean_ms * 2;
  m.e2e_ms.mean = ttft_mean_ms + 1000;
  m.e2e_ms.p95 = ttft_mean_ms * 2 + 1000;
  m.window_s = 10;
  m.request_throughput = 5;
  m.output_throughput = total_tok_s / 10;
  m.total_token_throughput = total_tok_s;
  return m;
}

figures::ReportModel model(const std::vector<figures::CellMetrics>& m,
                           const std::string& setup_json = "") {
  store::ExperimentRow e;
  e.setup = kvsweep::store::decode_setup(setup_json.empty() ? "{}" : setup_json);
  e.baseline = "random";
  return make_report_model(e, {cell("random", 96), cell("prefix-hash", 96)}, m);
}

TEST(Headlines, StateTheFactorAndTheBaseline) {
  const auto lines = headlines(model({metrics(217.6, 1000), metrics(35.1, 1410)}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0],
      "prefix-hash: mean TTFT 6.2x lower than random at 96 concurrent (35.10 ms vs 217.60 ms)");
  EXPECT_EQ(lines[1],
            "prefix-hash: total throughput 41% higher than random at 96 concurrent "
            "(1410.0 tok/s vs 1000.0 tok/s)");
}

TEST(Headlines, SmallChangesAreNoClearDifference) {
  const auto lines = headlines(model({metrics(100, 1000), metrics(103, 990)}));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("prefix-hash: no clear difference in mean TTFT from random", 0), 0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("prefix-hash: no clear difference in total throughput", 0), 0u);
}

TEST(Headlines, TooFewRequestsAreSaidSo) {
  const auto lines = headlines(model({metrics(100, 1000), metrics(10, 990, 2)}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("too few successful requests"), std::string::npos);
}

// More than 1% failed on either side: no comparison, and why.
TEST(Headlines, ACellWhereMoreThanOnePercentFailedIsNotCompared) {
  figures::CellMetrics failing = metrics(10, 990, 213);
  failing.failed = 927;
  const auto lines = headlines(model({metrics(100, 1000), failing}));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "prefix-hash: not compared with random at 96 concurrent: prefix-hash had 927 of 1140 "
            "requests fail");
}

TEST(ChangePhrase, PicksFactorOrPercent) {
  EXPECT_EQ(change_phrase(1.0 / 164), "164x lower");
  EXPECT_EQ(change_phrase(0.8), "20% lower");
  EXPECT_EQ(change_phrase(1.02), "");
}

TEST(CsvTable, HasSeed004ColumnsInSeconds) {
  const std::string csv = render_csv(
      model({metrics(200, 1000), metrics(50, 1400)}, R"({"load":{"prefix_regime":"large"}})"));
  EXPECT_EQ(csv,
            "mode,prefix_regime,concurrency,mean_ttft_s,p95_ttft_s,mean_e2e_s,p95_e2e_s,req_s,tok_"
            "s,notes\n"
            "random,large,96,0.2000,0.4000,1.2000,1.4000,5.00,100.00,baseline\n"
            "prefix-hash,large,96,0.0500,0.1000,1.0500,1.1000,5.00,140.00,\n");
}

// Seed 004: the prefix length is a factor, so each cell has its own regime and the mode column
// is the arm without it.
TEST(CsvTable, APrefixRegimeFactorFillsTheColumnPerCell) {
  std::vector<store::CellRow> cells;
  for (const std::string mode : {"no_cache", "cache"}) {
    for (const std::string regime : {"512", "1024"}) {
      store::CellRow c = cell(mode + ", prefix_tokens=" + regime, 16);
      c.factors = kvsweep::store::decode_factors(R"({"mode":")" + mode +
                                                 R"(","load.dataset.prefix_tokens":")" + regime +
                                                 R"(","concurrency":16})");
      cells.push_back(c);
    }
  }
  store::ExperimentRow e;
  e.baseline = "no_cache, prefix_tokens=512";
  const std::vector<figures::CellMetrics> m(4, metrics(100, 1000));
  const std::string csv = render_csv(make_report_model(e, cells, m));
  EXPECT_NE(csv.find("\nno_cache,512,16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nno_cache,1024,16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ncache,512,16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ncache,1024,16,"), std::string::npos) << csv;
}

TEST(CsvTable, QuotesFieldsThatNeedIt) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("plain"), "plain");
}

}  // namespace
}  // namespace kvsweep::reports
