// The endpoint picker's figures in the markdown and HTML reports, from a real store whose cells
// carry the EPP's scraped series; and a report without them unchanged.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "figures/cell_metrics.h"
#include "figures/stored_summaries.h"
#include "reports/html_report.h"
#include "reports/markdown_report.h"
#include "tests/reports/request_builders.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::cell_requests;
using kvsweep::testing::cell_samples;
using kvsweep::testing::sample;
using kvsweep::testing::small_experiment;
using kvsweep::testing::TempDir;
using kvsweep::testing::write_small_experiment;

const char* const kEpp = "http://10.0.0.9:9090/metrics";

// The EPP's histograms around a cell: `lookups` prefix lookups whose ratios add to `ratio_sum`,
// and as many scheduling decisions taking `scheduling_s` in all.
std::vector<store::MetricSample> epp_samples(double lookups, double ratio_sum,
                                             double scheduling_s) {
  return {
      sample("before", kEpp, figures::kEppHitRatioSum, 7),
      sample("before", kEpp, figures::kEppHitRatioCount, 10),
      sample("after", kEpp, figures::kEppHitRatioSum, 7 + ratio_sum),
      sample("after", kEpp, figures::kEppHitRatioCount, 10 + lookups),
      sample("before", kEpp, figures::kEppSchedulingSum, 0.5),
      sample("before", kEpp, figures::kEppSchedulingCount, 10),
      sample("after", kEpp, figures::kEppSchedulingSum, 0.5 + scheduling_s),
      sample("after", kEpp, figures::kEppSchedulingCount, 10 + lookups),
  };
}

// Two llm-d arms at concurrency 8, their cells summarized as a sweep summarizes them: the
// servers' hit counters (as the small experiment's) and the EPP's series on the same cell.
std::int64_t write_epp_experiment(store::Store& store) {
  store::ExperimentRow e = small_experiment();
  e.name = "llmd-arms";
  e.baseline = "load-only";
  const auto experiment_id = store.add_experiment(e);
  int ordinal = 0;
  for (const std::string arm : {"load-only", "estimated-prefix"}) {
    const bool prefix = arm == "estimated-prefix";
    store::CellRow cell;
    cell.experiment_id = experiment_id;
    cell.ordinal = ordinal++;
    cell.key = "00ff/" + arm + "/8/0";
    cell.arm = arm;
    cell.concurrency = 8;
    cell.status = "done";
    cell.id = store.add_cell(cell);
    store.add_requests(cell.id, cell_requests(prefix ? 2.5 : 1.0, 8));
    std::vector<store::MetricSample> samples =
        prefix ? cell_samples(400, 320) : cell_samples(64, 0);
    // estimated-prefix: 40 lookups, mean ratio 0.85, 0.25 ms each; load-only: 40 lookups at 0.
    const auto epp = prefix ? epp_samples(40, 34, 0.010) : epp_samples(40, 0, 0.004);
    samples.insert(samples.end(), epp.begin(), epp.end());
    store.add_metric_samples(cell.id, samples);
  }
  store.finish_experiment(experiment_id, "done", "2026-11-22T04:42:10Z");
  EXPECT_EQ(figures::summarize_stored_cells(store, [](const std::string&) {}), 2);
  return experiment_id;
}

TEST(EppReport, MarkdownShowsWhatThePickerBelievedBesideWhatTheServersFound) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string markdown = render_markdown(store, write_epp_experiment(store));
  // Servers: (400 + 320) / 1024 = 70.3 %, (64 + 0) / 1024 = 6.25 % (printed 6.2); the EPP: 34 / 40
  // = 85.0 %, 10 ms / 40 = 0.250 ms and 4 ms / 40 = 0.100 ms.
  const std::string table =
      "From the endpoint picker's /metrics (what it believed each replica held, beside what the "
      "servers\nfound):\n\n"
      "| strategy | EPP prefix hit (%) | server KV hit (%) | EPP scheduling mean (ms) |\n"
      "|---|--:|--:|--:|\n"
      "| load-only | 0.0 | 6.2 | 0.100 |\n"
      "| estimated-prefix | 85.0 | 70.3 | 0.250 |\n";
  EXPECT_NE(markdown.find(table), std::string::npos) << markdown;
}

TEST(EppReport, HtmlShowsTheSameTable) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string html = render_html(store, write_epp_experiment(store));
  EXPECT_NE(html.find("<h3>From the endpoint picker's /metrics</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr><td>estimated-prefix</td><td>85.0</td><td>70.3</td><td>0.250</td>"
                      "</tr>"),
            std::string::npos)
      << html;
}

TEST(EppReport, AReportWithoutTheSeriesHasNoSuchTable) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto experiment_id = write_small_experiment(store);
  figures::summarize_stored_cells(store, [](const std::string&) {});
  EXPECT_EQ(render_markdown(store, experiment_id).find("endpoint picker"), std::string::npos);
  EXPECT_EQ(render_html(store, experiment_id).find("endpoint picker"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::reports
