// `kvsweep load` as a user runs it: the real binary against the embedded fleet on loopback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "driver/test_request.h"
#include "orchestrator/targets/child_process.h"
#include "sim/fleet.h"
#include "store/store.h"
#include "tests/driver/test_server.h"
#include "tests/support/json_schema_check.h"
#include "tests/support/temp_dir.h"

extern char** environ;

namespace kvsweep {
namespace {

using driver::test_support::LoopbackServer;

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
  const std::vector<std::string> more = {"--concurrency",
                                         "4",
                                         "--num-prompts",
                                         "40",
                                         "--max-tokens",
                                         "5",
                                         "--conversations",
                                         "8",
                                         "--turns",
                                         "3",
                                         "--system-prompt-words",
                                         "50",
                                         "--warmup-requests",
                                         "4",
                                         "--goodput",
                                         "ttft:10000",
                                         "--metric-percentiles",
                                         "50,99",
                                         "--label",
                                         "t",
                                         "--result-file",
                                         dir_.file("result.json"),
                                         "--metrics-url",
                                         fleet_->replica_urls()[0] + "/metrics",
                                         "--metrics-url",
                                         fleet_->replica_urls()[1] + "/metrics"};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.out.find("============ Serving Benchmark Result ============"), std::string::npos);
  EXPECT_NE(r.out.find("Successful requests:                     40"), std::string::npos) << r.out;
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
  // Recorded as `kvsweep run` records a cell: the host and version filled in too.
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(experiment->host, host);
  EXPECT_FALSE(experiment->kvsweep_version.empty());
  const auto cells = store.cells(experiment->id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(store.request_count(cells[0].id), 44);  // 4 warm-up + 40 measured
}

TEST_F(LoadCommand, OpenLoopRecordsTheSchedule) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {"--request-rate", "200",         "--max-concurrency", "8",
                                         "--num-prompts",  "30",          "--max-tokens",      "3",
                                         "--endpoint",     "completions", "--no-save"};
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

TEST_F(LoadCommand, ExportOfALoadRunKeepsItsPercentilesRateAndPeaks) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {"--request-rate",       "200",
                                         "--max-concurrency",    "8",
                                         "--num-prompts",        "30",
                                         "--max-tokens",         "3",
                                         "--percentile-metrics", "ttft,e2el",
                                         "--metric-percentiles", "50,90",
                                         "--result-file",        dir_.file("result.json")};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  const auto result = nlohmann::json::parse(read_file(dir_.file("result.json")));
  EXPECT_GT(result["max_output_tokens_per_s"].get<double>(), 0.0);
  EXPECT_GE(result["max_concurrent_requests"].get<int>(), 1);
  EXPECT_LE(result["max_concurrent_requests"].get<int>(), 8);  // the cap held

  const auto exported = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "export", "--dir", dir_.file("export")}, 60);
  ASSERT_TRUE(exported.ok()) << exported.err;
  const auto j =
      nlohmann::json::parse(read_file(dir_.file("export/cell-001-kvsweep-c8-r1.vllm.json")));
  for (const char* key : {"p50_ttft_ms", "p90_ttft_ms", "p50_e2el_ms", "p90_e2el_ms"}) {
    EXPECT_EQ(j[key], result[key]) << key;
  }
  EXPECT_FALSE(j.contains("p99_ttft_ms"));
  EXPECT_EQ(j["request_rate"], 200.0);
  EXPECT_EQ(j["max_concurrency"], 8);
  EXPECT_EQ(j["max_output_tokens_per_s"], result["max_output_tokens_per_s"]);
  EXPECT_EQ(j["max_concurrent_requests"], result["max_concurrent_requests"]);
  const auto report = nlohmann::json::parse(
      read_file(dir_.file("export/cell-001-kvsweep-c8-r1.llmd-br-v0.2.1.json")));
  EXPECT_EQ(kvsweep::testing::schema_errors(
                std::string(KVSWEEP_SCHEMA_DIR) + "/br_v0_2_1_json_schema.json",
                KVSWEEP_SCHEMA_VALIDATOR, report),
            std::vector<std::string>{});
  EXPECT_EQ(report["scenario"]["load"]["standardized"]["rate_qps"], 200.0);
}

TEST_F(LoadCommand, ApiKeyComesFromTheEnvironmentAndIsNeverStored) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {
      "--api-key-env", "KVSWEEP_TEST_KEY", "--num-prompts", "3", "--max-tokens", "2", "--no-save"};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60, {{"KVSWEEP_TEST_KEY", "sk-secret-123"}});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(read_file(dir_.file("s.db")).find("sk-secret-123"), std::string::npos);
  EXPECT_EQ(r.out.find("sk-secret-123"), std::string::npos);
  EXPECT_EQ(r.err.find("sk-secret-123"), std::string::npos);

  const auto missing = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", fleet_->router_url(), "--model",
       "tiny", "--api-key-env", "KVSWEEP_UNSET_VARIABLE", "--num-prompts", "1"},
      60);
  EXPECT_EQ(missing.exit_code, 2);  // bad input
  EXPECT_NE(missing.err.find("--api-key-env: environment variable KVSWEEP_UNSET_VARIABLE is not "
                             "set or empty"),
            std::string::npos)
      << missing.err;
}

TEST_F(LoadCommand, ADeadServerStopsAtTheTestRequestNotACrash) {
  const auto r = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", "http://127.0.0.1:1", "--model",
       "tiny", "--num-prompts", "3", "--no-save"},
      60);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kvsweep: error: test request to http://127.0.0.1:1 (model tiny) failed: "
                       "connect: "),
            std::string::npos)
      << r.out << r.err;
}

TEST_F(LoadCommand, NumPromptsLeavesWarmupOut) {
  auto argv = base_argv(dir_.file("s.db"));
  const std::vector<std::string> more = {"--num-prompts",     "12",
                                         "--warmup-requests", "5",
                                         "--max-tokens",      "2",
                                         "--concurrency",     "2",
                                         "--result-file",     dir_.file("result.json")};
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  const auto result = nlohmann::json::parse(read_file(dir_.file("result.json")));
  EXPECT_EQ(result["num_prompts"], 12);  // as asked, as vLLM writes it; not 17
  EXPECT_EQ(result["completed"], 12);

  // `runs` shows the 5 warm-up requests apart from the 12 measured ones.
  const auto runs =
      orchestrator::run_process({KVSWEEP_BINARY, "--db", dir_.file("s.db"), "runs"}, 30);
  ASSERT_TRUE(runs.ok()) << runs.err;
  EXPECT_NE(runs.out.find("requests  warm-up"), std::string::npos) << runs.out;
  EXPECT_NE(runs.out.find("1/1     12        5\n"), std::string::npos) << runs.out;
  const auto cells =
      orchestrator::run_process({KVSWEEP_BINARY, "--db", dir_.file("s.db"), "runs", "1"}, 30);
  ASSERT_TRUE(cells.ok()) << cells.err;
  EXPECT_NE(cells.out.find(" done         12        5 "), std::string::npos) << cells.out;

  // The export of the stored run counts the measured requests only, as the result file does.
  const auto exported = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "export", "-o", dir_.file("export")}, 60);
  ASSERT_TRUE(exported.ok()) << exported.err;
  const auto j =
      nlohmann::json::parse(read_file(dir_.file("export/cell-001-kvsweep-c2-r1.vllm.json")));
  EXPECT_EQ(j["num_prompts"], 12);
  EXPECT_EQ(j["completed"], 12);
}

// A vLLM client command line (vllm bench serve's options) runs unchanged: base URL, backend
// and endpoint path, the random dataset, percentile selection, result dir and file name.
TEST_F(LoadCommand, VllmCommandLineRunsUnchanged) {
  // clang-format off
  const std::vector<std::string> argv = {
      KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load",
      "--backend", "openai-chat", "--base-url", fleet_->router_url(),
      "--endpoint", "/v1/chat/completions", "--model", "tiny",
      "--dataset-name", "random", "--random-input-len", "32", "--random-output-len", "4",
      "--random-range-ratio", "0.25", "--random-prefix-len", "16", "--num-prompts", "20",
      "--max-concurrency", "4", "--ignore-eos", "--seed", "5",
      "--percentile-metrics", "ttft,e2el", "--metric-percentiles", "50",
      "--save-result", "--result-dir", dir_.file("results"), "--result-filename", "r.json"};
  // clang-format on
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.out.find("Successful requests:                     20        \n"
                       "Failed requests:                         0         \n"
                       "Maximum request concurrency:             4         \n"
                       "Benchmark duration (s):"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nPeak concurrent requests:                4.00      \n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("---------------End-to-end Latency----------------\n"
                       "Mean E2EL (ms):"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("TPOT"), std::string::npos) << r.out;  // not a selected metric
  const auto result = nlohmann::json::parse(read_file(dir_.file("results") + "/r.json"));
  EXPECT_EQ(result["completed"], 20);
  EXPECT_EQ(result["max_concurrency"], 4);
  EXPECT_EQ(result["endpoint_type"], "openai-chat");
  // --random-output-len 4 with ratio 0.25: every request asked for 3 to 5 tokens.
  EXPECT_GE(result["total_output_tokens"].get<int>(), 60);
  EXPECT_LE(result["total_output_tokens"].get<int>(), 100);
  EXPECT_TRUE(result.contains("p50_e2el_ms"));
}

TEST_F(LoadCommand, SequentialTurnsWaitForThePreviousTurnAndTheThinkTime) {
  auto argv = base_argv(dir_.file("s.db"));
  // clang-format off
  const std::vector<std::string> more = {
      "--request-rate", "200", "--turns", "sequential", "--think-time", "100ms",
      "--conversations", "3", "--turns-per-conversation", "3", "--num-prompts", "9",
      "--max-tokens", "2", "--system-prompt-words", "20", "--no-save"};
  // clang-format on
  argv.insert(argv.end(), more.begin(), more.end());
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  const auto store = store::Store::open(dir_.file("s.db"));
  const auto rows = store.requests(store.cells(store.latest_experiment()->id)[0].id);
  ASSERT_EQ(rows.size(), 9u);
  std::map<int, const store::RequestRow*> previous;
  for (const auto& row : rows) {
    EXPECT_TRUE(row.ok) << row.error;
    const auto it = previous.find(row.conversation);
    if (it == previous.end()) {
      EXPECT_EQ(row.turn, 0);
    } else if (row.turn == 0) {  // the conversation starts over (a next lap): no think time
      EXPECT_EQ(it->second->turn, 2);
      EXPECT_GE(row.sent_s, it->second->ended_s) << "conversation " << row.conversation;
    } else {
      EXPECT_EQ(row.turn, it->second->turn + 1);
      EXPECT_GE(row.sent_s, it->second->ended_s + 0.1) << "conversation " << row.conversation;
    }
    previous[row.conversation] = &row;
  }
}

TEST_F(LoadCommand, UrlWithV1IsTheSameServer) {
  const auto r = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", fleet_->router_url() + "/v1/",
       "--model", "tiny", "--num-prompts", "3", "--max-tokens", "2", "--no-save"},
      60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.out.find("Successful requests:                     3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Failed requests:                         0 "), std::string::npos) << r.out;
}

// A /metrics URL nothing answers is said as a sweep's cell says it ("warning: scrape: URL: why",
// the same measured phase) and costs the run nothing: every request is measured and stored.
TEST_F(LoadCommand, AMetricsUrlNothingAnswersIsAWarningAndTheRunIsKept) {
  const auto r = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir_.file("s.db"), "load", "--url", fleet_->router_url(), "--model",
       "tiny", "--num-prompts", "6", "--max-tokens", "2", "--no-save", "--metrics-url",
       "http://127.0.0.1:1/metrics"},
      60);
  ASSERT_TRUE(r.ok()) << r.err << r.out;
  EXPECT_NE(r.err.find("warning: scrape: http://127.0.0.1:1/metrics: "), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("Successful requests:                     6"), std::string::npos) << r.out;
  const auto store = store::Store::open(dir_.file("s.db"));
  const auto experiment = store.latest_experiment();
  ASSERT_TRUE(experiment.has_value());
  EXPECT_EQ(experiment->status, "done");
  const auto cells = store.cells(experiment->id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(store.requests(cells[0].id).size(), 6u);
}

// A scripted OpenAI server on loopback for the failure paths the fleet never takes. The test
// request (its own prompt) is always answered; measured requests get `measured(n, ...)`.
class ScriptedServer {
 public:
  using Script = std::function<void(int n, httplib::Response&, const std::atomic<bool>& closing)>;

  explicit ScriptedServer(Script measured)
      : measured_(std::move(measured)),
        server_([this](httplib::Server& server, const std::atomic<bool>& closing) {
          server.Post("/v1/chat/completions", [this, &closing](const httplib::Request& request,
                                                               httplib::Response& response) {
            if (request.body.find(driver::kTestRequestPrompt) != std::string::npos) {
              response.set_content(driver::test_support::sse_content("ok") +
                                       driver::test_support::sse_usage(12, 1, 0) +
                                       driver::test_support::kSseDone,
                                   "text/event-stream");
              return;
            }
            int n = 0;
            {
              std::lock_guard<std::mutex> lock(mutex_);
              n = measured_seen_++;
            }
            measured_(n, response, closing);
          });
          server.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
            response.set_content(metrics_text(), "text/plain");
          });
        }) {}

  std::string base_url() const { return server_.base_url(); }
  int measured_seen() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return measured_seen_;
  }
  // The KV-cache gauge /metrics serves: 0.25 per measured request in flight.
  void add_in_flight(int delta) {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_ += delta;
  }
  // Whether /metrics was read while a measured request was in flight.
  bool scraped_under_load() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return scraped_under_load_;
  }

 private:
  std::string metrics_text() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (in_flight_ > 0) scraped_under_load_ = true;
    return "vllm:kv_cache_usage_perc{model_name=\"m\"} " + std::to_string(0.25 * in_flight_) + "\n";
  }

  Script measured_;
  mutable std::mutex mutex_;
  int measured_seen_ = 0;
  int in_flight_ = 0;
  bool scraped_under_load_ = false;
  LoopbackServer server_;  // last: stopped before the members its handlers use go away
};

std::vector<std::string> load_argv(const std::string& db, const std::string& url) {
  return {KVSWEEP_BINARY, "--db", db, "load", "--url", url, "--model", "m"};
}

// The number on the console block's line `label`, e.g. "Benchmark duration (s):".
double figure(const std::string& out, const std::string& label) {
  const auto at = out.find(label);
  if (at == std::string::npos) return -1;
  return std::stod(out.substr(at + label.size()));
}

// A role chunk, then nothing until the server closes: a request that never gets a token.
void hang(httplib::Response& response, const std::atomic<bool>& closing) {
  driver::test_support::stream_steps(
      response, {{0, driver::test_support::sse_role()}, {60000, driver::test_support::kSseDone}},
      closing);
}

TEST(LoadCommandFailures, DurationCountsFailedRequestsUntilTheyEnded) {
  ScriptedServer server([](int, httplib::Response& r, const std::atomic<bool>& c) { hang(r, c); });
  testing::TempDir dir;
  auto argv = load_argv(dir.file("s.db"), server.base_url());
  for (const char* arg : {"--num-prompts", "2", "--timeout", "1s", "--no-save"})
    argv.push_back(arg);
  const auto r = orchestrator::run_process(argv, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // nothing succeeded
  // Two requests one after the other, each ending at its 1 s timeout: 2 s, not 1 s (the
  // second one's send) or 0.
  EXPECT_GE(figure(r.out, "Benchmark duration (s):"), 2.0) << r.out;
  const auto store = store::Store::open(dir.file("s.db"));
  const auto rows = store.requests(store.cells(store.latest_experiment()->id).at(0).id);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.error_kind, "timeout");
    EXPECT_GE(row.ended_s - row.sent_s, 1.0 - 1e-6);
  }
}

// kvsweep started in the background, so the test can signal it, as Kubernetes or Ctrl-C would.
class BackgroundKvsweep {
 public:
  BackgroundKvsweep(const std::vector<std::string>& argv, const std::string& out_path) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_addopen(&actions, 2, (out_path + ".err").c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  ~BackgroundKvsweep() {
    if (pid_ > 0) {  // a failed test must not leave it running
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  void signal(int sig) const { ::kill(pid_, sig); }
  // The exit status, or -1 when it has not exited within `seconds`.
  int wait(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

TEST(LoadCommandFailures, SigtermKeepsTheWindowAndTheStatusOfCancelledRequests) {
  ScriptedServer server([](int, httplib::Response& r, const std::atomic<bool>& c) { hang(r, c); });
  testing::TempDir dir;
  auto argv = load_argv(dir.file("s.db"), server.base_url());
  for (const char* arg : {"--num-prompts", "2", "--concurrency", "2", "--no-save"}) {
    argv.push_back(arg);
  }
  BackgroundKvsweep kvsweep(argv, dir.file("out"));
  ASSERT_TRUE(kvsweep.started());
  // Both measured requests are in flight (answered 200, no token yet); then a second passes.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (server.measured_seen() < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(server.measured_seen(), 2) << read_file(dir.file("out.err"));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  kvsweep.signal(SIGTERM);
  EXPECT_EQ(kvsweep.wait(30), 130) << read_file(dir.file("out.err"));

  const std::string out = read_file(dir.file("out"));
  EXPECT_GE(figure(out, "Benchmark duration (s):"), 1.0) << out;  // not 0.00
  const auto store = store::Store::open(dir.file("s.db"));
  const auto rows = store.requests(store.cells(store.latest_experiment()->id).at(0).id);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.error_kind, "cancelled");
    EXPECT_EQ(row.http_status, 200);  // what the server had answered before the stop
    EXPECT_GE(row.ended_s - row.sent_s, 1.0);
  }
}

TEST(LoadCommandFailures, WrongModelStopsAtTheTestRequestWithTheServersAnswer) {
  std::atomic<int> answered{0};
  LoopbackServer server([&answered](httplib::Server& s, const std::atomic<bool>&) {
    s.Post("/v1/chat/completions", [&answered](const httplib::Request&, httplib::Response& r) {
      ++answered;
      r.status = 404;
      r.set_content(R"({"object":"error","message":"The model `wrong-model` does not exist.",)"
                    R"("type":"NotFoundError","param":null,"code":404})",
                    "application/json");
    });
  });
  testing::TempDir dir;
  const auto r = orchestrator::run_process(
      {KVSWEEP_BINARY, "--db", dir.file("s.db"), "load", "--url", server.base_url(), "--model",
       "wrong-model", "--num-prompts", "50", "--result-file", dir.file("r.json")},
      60);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kvsweep: error: test request to " + server.base_url() +
                       " (model wrong-model) failed: http_status: HTTP 404: The model "
                       "`wrong-model` does not exist."),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("Serving Benchmark Result"), std::string::npos) << r.out;  // no zeros
  EXPECT_EQ(answered, 1);  // stopped after the test request
  EXPECT_FALSE(std::ifstream(dir.file("r.json")).good());
}

// `ulimit -n 1024` (the hard limit too, set in the child before exec) and --max-concurrency
// 2000: refused before anything is sent, the test request included, with the numbers.
TEST(LoadCommandFailures, DescriptorLimitTooLowRefusesBeforeTheTestRequest) {
  std::atomic<int> answered{0};
  LoopbackServer server([&answered](httplib::Server& s, const std::atomic<bool>&) {
    s.Post("/v1/chat/completions",
           [&answered](const httplib::Request&, httplib::Response&) { ++answered; });
  });
  testing::TempDir dir;
  const std::vector<std::string> args = {KVSWEEP_BINARY,
                                         "--db",
                                         dir.file("s.db"),
                                         "load",
                                         "--url",
                                         server.base_url(),
                                         "--model",
                                         "m",
                                         "--request-rate",
                                         "100",
                                         "--max-concurrency",
                                         "2000",
                                         "--num-prompts",
                                         "5000",
                                         "--no-save"};
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string err_path = dir.file("err.txt");
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit limit{1024, 1024};
    ::setrlimit(RLIMIT_NOFILE, &limit);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  for (int waited_ms = 0; ::waitpid(pid, &status, WNOHANG) == 0; waited_ms += 10) {
    if (waited_ms > 30000) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL() << "kvsweep load did not stop by itself";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string err = read_file(err_path);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << err;  // a usage error: the options cannot run here
  EXPECT_NE(err.find("kvsweep: error: descriptor limit: this run may hold 2000 connections at "
                     "once (max_concurrency 2000)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("may open only 1024 (RLIMIT_NOFILE; hard limit 1024). Nothing was sent."),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("`ulimit -n "), std::string::npos) << err;
  EXPECT_EQ(answered, 0);  // not even the test request
}

TEST(LoadCommandFailures, SummaryPrintsTheFirstReasonOfEachKind) {
  ScriptedServer server([](int n, httplib::Response& r, const std::atomic<bool>&) {
    if (n == 0) {
      r.set_content(driver::test_support::sse_content("x") +
                        driver::test_support::sse_usage(10, 1, 0) + driver::test_support::kSseDone,
                    "text/event-stream");
    } else if (n == 1) {
      r.status = 429;
      r.set_content(R"({"error":{"message":"slow down"}})", "application/json");
    } else {
      r.status = 503;
      r.set_content(R"({"error":{"message":"overloaded: queue full"}})", "application/json");
    }
  });
  testing::TempDir dir;
  auto argv = load_argv(dir.file("s.db"), server.base_url());
  for (const char* arg : {"--num-prompts", "4", "--result-file", "r.json"}) argv.push_back(arg);
  argv.back() = dir.file("r.json");
  const auto r = orchestrator::run_process(argv, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("---------------------Failures---------------------\n"
                       "http_status:                             2         \n"
                       "  first: HTTP 503: overloaded: queue full\n"
                       "rate_limited:                            1         \n"
                       "  first: HTTP 429: slow down\n"),
            std::string::npos)
      << r.out;
  const auto result = nlohmann::json::parse(read_file(dir.file("r.json")));
  EXPECT_EQ(result["first_failure_by_kind"]["rate_limited"]["http_status"], 429);
}

TEST(LoadCommandFailures, NoUsageFromTheServerSaysUnknownAndEstimated) {
  ScriptedServer server([](int, httplib::Response& r, const std::atomic<bool>&) {
    r.set_content(driver::test_support::sse_content("a") + driver::test_support::sse_content("b") +
                      driver::test_support::kSseDone,
                  "text/event-stream");
  });
  testing::TempDir dir;
  auto argv = load_argv(dir.file("s.db"), server.base_url());
  for (const char* arg : {"--num-prompts", "3", "--result-file", "r.json"}) argv.push_back(arg);
  argv.back() = dir.file("r.json");
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_NE(r.out.find("Total input tokens:                      unknown"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Total generated tokens:                  6 (estimated)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Total token throughput (tok/s):          unknown"), std::string::npos)
      << r.out;
  const auto result = nlohmann::json::parse(read_file(dir.file("r.json")));
  EXPECT_TRUE(result["total_input_tokens"].is_null());
  EXPECT_TRUE(result["total_token_throughput"].is_null());
  EXPECT_EQ(result["output_tokens_estimated"], true);
  const auto store = store::Store::open(dir.file("s.db"));
  for (const auto& row : store.requests(store.cells(store.latest_experiment()->id).at(0).id)) {
    EXPECT_EQ(row.prompt_tokens, -1);  // stored as unknown, not 0
  }
}

TEST(LoadCommandFailures, KvCacheUsageIsScrapedWhileAShortRunIsUnderLoad) {
  // The measured request holds its KV cache (in flight) until /metrics was read under load,
  // or 10 s: the run is far shorter than the 5 s default scrape interval only when the
  // scrape came as soon as the server answered.
  ScriptedServer* self = nullptr;
  ScriptedServer server([&self](int, httplib::Response& r, const std::atomic<bool>& closing) {
    self->add_in_flight(1);
    r.set_chunked_content_provider("text/event-stream", [&self, &closing](std::size_t,
                                                                          httplib::DataSink& sink) {
      const std::string role = driver::test_support::sse_role();
      sink.write(role.data(), role.size());
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!self->scraped_under_load() && !closing && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      self->add_in_flight(-1);
      const std::string rest = driver::test_support::sse_content("x") +
                               driver::test_support::sse_usage(10, 1, 0) +
                               driver::test_support::kSseDone;
      sink.write(rest.data(), rest.size());
      sink.done();
      return true;
    });
  });
  self = &server;
  testing::TempDir dir;
  auto argv = load_argv(dir.file("s.db"), server.base_url());
  for (const char* arg : {"--num-prompts", "1", "--metrics-url", "", "--result-file", ""}) {
    argv.push_back(arg);
  }
  argv[argv.size() - 3] = server.base_url() + "/metrics";
  argv.back() = dir.file("r.json");
  const auto r = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_TRUE(server.scraped_under_load());
  const auto result = nlohmann::json::parse(read_file(dir.file("r.json")));
  ASSERT_FALSE(result["kv_cache_usage_max"].is_null()) << result.dump();
  EXPECT_DOUBLE_EQ(result["kv_cache_usage_max"].get<double>(), 0.25);

  // Without scrapes during the run (--metrics-interval 0) the usage is unknown, not 0. (The
  // server no longer holds the request: it was scraped under load once already.)
  argv.push_back("--metrics-interval");
  argv.push_back("0");
  const auto quiet = orchestrator::run_process(argv, 60);
  ASSERT_TRUE(quiet.ok()) << quiet.err;
  EXPECT_TRUE(nlohmann::json::parse(read_file(dir.file("r.json")))["kv_cache_usage_max"].is_null());
}

}  // namespace
}  // namespace kvsweep
