// Reports of real sweeps (embedded sim fleet over loopback): compare verdicts between a fast
// and a deliberately slower profile, and the HTML report opened in headless Chromium.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "orchestrator/console.h"
#include "orchestrator/runner.h"
#include "orchestrator/scenario_loader.h"
#include "orchestrator/sim_target.h"
#include "reports/compare.h"
#include "reports/html_report.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

// Concurrency 1 and 2, 24 measured requests per cell: above compare's 20-sample minimum, and
// a few seconds per sweep.
std::string scenario(const std::string& name, const std::string& profile) {
  return "name: \"" + name + "\"\ntarget: {kind: sim, replicas: 2, profile: " + profile + R"(}
model: tiny-model
seed: 5
factors:
  strategy: [random, prefix-hash]
  concurrency: [1, 2]
load:
  dataset: {conversations: 6, turns: 4, system_prompt_words: 40, user_words: 30, assistant_words: 30}
  max_tokens: 4
  num_requests: 24
  warmup: {requests: 2}
  timeout: 30s
report:
  baseline: random
)";
}

std::int64_t run_tiny_sweep(store::Store& store, const std::string& name, const std::string& profile) {
  std::vector<orchestrator::ScenarioError> errors;
  auto spec = orchestrator::parse_scenario(scenario(name, profile), "tiny.yaml", &errors);
  if (!spec) {
    ADD_FAILURE() << errors.at(0).text;
    return 0;
  }
  orchestrator::SimTarget target(*spec);
  target.start();
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome = orchestrator::run_sweep(*spec, target, store, console, {});
  std::fclose(log);
  EXPECT_EQ(outcome.status, "done");
  return outcome.experiment_id;
}

TEST(ReportSweep, CompareSaysNoChangeWithItselfAndRegressionOnASlowerProfile) {
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const auto fast = run_tiny_sweep(store, "compare-tiny", "demo");
  const auto slow = run_tiny_sweep(store, "compare-tiny", "h100-llama3.3-70b-tp4");

  const auto same = reports::compare_experiments(store, fast, fast, {});
  ASSERT_EQ(same.rows.size(), 4u);
  EXPECT_FALSE(same.any_regression());
  for (const auto& row : same.rows) {
    for (const auto& m : row.metrics) EXPECT_EQ(m.verdict, reports::Verdict::kNoChange) << m.metric;
  }

  const auto slower = reports::compare_experiments(store, fast, slow, {});
  ASSERT_EQ(slower.rows.size(), 4u);
  EXPECT_TRUE(slower.any_regression()) << reports::compare_table(slower, {});
  for (const auto& row : slower.rows) {
    EXPECT_EQ(row.metrics.at(0).metric, "ttft_mean_ms");
    EXPECT_EQ(row.metrics.at(0).verdict, reports::Verdict::kRegression)
        << reports::compare_table(slower, {});
  }
}

std::string run_chromium(const std::string& args, const std::string& stderr_path) {
  const std::string command = std::string("timeout 60 ") + kChromium +
                              " --headless --no-sandbox --disable-gpu --disable-quic"
                              " --no-first-run --disable-background-networking"
                              " --disable-component-update --disable-sync"
                              " --enable-logging=stderr --v=0 " +
                              args + " 2>" + stderr_path;
  std::string out;
  if (std::FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << command << "\n" << testing::read_file(stderr_path);
  }
  return out;
}

// Chromium logs every console message (script errors, CSP violations, blocked loads) as
// "[pid:tid:time:INFO:CONSOLE:line] ..." (older releases: "CONSOLE(line)"). A self-contained
// page with no script has none.
constexpr const char* kConsoleMarker = ":CONSOLE";

void expect_no_console_messages(const std::string& stderr_path) {
  const std::string log = testing::read_file(stderr_path);
  EXPECT_EQ(log.find(kConsoleMarker), std::string::npos) << log;
}

// The check above must be able to fail: a page whose CSP blocks a script and a network image
// logs console messages.
TEST(ReportSweep, ChromiumConsoleCheckCatchesABlockedLoad) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is missing: run scripts/install-deps.sh (it installs Debian's chromium)";
  testing::TempDir dir;
  const std::string page = dir.file("bad.html");
  std::ofstream(page) << "<html><head><meta http-equiv=\"Content-Security-Policy\" "
                         "content=\"default-src 'none'\"></head><body><script>console.error(1)"
                         "</script><img src=\"http://example.invalid/x.png\"></body></html>";
  run_chromium(" --user-data-dir=" + dir.file("profile") + " --dump-dom file://" + page,
               dir.file("err"));
  EXPECT_NE(testing::read_file(dir.file("err")).find(kConsoleMarker), std::string::npos);
}

TEST(ReportSweep, HtmlReportOpensInHeadlessChromiumWithEveryChart) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is missing: run scripts/install-deps.sh (it installs Debian's chromium)";
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const std::string name = "<script>alert(1)</script> tiny";
  const auto id = run_tiny_sweep(store, name, "demo");
  const reports::ReportModel model = reports::build_report_model(store, id);
  const std::string html = reports::render_html(model);
  const std::size_t charts = reports::report_charts(model).size();
  const std::string html_path = dir.file("report.html");
  { std::ofstream(html_path, std::ios::binary) << html; }

  std::filesystem::create_directories(KVSWEEP_ARTIFACT_DIR);
  const std::string screenshot = std::string(KVSWEEP_ARTIFACT_DIR) + "/tiny_report.png";
  std::filesystem::remove(screenshot);
  { std::ofstream(std::string(KVSWEEP_ARTIFACT_DIR) + "/tiny_report.html", std::ios::binary) << html; }
  const std::string profile = " --user-data-dir=" + dir.file("chromium-profile");
  run_chromium(profile + " --screenshot=" + screenshot + " --window-size=1200,2000 file://" + html_path,
               dir.file("screenshot.err"));
  expect_no_console_messages(dir.file("screenshot.err"));
  EXPECT_TRUE(std::filesystem::exists(screenshot));
  EXPECT_GT(std::filesystem::file_size(screenshot), 10000u);

  const std::string dom = run_chromium(profile + " --dump-dom file://" + html_path, dir.file("dom.err"));
  expect_no_console_messages(dir.file("dom.err"));
  std::size_t svgs = 0;
  for (auto at = dom.find("<svg"); at != std::string::npos; at = dom.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(charts, 3u + 1u + 2u);  // 3 line charts, hit-rate bars, a CDF per level
  EXPECT_EQ(svgs, charts) << dom.substr(0, 2000);
  EXPECT_EQ(dom.find("no measured data"), std::string::npos);
  // The name is text: no script element was created from it, and it reads as written.
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_NE(dom.find("<h1>kvsweep report: &lt;script&gt;alert(1)&lt;/script&gt; tiny</h1>"),
            std::string::npos)
      << dom.substr(0, 2000);
}

}  // namespace
}  // namespace kvsweep
