// Tests for reports/html_report.cc: self-contained output, every chart, escaped user strings.
#include "reports/html_report.h"

#include <gtest/gtest.h>

#include "figures/cell_metrics.h"
#include "tests/reports/request_builders.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::TempDir;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, IsSelfContainedWithEveryChartAndTable) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string html = render_html(store, kvsweep::testing::write_small_experiment(store));
  // 3 line charts + hit-rate bars + one TTFT CDF per level (2).
  EXPECT_EQ(occurrences(html, "<svg "), 6u);
  EXPECT_EQ(occurrences(html, "<table>"), 4u);  // a metrics and a ratio table per level
  EXPECT_EQ(occurrences(html, "<table class=\"summary\">"), 1u);
  EXPECT_EQ(occurrences(html, "<table class=\"load\">"), 2u);      // achieved load, one per level
  EXPECT_EQ(occurrences(html, "<table class=\"replicas\">"), 2u);  // one per level
  EXPECT_EQ(occurrences(html, "<table class=\"sources\">"), 2u);
  // Every table scrolls sideways inside its own box rather than being cut off.
  EXPECT_EQ(occurrences(html, "<div class=\"table-wrap\"><table"), occurrences(html, "<table"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_NE(html.find("name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("prefix-hash: mean TTFT 2.5x lower than random at 8 concurrent"),
            std::string::npos);
}

TEST(HtmlReport, PutsTheAnswerFirst) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string html = render_html(store, kvsweep::testing::write_small_experiment(store));
  std::size_t at = 0;
  for (const std::string marker :
       {"<h1>kvsweep report: small-sim</h1>",
        "<p class=\"source\">Simulated: these figures come from kvsweep&#39;s embedded fleet "
        "(target kind sim, profile tiny, 2 replicas), not from real servers.</p>",
        "<h2>Verdict</h2>", "<li>Concurrency 8: prefix-hash wins over random: TTFT p50 2.5x lower",
        // random failed 3 of its 7 requests at 16 (more than 1%): not compared, no winner.
        "<li>Concurrency 16: nothing to compare: only prefix-hash has 3 or more successful "
        "requests",
        "<table class=\"summary\">",
        "<td>8</td><td class=\"winner\">prefix-hash</td><td>4</td><td>0</td><td>52.00</td>",
        "<h2>Setup</h2>", "<h2>Against the baseline</h2>", "<h2>Charts</h2>",
        "<h2>Concurrency 8</h2>"}) {
    const std::size_t found = html.find(marker, at);
    ASSERT_NE(found, std::string::npos) << marker;
    at = found + marker.size();
  }
}

// The markdown report's server-metrics table and per-replica tables are in the HTML too.
TEST(HtmlReport, HasTheServerMetricsAndPerReplicaTables) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto id = kvsweep::testing::write_small_experiment(store);
  const store::CellRow first = store.cells(id).at(0);  // random at 8
  store.add_metric_samples(first.id,
                           {kvsweep::testing::sample("during", "http://127.0.0.1:9001/metrics",
                                                     figures::kKvCacheUsage, 0.42)});
  const std::string html = render_html(store, id);
  EXPECT_NE(html.find("<h3>From the servers' /metrics</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>random</td><td>42.0</td><td>n/a</td><td>n/a</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>random</td><td>unknown</td><td>3</td><td>42.9</td><td>3</td>"
                      "<td>n/a</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>prefix-hash</td><td>0</td><td>3</td><td>75.0</td><td>0</td>"
                      "<td>75.0</td></tr>"),
            std::string::npos);
}

TEST(HtmlReport, ScriptInUserStringsIsShownAsText) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  store::ExperimentRow e = kvsweep::testing::small_experiment();
  e.name = "<script>alert(1)</script>";
  e.host = "\"><img src=x onerror=alert(2)>";
  const auto id = store.add_experiment(e);
  store::CellRow cell;
  cell.experiment_id = id;
  cell.key = "k";
  cell.arm = "<b>bold</b>";
  cell.concurrency = 4;
  cell.status = "failed";
  cell.error = "x < y & \"z\"";
  store.add_cell(cell);
  const std::string html = render_html(store, id);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find("<h1>kvsweep report: &lt;script&gt;alert(1)&lt;/script&gt;</h1>"),
            std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("failed: x &lt; y &amp; &quot;z&quot;"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::reports
