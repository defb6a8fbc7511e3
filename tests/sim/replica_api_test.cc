// Tests the fleet's HTTP API beyond the basics (sim/http/replica_server.cc, sim/http/generation.cc,
// sim/router/router.cc, sim/router/router_admin.cc): completions, usage options, histograms,
// errors, admin.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/fleet.h"
#include "tests/sim/fleet_client.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;
using testing::metric_sum;
using testing::metrics_text;
using testing::sse_data;

FleetOptions fleet_of(int replicas, std::string strategy) {
  FleetOptions options;
  options.replicas = replicas;
  options.strategy = std::move(strategy);
  options.seed = 11;
  return options;
}

httplib::Result post(const std::string& url, const std::string& path, const json& body,
                     const httplib::Headers& headers = {}) {
  httplib::Client client(url);
  client.set_read_timeout(20);
  return client.Post(path, headers, body.dump(), "application/json");
}

TEST(ReplicaApi, CompletionsNonStreamingWithOneAndSeveralPrompts) {
  Fleet fleet(fleet_of(1, "round-robin"));
  fleet.start();
  auto res = post(fleet.router_url(), "/v1/completions",
                  json{{"model", "sim-model"}, {"prompt", "Once upon a time"}, {"max_tokens", 4}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json reply = json::parse(res->body);
  EXPECT_EQ(reply["object"], "text_completion");
  EXPECT_EQ(reply["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  ASSERT_EQ(reply["choices"].size(), 1u);
  EXPECT_FALSE(reply["choices"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(reply["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(reply["usage"]["completion_tokens"], 4);

  res = post(fleet.router_url(), "/v1/completions",
             json{{"prompt", json::array({"first prompt", "second prompt"})}, {"max_tokens", 3}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  reply = json::parse(res->body);
  ASSERT_EQ(reply["choices"].size(), 2u);
  EXPECT_EQ(reply["choices"][1]["index"], 1);
  EXPECT_EQ(reply["usage"]["completion_tokens"], 6);
}

TEST(ReplicaApi, StreamingCompletionWithContinuousUsage) {
  Fleet fleet(fleet_of(1, "round-robin"));
  fleet.start();
  const json body{{"prompt", "Stream me"},
                  {"max_tokens", 3},
                  {"stream", true},
                  {"stream_options", {{"include_usage", true}, {"continuous_usage_stats", true}}}};
  auto res = post(fleet.router_url(), "/v1/completions", body);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto events = sse_data(res->body);
  ASSERT_EQ(events.size(), 3u + 1u + 1u) << res->body;  // 3 tokens, usage, [DONE]
  for (int i = 0; i < 3; ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["object"], "text_completion");
    EXPECT_EQ(chunk["usage"]["completion_tokens"], i + 1) << i;  // usage on every chunk
    EXPECT_EQ(chunk["choices"][0]["finish_reason"], i == 2 ? json("length") : json(nullptr));
  }
  const json usage = json::parse(events[3]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[4], "[DONE]");
}

TEST(ReplicaApi, WithoutIgnoreEosTheReplyStopsNaturally) {
  Fleet fleet(fleet_of(1, "round-robin"));
  fleet.start();
  const json body{{"messages", json::array({json{{"role", "user"}, {"content", "Hi there"}}})},
                  {"max_tokens", 1000}};
  auto res = post(fleet.router_url(), "/v1/chat/completions", body);
  ASSERT_TRUE(res);
  const json reply = json::parse(res->body);
  EXPECT_EQ(reply["choices"][0]["finish_reason"], "stop");
  const int n = reply["usage"]["completion_tokens"];
  EXPECT_GE(n, 16);
  EXPECT_LE(n, 512);
  // Same prompt, same natural length.
  res = post(fleet.router_url(), "/v1/chat/completions", body);
  EXPECT_EQ(json::parse(res->body)["usage"]["completion_tokens"], n);
}

TEST(ReplicaApi, MetricsCarryVllmLatencyHistograms) {
  Fleet fleet(fleet_of(1, "round-robin"));
  fleet.start();
  for (int i = 0; i < 3; ++i) {
    auto res = post(fleet.router_url(), "/v1/completions",
                    json{{"prompt", "histogram " + std::to_string(i)}, {"max_tokens", 5}});
    ASSERT_TRUE(res);
  }
  const std::string replica = fleet.replica_urls()[0];
  EXPECT_EQ(metric_sum(replica, "vllm:time_to_first_token_seconds_count"), 3);
  EXPECT_EQ(metric_sum(replica, "vllm:inter_token_latency_seconds_count"), 12);
  EXPECT_EQ(metric_sum(replica, "vllm:time_per_output_token_seconds_count"), 12);
  EXPECT_EQ(metric_sum(replica, "vllm:e2e_request_latency_seconds_count"), 3);
  EXPECT_GT(metric_sum(replica, "vllm:e2e_request_latency_seconds_sum"), 0);
  const std::string text = metrics_text(replica);
  EXPECT_NE(text.find("# TYPE vllm:time_to_first_token_seconds histogram"), std::string::npos);
  EXPECT_NE(
      text.find("vllm:e2e_request_latency_seconds_bucket{model_name=\"sim-model\",le=\"+Inf\"} 3"),
      std::string::npos);
}

TEST(ReplicaApi, CompletionErrorsHaveOpenAiShape) {
  Fleet fleet(fleet_of(1, "round-robin"));
  fleet.start();
  httplib::Client client(fleet.router_url());
  auto res = client.Post("/v1/completions", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], 400);
  res = post(fleet.router_url(), "/v1/completions", json{{"max_tokens", 3}});
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["param"], "prompt");
  res = post(fleet.replica_urls()[0], "/v1/completions",
             json{{"prompt", std::string(70000, 'x')}, {"max_tokens", 3}});
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(
      json::parse(res->body)["error"]["message"].get<std::string>().find("maximum context length"),
      std::string::npos);
}

TEST(ReplicaApi, SessionStrategyKeepsASessionOnOneReplica) {
  Fleet fleet(fleet_of(3, "session"));
  fleet.start();
  std::set<std::string> replicas;
  for (int i = 0; i < 6; ++i) {
    auto res = post(fleet.router_url(), "/v1/completions",
                    json{{"prompt", "turn " + std::to_string(i)}, {"max_tokens", 1}},
                    {{"X-Session-ID", "conversation-7"}});
    ASSERT_TRUE(res);
    replicas.insert(res->get_header_value("x-kvsweep-replica"));
  }
  EXPECT_EQ(replicas.size(), 1u);
}

TEST(ReplicaApi, AdminSetsParametersAndRestartClearsCaches) {
  Fleet fleet(fleet_of(2, "kv-aware"));
  fleet.start();
  auto res = post(fleet.router_url(), "/admin/strategy",
                  json{{"overlap_score_weight", 2.5}, {"meanLoadFactor", 150}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json state = json::parse(res->body);
  EXPECT_EQ(state["strategy"], "kv-aware");
  EXPECT_EQ(state["overlap_score_weight"], 2.5);
  EXPECT_EQ(state["meanLoadFactor"], 150);
  res = post(fleet.router_url(), "/admin/strategy", json{{"router_temprature", 1}});
  EXPECT_EQ(res->status, 400);

  const json body{{"prompt", std::string(800, 'a')}, {"max_tokens", 2}};
  ASSERT_TRUE(post(fleet.router_url(), "/v1/completions", body));
  ASSERT_TRUE(post(fleet.router_url(), "/v1/completions", body));
  const double hits = metric_sum(fleet.replica_urls()[0], "vllm:prefix_cache_hits_total") +
                      metric_sum(fleet.replica_urls()[1], "vllm:prefix_cache_hits_total");
  EXPECT_GT(hits, 0);  // kv-aware sent the repeat where its blocks are
  res = post(fleet.router_url(), "/admin/restart", json::object());
  ASSERT_EQ(res->status, 200);
  for (const std::string& url : fleet.replica_urls()) {
    EXPECT_EQ(metric_sum(url, "vllm:prefix_cache_hits_total"), 0);
    EXPECT_EQ(metric_sum(url, "vllm:prefix_cache_queries_total"), 0);
  }
  ASSERT_TRUE(post(fleet.router_url(), "/v1/completions", body));
  double after = 0;
  for (const std::string& url : fleet.replica_urls()) {
    after += metric_sum(url, "vllm:prefix_cache_hits_total");
  }
  EXPECT_EQ(after, 0);  // the caches really are empty after the restart
}

TEST(ReplicaApi, InjectedErrorsLatencyAndDeath) {
  FleetOptions options = fleet_of(2, "round-robin");
  options.faults = {FaultOptions{1.0, 503, 0, 0, 2, false}};
  // Probes off: this test is about what a client sees from a replica that is down.
  options.health.probe_interval = std::chrono::milliseconds(0);
  Fleet fleet(options);
  fleet.start();
  const json body{{"prompt", "fault"}, {"max_tokens", 2}};
  auto res = post(fleet.router_url(), "/v1/completions", body);  // replica 0: always 503
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "ServiceUnavailableError");
  res = post(fleet.router_url(), "/v1/completions", body);  // replica 1: healthy
  EXPECT_EQ(res->status, 200);

  res = post(fleet.router_url(), "/admin/faults", json{{"replica", 1}, {"down", true}});
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["replicas"][1]["down"], true);
  httplib::Client dead(fleet.replica_urls()[1]);
  EXPECT_FALSE(dead.Get("/health"));                        // connection refused
  res = post(fleet.router_url(), "/v1/completions", body);  // round-robin: 0 then 1
  res = post(fleet.router_url(), "/v1/completions", body);
  // 1 refuses: the request goes to 0 once more (nothing was sent), which injects its 503.
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "0");
  EXPECT_EQ(metric_sum(fleet.router_url(), "kvsweep_router_unavailable_total"), 1);

  res = post(fleet.router_url(), "/admin/faults",
             json{{"down", false}, {"error_rate", 0}, {"added_latency_ms", 150}});
  ASSERT_EQ(res->status, 200);
  httplib::Client back(fleet.replica_urls()[1]);
  EXPECT_TRUE(back.Get("/health"));  // back on its old port
  const auto start = std::chrono::steady_clock::now();
  res = post(fleet.replica_urls()[1], "/v1/completions", body);
  EXPECT_EQ(res->status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
}

TEST(ReplicaApi, CutStreamEndsMidWay) {
  FleetOptions options = fleet_of(1, "round-robin");
  options.faults = {FaultOptions{0, 503, 0, 1.0, 2, false}};
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  std::string received;
  auto res = client.Post("/v1/completions",
                         json{{"prompt", "cut"}, {"max_tokens", 10}, {"stream", true}}.dump(),
                         "application/json");
  // The body is truncated: either an error, or a body without [DONE].
  if (res) {
    EXPECT_EQ(res->body.find("[DONE]"), std::string::npos);
  }
  EXPECT_TRUE(!res || res->body.size() < 2000);
  // The fleet is healthy afterwards.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (metric_sum(fleet.router_url(), "kvsweep_router_in_flight") != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(metric_sum(fleet.router_url(), "kvsweep_router_in_flight"), 0);
}

}  // namespace
}  // namespace kvsweep::sim
