// Tests for reports/html_report.cc: self-contained output, every chart, escaped user strings.
#include "reports/html_report.h"

#include <gtest/gtest.h>

#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::TempDir;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, IsSelfContainedWithEveryChartAndTable) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string html = render_html(store, kvsweep::testing::write_small_experiment(store));
  // 3 line charts + hit-rate bars + one TTFT CDF per level (2).
  EXPECT_EQ(count(html, "<svg "), 6u);
  EXPECT_EQ(count(html, "<table>"), 4u);  // a metrics and a ratio table per level
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  EXPECT_NE(html.find("name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("prefix-hash: mean TTFT 2.5x lower than random at 8 concurrent"),
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
  cell.strategy = "<b>bold</b>";
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
