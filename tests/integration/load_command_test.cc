// `kvsweep load` as a user runs it: the real binary against the embedded fleet on loopback.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "orchestrator/child_process.h"
#include "sim/fleet.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class LoadCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::FleetOptions options;
    options.replicas = 2;
    options.model = "tiny";
    options.strategy = "prefix-hash";
    fleet_ = std::make_unique<sim::Fleet>(options);
    fleet_->start();
  }
  std::vector<std::string> base_argv(const std::string& db) const {
    return {KVSWEEP_BINARY, "--db", db, "load", "--url", fleet_->router_url(), "--model", "tiny"};
  }
  testing::TempDir dir_;
  std::unique_ptr<sim::Fleet> fleet_;
};

TEST_F(LoadCommand, ClosedLoopPrintsVllmBlockWritesJsonAndStoresRows) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {
      "--concurrency", "4", "--num-prompts", "40", "--max-tokens", "5",
      "--conversations", "8", "--turns", "3", "--system-prompt-words", "50",
      "--warmup-requests", "4", "--goodput", "ttft:10000",
      "--metric-percentiles", "50,99", "--label", "t",
      "--result-file", dir_.file("result.json"),
      "--metrics-url", fleet_->replica_urls()[0] + "/metrics",
      "--metrics-url", fleet_->replica_urls()[1] + "/metrics"};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.out.find("============ Serving Benchmark Result ============"), std::string::npos);
  EXPECT_NE(r.out.find("Successful requests:                    40"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("P50 TTFT (ms):"), std::string::npos);
  EXPECT_NE(r.out.find("KV hit rate, server (%):"), std::string::npos);

  const auto result = nlohmann::json::parse(read_file(dir_.file("result.json")));
  EXPECT_EQ(result["completed"], 40);
  EXPECT_EQ(result["failed"], 0);
  EXPECT_EQ(result["total_output_tokens"], 200);
  EXPECT_EQ(result["request_rate"], "inf");
  EXPECT_EQ(result["max_concurrency"], 4);
  EXPECT_TRUE(result.contains("p50_ttft_ms"));
  EXPECT_DOUBLE_EQ(result["request_goodput"].get<double>(),
                   result["request_throughput"].get<double>());  // every TTFT < 10 s
  EXPECT_GT(result["kv_cache_hit_rate"].get<double>(), 0.0);

  const auto store = store::Store::open(dir_.file("s.db"));
  const auto experiment = store.latest_experiment();
  ASSERT_TRUE(experiment.has_value());
  EXPECT_EQ(experiment->name, "load-t");
  EXPECT_EQ(experiment->status, "done");
  const auto cells = store.cells(experiment->id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(store.request_count(cells[0].id), 44);  // 4 warm-up + 40 measured
}

TEST_F(LoadCommand, OpenLoopRecordsTheSchedule) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {"--request-rate", "200", "--max-concurrency", "8",
                                         "--num-prompts", "30", "--max-tokens", "3",
                                         "--endpoint", "completions", "--no-save"};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.out.find("Schedule Lag (sent - scheduled)"), std::string::npos) << r.out;
  const auto store = store::Store::open(dir_.file("s.db"));
  const auto rows = store.requests(store.cells(store.latest_experiment()->id)[0].id);
  ASSERT_EQ(rows.size(), 30u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.ok) << row.error;
    EXPECT_GE(row.scheduled_s, 0);
    EXPECT_GE(row.sent_s, row.scheduled_s);
  }
}

TEST_F(LoadCommand, ApiKeyComesFromTheEnvironmentAndIsNeverStored) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {"--api-key-env", "KVSWEEP_TEST_KEY", "--num-prompts",
                                         "3", "--max-tokens", "2", "--no-save"};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60, {{"KVSWEEP_TEST_KEY", "sk-secret-123"}});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(read_file(dir_.file("s.db")).find("sk-secret-123"), std::string::npos);
  EXPECT_EQ(r.out.find("sk-secret-123"), std::string::npos);
  EXPECT_EQ(r.err.find("sk-secret-123"), std::string::npos);

  const auto missing = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", fleet_->router_url(),
       "--model", "tiny", "--api-key-env", "KVSWEEP_UNSET_VARIABLE", "--num-prompts", "1"},
      60);
  EXPECT_EQ(missing.exit_code, 2);  // bad input
  EXPECT_NE(missing.err.find("--api-key-env: environment variable KVSWEEP_UNSET_VARIABLE is not "
                             "set or empty"),
            std::string::npos)
      << missing.err;
}

TEST_F(LoadCommand, ADeadServerGivesFailedRequestsNotACrash) {
  const auto r = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", "http://127.0.0.1:1",
       "--model", "tiny", "--num-prompts", "3", "--no-save"},
      60);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 1);  // nothing succeeded
  EXPECT_NE(r.out.find("connect:"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace kvsweep
