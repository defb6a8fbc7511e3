// Reports of real sweeps (embedded sim fleet over loopback): compare verdicts between a fast
// and a deliberately slower profile, and the HTML report opened in headless Chromium.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "figures/compare.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/sim_target.h"
#include "orchestrator/targets/target_kinds.h"
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

std::int64_t run_tiny_sweep(store::Store& store, const std::string& name,
                            const std::string& profile) {
  std::vector<orchestrator::ScenarioError> errors;
  auto spec = orchestrator::parse_scenario(scenario(name, profile), "tiny.yaml", &errors,
                                           orchestrator::target_kinds());
  if (!spec) {
    ADD_FAILURE() << errors.at(0).text;
    return 0;
  }
  orchestrator::SimTarget target(*spec, orchestrator::expand_plan(*spec));
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome =
      orchestrator::run_sweep(*spec, orchestrator::expand_plan(*spec), target, store, console, {});
  std::fclose(log);
  EXPECT_EQ(outcome.status, "done");
  return outcome.experiment_id;
}

TEST(ReportSweep, CompareSaysNoChangeWithItselfAndRegressionOnASlowerProfile) {
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const auto fast = run_tiny_sweep(store, "compare-tiny", "demo");
  const auto slow = run_tiny_sweep(store, "compare-tiny", "h100-llama3.3-70b-tp4");

  const auto same = figures::compare_experiments(store, fast, fast, {});
  ASSERT_EQ(same.rows.size(), 4u);
  EXPECT_FALSE(same.any_regression());
  for (const auto& row : same.rows) {
    // A tail percentile of a tiny sweep's few requests is "insufficient data" (compare calls
    // one only with 10 requests beyond it on each side); nothing is ever a change.
    for (const auto& m : row.metrics) {
      EXPECT_TRUE(m.verdict == figures::Verdict::kNoChange ||
                  m.verdict == figures::Verdict::kInsufficientData)
          << m.metric;
    }
  }

  const auto slower = figures::compare_experiments(store, fast, slow, {});
  ASSERT_EQ(slower.rows.size(), 4u);
  EXPECT_TRUE(slower.any_regression()) << figures::compare_table(slower, {});
  for (const auto& row : slower.rows) {
    EXPECT_EQ(row.metrics.at(0).metric, "ttft_mean_ms");
    EXPECT_EQ(row.metrics.at(0).verdict, figures::Verdict::kRegression)
        << figures::compare_table(slower, {});
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
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      out.append(buffer, n);
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

// Measures the rendered page from inside (the report itself carries no script, and its CSP
// forbids one, so a copy without the CSP gets this appended): the viewport, anything sticking
// out of it without a scrolling box around it, the on-screen size of every chart text, how far
// each chart's legend is below its x-axis title, and tables outside .table-wrap.
constexpr const char* kMeasureScript = R"(<script>
(function () {
  const vw = document.documentElement.clientWidth;
  const out = {viewport: vw, page_width: document.documentElement.scrollWidth, sticking_out: [],
               text_px: {ticks: [], axis_titles: [], legend: [], chart_titles: []},
               overlaps: [], x_titles: 0, x_title_legend_gap: 1e9, unwrapped_tables: 0,
               charts: 0};
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if ((s.overflowX === 'auto' || s.overflowX === 'scroll') &&
          a.getBoundingClientRect().right <= vw + 0.5) return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    if (el.getBoundingClientRect().right > vw + 0.5 && !scrolls(el)) {
      out.sticking_out.push(el.tagName + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''));
    }
  }
  const px = (t) => { const m = t.getScreenCTM(); return Math.hypot(m.a, m.b) * parseFloat(getComputedStyle(t).fontSize); };
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const svg of document.querySelectorAll('svg.chart')) {
    out.charts++;
    for (const t of svg.querySelectorAll('g.axes > text')) {
      const kind = t.classList.contains('x-title') || t.classList.contains('y-title') ? 'axis_titles' : 'ticks';
      out.text_px[kind].push(px(t));
    }
    for (const t of svg.querySelectorAll('g.legend text')) out.text_px.legend.push(px(t));
    for (const t of svg.querySelectorAll('.chart-title')) out.text_px.chart_titles.push(px(t));
    const title = svg.querySelector('.x-title');
    if (!title) continue;
    out.x_titles++;
    const box = title.getBoundingClientRect();
    const legend = svg.querySelector('g.legend');
    if (legend) {
      const l = legend.getBoundingClientRect();
      out.x_title_legend_gap = Math.min(out.x_title_legend_gap, l.top - box.bottom);
      if (hit(box, l)) out.overlaps.push(svg.getAttribute('aria-label'));
    }
  }
  for (const t of document.querySelectorAll('table')) {
    if (!t.parentElement.classList.contains('table-wrap')) out.unwrapped_tables++;
  }
  const pre = document.createElement('pre');
  pre.id = 'kvsweep-measure';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>)";

nlohmann::json measure_page(const std::string& html, int width, testing::TempDir& dir) {
  std::string page = html;
  const std::size_t csp = page.find("<meta http-equiv=\"Content-Security-Policy\"");
  if (csp == std::string::npos) {
    ADD_FAILURE() << "no CSP meta tag to take out";
    return {};
  }
  page.erase(csp, page.find('>', csp) + 1 - csp);
  page.insert(page.rfind("</body>"), kMeasureScript);
  const std::string tag = std::to_string(width);
  const std::string path = dir.file("measure-" + tag + ".html");
  { std::ofstream(path, std::ios::binary) << page; }
  const std::string dom =
      run_chromium(" --user-data-dir=" + dir.file("chromium-measure-" + tag) +
                       " --window-size=" + tag + ",2000 --dump-dom file://" + path,
                   dir.file("measure-" + tag + ".err"));
  const std::string marker = "<pre id=\"kvsweep-measure\">";
  const std::size_t at = dom.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the measuring script left no result at " << width << " px";
    return {};
  }
  const std::size_t start = at + marker.size();
  std::string text = dom.substr(start, dom.find("</pre>", start) - start);
  // The DOM dump escapes & < > in text; the JSON holds no other entity.
  for (const auto& [entity, c] :
       {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (std::size_t p = text.find(entity); p != std::string::npos; p = text.find(entity, p + 1)) {
      text.replace(p, std::string(entity).size(), c);
    }
  }
  return nlohmann::json::parse(text);
}

double smallest(const nlohmann::json& values) {
  double low = 1e9;
  for (const auto& v : values) low = std::min(low, v.get<double>());
  return low;
}

double largest(const nlohmann::json& values) {
  double high = 0;
  for (const auto& v : values) high = std::max(high, v.get<double>());
  return high;
}

TEST(ReportSweep, HtmlReportOpensInHeadlessChromiumWithEveryChart) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is missing: run scripts/install-deps.sh (it installs Debian's chromium)";
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const std::string name = "<script>alert(1)</script> tiny";
  const auto id = run_tiny_sweep(store, name, "demo");
  const figures::ReportModel model = figures::build_report_model(store, id);
  const std::string html = reports::render_html(model);
  const std::size_t charts = reports::report_charts(model).size();
  const std::string html_path = dir.file("report.html");
  { std::ofstream(html_path, std::ios::binary) << html; }

  // Screenshots at a laptop's and a narrow window's width, kept for a person to look at.
  std::filesystem::create_directories(KVSWEEP_ARTIFACT_DIR);
  {
    std::ofstream(std::string(KVSWEEP_ARTIFACT_DIR) + "/tiny_report.html", std::ios::binary)
        << html;
  }
  const std::string profile = " --user-data-dir=" + dir.file("chromium-profile");
  for (int width : {1400, 800}) {
    const std::string screenshot =
        std::string(KVSWEEP_ARTIFACT_DIR) + "/tiny_report_" + std::to_string(width) + ".png";
    std::filesystem::remove(screenshot);
    run_chromium(profile + " --screenshot=" + screenshot +
                     " --window-size=" + std::to_string(width) + ",2000 file://" + html_path,
                 dir.file("screenshot.err"));
    expect_no_console_messages(dir.file("screenshot.err"));
    EXPECT_TRUE(std::filesystem::exists(screenshot));
    EXPECT_GT(std::filesystem::file_size(screenshot), 10000u);
  }

  const std::string dom =
      run_chromium(profile + " --dump-dom file://" + html_path, dir.file("dom.err"));
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
  // What the markdown report has, the page has: the answer first, and the servers' /metrics
  // table (the embedded fleet exposes KV-cache usage and preemptions).
  EXPECT_NE(dom.find("<h2>Verdict</h2>"), std::string::npos);
  EXPECT_LT(dom.find("<h2>Verdict</h2>"), dom.find("<h2>Setup</h2>"));
  EXPECT_NE(dom.find("<h3>From the servers' /metrics</h3>"), std::string::npos);
  EXPECT_NE(dom.find("<table class=\"replicas\">"), std::string::npos);

  for (int width : {1400, 800}) {
    SCOPED_TRACE(std::to_string(width) + " px");
    const nlohmann::json m = measure_page(html, width, dir);
    if (m.is_null()) continue;
    // The window size took (less a vertical scroll bar, if any).
    EXPECT_LE(m["viewport"].get<int>(), width) << m;
    EXPECT_GT(m["viewport"].get<int>(), width - 20) << m;
    EXPECT_EQ(m["charts"].get<std::size_t>(), charts);
    // Nothing wider than the window except inside a box that scrolls (the wide tables).
    EXPECT_LE(m["page_width"].get<int>(), m["viewport"].get<int>()) << m;
    EXPECT_TRUE(m["sticking_out"].empty()) << m["sticking_out"];
    EXPECT_EQ(m["unwrapped_tables"].get<int>(), 0);
    // Readable chart text: about 12 px for tick labels on a 1400 px window (was ~6.5 px), and
    // no smaller on a narrow one, where charts go one per row.
    EXPECT_GE(smallest(m["text_px"]["ticks"]), 11.0) << m["text_px"];
    EXPECT_GE(smallest(m["text_px"]["legend"]), 11.0) << m["text_px"];
    EXPECT_GE(smallest(m["text_px"]["axis_titles"]), 12.0) << m["text_px"];
    if (width == 1400) {
      EXPECT_LE(largest(m["text_px"]["ticks"]), 14.0) << m["text_px"];
    }
    // The x-axis title and the legend do not touch (every chart has both).
    EXPECT_EQ(m["x_titles"].get<std::size_t>(), charts);
    EXPECT_TRUE(m["overlaps"].empty()) << m["overlaps"];
    EXPECT_GE(m["x_title_legend_gap"].get<double>(), 2.0) << "px between x-axis title and legend";
  }
}

}  // namespace
}  // namespace kvsweep
