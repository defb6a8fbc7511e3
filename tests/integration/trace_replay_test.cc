// A scenario's Mooncake trace is replayed on its own arrival times (docs/scenarios.md,
// "Factors": the concurrency level is then the in-flight cap), predicted end to end with
// `kvsweep predict` into a real store. Before, a scenario ran every trace as a closed loop of
// `concurrency` users and ignored its timestamps, so a trace that outran its fleet was judged
// valid: the open-loop verdict rules never ran on it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/targets/child_process.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

// `rows` requests `gap_ms` apart, each 2 blocks of 512 tokens (the second row of a pair
// continues the first's session), 64 output tokens.
std::string write_trace(testing::TempDir& dir, int rows, int gap_ms) {
  const std::string path = dir.file("trace.jsonl");
  std::ofstream out(path);
  for (int i = 0; i < rows; ++i) {
    const int session = i / 2;
    out << R"({"timestamp": )" << i * gap_ms << R"(, "input_length": )"
        << (i % 2 == 0 ? 1000 : 1500) << R"(, "output_length": 64, "hash_ids": [)" << 3 * session
        << ", " << 3 * session + 1;
    if (i % 2 == 1) out << ", " << 3 * session + 2;
    out << "]}\n";
  }
  return path;
}

struct Replayed {
  store::CellLoadRow load;
  std::vector<store::RequestRow> rows;
  std::string verdict;
  std::string plan;    // what `kvsweep plan` printed
  std::string report;  // the markdown report
};

Replayed predict_trace(testing::TempDir& dir, int rows, int gap_ms) {
  const std::string trace = write_trace(dir, rows, gap_ms);
  const std::string scenario = dir.file("trace.yaml");
  std::ofstream(scenario) << "name: trace-replay\n"
                             "target: {kind: sim, replicas: 1, profile: l4-llama3.1-8b-fp8}\n"
                             "factors:\n"
                             "  strategy: [least-load]\n"
                             "  concurrency: [2000]\n"
                             "load:\n"
                             "  dataset: {kind: mooncake, block_size: 512, path: " +
                                 trace +
                                 "}\n"
                                 "  timeout: 10m\n"
                                 "  cache: cold\n";
  const std::string db = dir.file("trace.db");
  Replayed out;
  out.plan = orchestrator::run_process({KVSWEEP_BINARY, "plan", scenario}, 60).out;
  const orchestrator::ProcessResult run = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", db, "predict", scenario, "--no-print", "-o", dir.file("out")}, 300);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const store::Store store = store::Store::open(db);
  const auto cells = store.cells(store.latest_experiment()->id);
  EXPECT_EQ(cells.size(), 1u);
  if (cells.size() != 1) return out;
  out.load = store.cell_load(cells[0].id).value_or(store::CellLoadRow{});
  for (const store::RequestRow& r : store.requests(cells[0].id)) {
    if (!r.warmup) out.rows.push_back(r);
  }
  out.report = orchestrator::run_process(
                   {KVSWEEP_BINARY, "--db", db, "report", "--format", "md", "-o", "-"}, 120)
                   .out;
  const orchestrator::ProcessResult report =
      orchestrator::run_process({KVSWEEP_BINARY, "--db", db, "report", "--format", "json"}, 120);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  const nlohmann::json doc = nlohmann::json::parse(report.out, nullptr, false);
  if (doc.contains("metrics")) {
    out.verdict = doc["metrics"]["ttft_mean_ms"]["baseline"]["verdicts"][0].get<std::string>();
  }
  return out;
}

TEST(TraceReplay, AScenarioSendsATraceOnItsOwnTimesWithTheLevelAsTheCap) {
  testing::TempDir dir;
  // 60 requests a second apart: far inside one L4's capacity.
  const Replayed slow = predict_trace(dir, 60, 1000);
  EXPECT_TRUE(slow.load.open_loop);
  EXPECT_EQ(slow.load.request_rate, 0);  // the trace's own times, not a rate
  EXPECT_EQ(slow.load.max_concurrency, 2000);
  ASSERT_EQ(slow.rows.size(), 60u);
  double first = INFINITY;
  for (const store::RequestRow& r : slow.rows) first = std::min(first, r.scheduled_s);
  for (const store::RequestRow& r : slow.rows) {
    // Each request is due at its row's timestamp from the first, and sent then.
    EXPECT_NEAR(r.scheduled_s - first, static_cast<double>(r.index), 1e-6) << r.index;
    EXPECT_NEAR(r.sent_s, r.scheduled_s, 0.01) << r.index;
  }
  EXPECT_EQ(slow.verdict, "valid");
  // The plan and the report's setup say how the cells are sent.
  EXPECT_NE(slow.plan.find("open loop on the trace's own arrival times"), std::string::npos)
      << slow.plan;
  EXPECT_NE(slow.report.find("shape=open loop on the trace's own arrival times, concurrency "
                             "level = in-flight cap"),
            std::string::npos)
      << slow.report;
}

TEST(TraceReplay, ATraceThatOutrunsItsFleetIsOverCapacity) {
  testing::TempDir dir;
  // 40 requests a second of 1,000-1,500-token prompts for 3 minutes on one L4 (a few
  // requests a second of prefill): a queue grows through the replay.
  const Replayed fast = predict_trace(dir, 7200, 25);
  EXPECT_TRUE(fast.load.open_loop);
  EXPECT_EQ(fast.verdict, "over capacity");
}

}  // namespace
}  // namespace kvsweep
