// A sweep on kind `endpoints` against a scripted OpenAI server on loopback: what the console
// says per cell, what /metrics scraping catches in a short cell, and how the report names it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "figures/cell_metrics.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "reports/markdown_report.h"
#include "store/store.h"
#include "tests/driver/test_server.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

using driver::test_support::LoopbackServer;

// Per cell (concurrency 1, 3 measured requests): the first holds its KV cache until /metrics
// is read under load (or 3 s, under the 5 s scrape interval), the second is refused with 503,
// the third answers at once. /metrics reports 0.25 KV-cache usage per request in flight.
class ScriptedServer {
 public:
  ScriptedServer()
      : server_([this](httplib::Server& server, const std::atomic<bool>& closing) {
          server.Get("/v1/models", [](const httplib::Request&, httplib::Response& r) {
            r.set_content(R"({"object":"list","data":[{"id":"m","object":"model"}]})",
                          "application/json");
          });
          server.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
            std::lock_guard<std::mutex> lock(mutex_);
            if (in_flight_ > 0) ++scrapes_under_load_;
            r.set_content("vllm:kv_cache_usage_perc{model_name=\"m\"} " +
                              std::to_string(0.25 * in_flight_) + "\n",
                          "text/plain");
          });
          server.Post("/v1/chat/completions", [this, &closing](const httplib::Request& request,
                                                               httplib::Response& r) {
            if (request.body.find("kvsweep readiness probe") != std::string::npos) {
              r.set_content(R"({"choices":[{"index":0,"message":{"content":"ok"}}]})",
                            "application/json");
              return;
            }
            int n = 0;
            {
              std::lock_guard<std::mutex> lock(mutex_);
              n = measured_++;
            }
            if (n % 3 == 1) {
              r.status = 503;
              r.set_content(R"({"error":{"message":"overloaded"}})", "application/json");
            } else if (n % 3 == 2) {
              r.set_content(reply(), "text/event-stream");
            } else {
              hold_until_scraped(r, closing);
            }
          });
        }) {}

  std::string base_url() const { return server_.base_url(); }

 private:
  static std::string reply() {
    return driver::test_support::sse_content("x") + driver::test_support::sse_usage(10, 1, 0) +
           driver::test_support::kSseDone;
  }

  void hold_until_scraped(httplib::Response& r, const std::atomic<bool>& closing) {
    int scrapes_before = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++in_flight_;
      scrapes_before = scrapes_under_load_;
    }
    r.set_chunked_content_provider("text/event-stream", [this, &closing, scrapes_before](
                                                            std::size_t, httplib::DataSink& sink) {
      const std::string role = driver::test_support::sse_role();
      sink.write(role.data(), role.size());
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (!closing && std::chrono::steady_clock::now() < until) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (scrapes_under_load_ > scrapes_before) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --in_flight_;
      }
      const std::string rest = reply();
      sink.write(rest.data(), rest.size());
      sink.done();
      return true;
    });
  }

  std::mutex mutex_;
  int measured_ = 0;
  int in_flight_ = 0;
  int scrapes_under_load_ = 0;
  LoopbackServer server_;  // last: stopped before the members its handlers use go away
};

std::string scenario(const std::string& base_url) {
  // base_url with /v1/ as users paste it: the load must still reach /v1/chat/completions.
  return "name: endpoints-check\n"
         "target:\n"
         "  kind: endpoints\n"
         "  base_url: " +
         base_url +
         "/v1/\n"
         "  metrics: {urls: [" +
         base_url +
         "/metrics]}\n"
         "  readiness: {models: 30s, completion: 30s, poll: 100ms}\n"
         "model: m\n"
         "factors:\n"
         "  concurrency: [1]\n"
         "  repeats: 2\n"
         "load:\n"
         "  dataset: {conversations: 3, turns: 1, system_prompt_words: 5, user_words: 5, "
         "assistant_words: 5}\n"
         "  max_tokens: 2\n"
         "  num_requests: 3\n"
         "  timeout: 30s\n"
         "  cache: as-is\n";
}

std::string read_all(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, file)) text.append(buffer, n);
  return text;
}

TEST(EndpointsSweep, ConsoleScrapesAndReportAgreeOnEveryCell) {
  ScriptedServer server;
  std::vector<orchestrator::ScenarioError> errors;
  const auto spec = orchestrator::parse_scenario(scenario(server.base_url()), "endpoints.yaml",
                                                 &errors, orchestrator::target_kinds());
  ASSERT_TRUE(spec.has_value()) << errors.at(0).text;
  EXPECT_EQ(spec->target.base_url, server.base_url());  // "/v1/" dropped once, here

  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  auto target =
      orchestrator::make_target(*spec, orchestrator::expand_plan(*spec), /*use_sim=*/false);
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome = orchestrator::run_sweep(*spec, orchestrator::expand_plan(*spec), *target,
                                               store, console, orchestrator::RunnerOptions{});
  const std::string text = read_all(log);
  std::fclose(log);
  EXPECT_EQ(outcome.cells_done, 2) << text;

  // The console names each repeat as the report does, and says why requests failed.
  EXPECT_NE(text.find("  cell 1/2 all #1 c=1: 2 ok, 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("  cell 2/2 all #2 c=1: 2 ok, 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("    1 http_status, first: HTTP 503: overloaded\n"), std::string::npos)
      << text;
  const std::string report = reports::render_markdown(store, outcome.experiment_id);
  EXPECT_NE(report.find("| all #1 | 2 | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| all #2 | 2 | 1 |"), std::string::npos) << report;

  // Each cell, far shorter than the 5 s scrape interval, was scraped while under load.
  for (const auto& cell : store.cells(outcome.experiment_id)) {
    const auto metrics =
        figures::compute_cell_metrics(store.requests(cell.id), store.metric_samples(cell.id));
    ASSERT_TRUE(metrics.kv_usage_max.has_value()) << "cell " << cell.ordinal;
    EXPECT_DOUBLE_EQ(*metrics.kv_usage_max, 0.25) << "cell " << cell.ordinal;
  }
}

}  // namespace
}  // namespace kvsweep
