// Tests for reports/markdown_report.cc: a byte-for-byte golden file of a whole report, plus
// failed cells and table escaping.
//
// To regenerate the golden file after an intended change of the report, run
//   KVSWEEP_UPDATE_GOLDEN=1 ./tests/reports/reports_test --gtest_filter='MarkdownReport.*'
// from the build dir, then review the diff of tests/reports/golden/ before committing.
#include "reports/markdown_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "figures/cell_metrics.h"
#include "tests/reports/request_builders.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::reports {
namespace {

using kvsweep::testing::cell_requests;
using kvsweep::testing::read_file;
using kvsweep::testing::small_experiment;
using kvsweep::testing::TempDir;
using kvsweep::testing::write_small_experiment;

TEST(MarkdownReport, MatchesGoldenFile) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string markdown = render_markdown(store, write_small_experiment(store));
  const std::string golden_path = std::string(KVSWEEP_GOLDEN_DIR) + "/small_experiment.md";
  const char* update = std::getenv("KVSWEEP_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << markdown;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  EXPECT_EQ(markdown, read_file(golden_path))
      << "the report changed; if intended, regenerate with KVSWEEP_UPDATE_GOLDEN=1 (see the "
         "top of this file)";
}

// Each marker must appear, each after the one before it.
void expect_in_order(const std::string& text, const std::vector<std::string>& markers) {
  std::size_t at = 0;
  for (const std::string& marker : markers) {
    const std::size_t found = text.find(marker, at);
    ASSERT_NE(found, std::string::npos) << "missing after offset " << at << ": " << marker << "\n"
                                        << text;
    at = found + marker.size();
  }
}

// The answer first (what `kvsweep run` and `kvsweep report` print): where the figures come
// from, one verdict line per level, the compact table, and only then the setup and details.
TEST(MarkdownReport, PutsTheAnswerFirst) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string markdown = render_markdown(store, write_small_experiment(store));
  expect_in_order(
      markdown,
      {"# kvsweep report: small-sim\n\n",
       "Simulated: these figures come from kvsweep's embedded fleet (target kind sim, "
       "profile tiny, 2 replicas), not from real servers.\n\n## Verdict\n\n",
       "- Concurrency 8: prefix-hash wins over random: TTFT p50 2.5x lower",
       // random failed 3 of its 7 requests (more than 1%): it is not compared, so no winner.
       "- Concurrency 16: nothing to compare: only prefix-hash has 3 or more successful requests",
       "; failed requests: random 3; not compared: random (3 of 7 failed)\n",
       "| concurrency | strategy | ok | failed | TTFT p50 (ms) | TTFT p95 (ms) | total "
       "tok/s |",
       "| 8 | **prefix-hash** | 4 | 0 | 52.00 | 62.80 | 1243.74 | 70.3 | 75.0 |", "## Setup\n",
       "## Against the baseline\n", "## Concurrency 8\n", "## Concurrency 16\n"});
}

// Which replica served each request: prefix-hash's 3-to-1 skew shows, and requests that no
// replica answered are counted as unknown, not dropped.
TEST(MarkdownReport, ShowsRequestShareAndHitRatePerReplica) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const std::string markdown = render_markdown(store, write_small_experiment(store));
  const std::size_t level16 = markdown.find("## Concurrency 16");
  ASSERT_NE(level16, std::string::npos);
  expect_in_order(
      markdown.substr(level16),
      {"| strategy | replica | requests | share (%) | failed | cache hit client (%) |",
       "| random | 0 | 2 | 28.6 | 0 | 12.5 |", "| random | 1 | 2 | 28.6 | 0 | 12.5 |",
       "| random | unknown | 3 | 42.9 | 3 | n/a |", "| prefix-hash | 0 | 3 | 75.0 | 0 | 75.0 |",
       "| prefix-hash | 1 | 1 | 25.0 | 0 | 75.0 |",
       "| strategy | source | queries (tokens) | share (%) | KV hit server (%) |",
       "| prefix-hash | http://127.0.0.1:9001/metrics | 512 | 50.0 | 78.1 |",
       "| prefix-hash | http://127.0.0.1:9002/metrics | 512 | 50.0 | 62.5 |"});
}

// A cell whose requests re-sent prompts says so beside its level's table.
TEST(MarkdownReport, SaysWhichCellsSentAPromptMoreThanOnce) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto experiment_id = store.add_experiment(small_experiment());
  store::CellRow cell;
  cell.experiment_id = experiment_id;
  cell.key = "k";
  cell.arm = "prefix-hash";
  cell.concurrency = 4;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  std::vector<store::RequestRow> rows = cell_requests(1.0, 4);
  for (auto& row : rows) row.conversation = 0;  // one prompt, sent by every request
  store.add_requests(cell.id, rows);
  const std::string markdown = render_markdown(store, experiment_id);
  EXPECT_NE(markdown.find("Prompts sent more than once"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- prefix-hash: each prompt up to 4 times; 3 of 4 measured requests\n"
                          "  re-sent a prompt"),
            std::string::npos)
      << markdown;
  // The small experiment's requests each send a prompt of their own.
  TempDir other;
  store::Store plain = store::Store::open(other.file("kvsweep.db"));
  EXPECT_EQ(render_markdown(plain, write_small_experiment(plain)).find("more than once"),
            std::string::npos);
}

TEST(MarkdownReport, FailedCellShowsStatusAndEscapedError) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  store::ExperimentRow e = small_experiment();
  const auto experiment_id = store.add_experiment(e);
  store::CellRow cell;
  cell.experiment_id = experiment_id;
  cell.key = "k";
  cell.arm = "odd|name";
  cell.concurrency = 4;
  cell.status = "failed";
  cell.error = "kubectl exited 1: a | b\nsecond line";
  store.add_cell(cell);
  const std::string markdown = render_markdown(store, experiment_id);
  EXPECT_NE(markdown.find("## Concurrency 4\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| odd\\|name | failed: kubectl exited 1: a \\| b second line |"),
            std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("Relative to"), std::string::npos) << markdown;
}

// GitHub and dashboards render the report: no user string may become HTML, a comment, a link,
// an image or the end of the CSV block.
TEST(MarkdownReport, HostileTextRendersAsTextNeverAsHtml) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  store::ExperimentRow e = small_experiment();
  e.name = "<script>alert(1)</script> <!-- [x](javascript:alert(1)) \\[y\\](http://e.invalid)";
  e.scenario_path = "<img src=x onerror=alert(2)> ![t](http://tracker.invalid/p.png)";
  const auto experiment_id = store.add_experiment(e);
  store::CellRow cell;
  cell.experiment_id = experiment_id;
  cell.key = "k";
  cell.arm = "evil\n```\n<b>x</b> & co";
  cell.concurrency = 4;
  cell.status = "failed";
  cell.error = "<iframe src=//e.invalid> |";
  store.add_cell(cell);
  const std::string markdown = render_markdown(store, experiment_id);

  // The label's ``` is inside the CSV: the block opens with a longer fence and ends with it.
  const std::size_t open = markdown.find("\n````csv\n");
  ASSERT_NE(open, std::string::npos) << markdown;
  const std::size_t close = markdown.find("\n````\n", open + 1);
  ASSERT_NE(close, std::string::npos) << markdown;
  EXPECT_NE(markdown.substr(open, close - open).find("\n```\n<b>x</b> & co"), std::string::npos);
  EXPECT_NE(markdown.find("\n---\nLatency is over", close), std::string::npos) << markdown;

  // Outside that block (text in a code block is shown as it is), no tag and no link.
  const std::string rendered = markdown.substr(0, open) + markdown.substr(close);
  EXPECT_EQ(rendered.find('<'), std::string::npos) << rendered;
  EXPECT_EQ(rendered.find('>'), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("# kvsweep report: &lt;script&gt;alert(1)&lt;/script&gt; &lt;!-- "
                          "\\[x\\](javascript:alert(1)) \\\\\\[y\\\\\\](http://e.invalid)\n"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("- **Scenario:** &lt;img src=x onerror=alert(2)&gt; "
                          "!\\[t\\](http://tracker.invalid/p.png)\n"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("| evil ``` &lt;b&gt;x&lt;/b&gt; &amp; co | failed: &lt;iframe "
                          "src=//e.invalid&gt; \\| |"),
            std::string::npos)
      << rendered;
}

TEST(MarkdownReport, TokenFiguresWithoutUsageAreMarkedNotZero) {
  TempDir dir;
  store::Store store = store::Store::open(dir.file("kvsweep.db"));
  const auto experiment_id = store.add_experiment(small_experiment());
  store::CellRow cell;
  cell.experiment_id = experiment_id;
  cell.key = "k";
  cell.arm = "random";
  cell.concurrency = 2;
  cell.status = "done";
  cell.id = store.add_cell(cell);
  std::vector<store::RequestRow> rows;
  for (int i = 0; i < 2; ++i) {  // a server that sends no usage
    store::RequestRow r = kvsweep::testing::ok_request(i, 0.0, 100, 1000, -1, 4, -1, {300});
    r.tokens_estimated = true;
    rows.push_back(r);
  }
  store::RequestRow failed = kvsweep::testing::failed_request(2, 0.0, 5, "http_status");
  failed.http_status = 404;
  failed.error = "HTTP 404: The model `m` does not exist.";
  rows.push_back(failed);
  store.add_requests(cell.id, rows);
  const std::string markdown = render_markdown(store, experiment_id);
  // output tok/s estimated (8 tokens over 1 s), total tok/s unknown, and a note saying so.
  EXPECT_NE(markdown.find("| 2.00 | ≈8.00 | unknown |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("\n≈: estimated, the server sent no token usage"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("- random: 1 http_status (first: HTTP 404: The model `m` does not "
                          "exist.)"),
            std::string::npos)
      << markdown;
}

TEST(MarkdownReport, UnknownExperimentThrows) {
  TempDir dir;
  const store::Store store = store::Store::open(dir.file("kvsweep.db"));
  EXPECT_THROW(render_markdown(store, 42), std::runtime_error);
}

}  // namespace
}  // namespace kvsweep::reports
