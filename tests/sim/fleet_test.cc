// Whole-fleet tests for sim/fleet.cc over loopback: router, replicas, SSE, metrics, admin.
#include "sim/fleet.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/prometheus_text.h"
#include "sim/engine/tokenizer.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;

FleetOptions small_fleet(std::string strategy = "round-robin") {
  FleetOptions options;
  options.replicas = 2;
  options.profile = "demo";
  options.model = "sim-model";
  options.strategy = std::move(strategy);
  options.seed = 7;
  return options;
}

json chat(const std::string& user, int max_tokens, bool stream) {
  json body{{"model", "sim-model"},
            {"messages", json::array({json{{"role", "system"}, {"content", "You are terse."}},
                                      json{{"role", "user"}, {"content", user}}})},
            {"max_tokens", max_tokens},
            {"stream", stream}};
  if (stream) body["stream_options"] = json{{"include_usage", true}};
  return body;
}

std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t end = body.find("\n\n", start);
    if (end == std::string::npos) {
      events.push_back(body.substr(start));
      break;
    }
    events.push_back(body.substr(start, end + 2 - start));
    start = end + 2;
  }
  return events;
}

json event_json(const std::string& event) {
  return json::parse(event.substr(6));  // after "data: "
}

std::vector<PrometheusSample> scrape(const std::string& url) {
  httplib::Client client(url);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) throw std::runtime_error("scrape failed: " + url);
  return parse_prometheus_text(res->body);
}

double metric(const std::string& url, const std::string& name) {
  return sum_metric(scrape(url), name).value_or(-1);
}

// Polls until the router reports nothing in flight; false after a generous deadline (this is
// a liveness bound, not a timing assertion).
bool wait_router_idle(const Fleet& fleet) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    if (metric(fleet.router_url(), "kvsweep_router_in_flight") == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(Fleet, ConstructorNamesTheBadField) {
  auto expect_field = [](FleetOptions options, const std::string& field) {
    try {
      Fleet fleet(std::move(options));
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind(field + ":", 0), 0u) << e.what();
    }
  };
  FleetOptions bad = small_fleet();
  bad.replicas = 0;
  expect_field(bad, "replicas");
  // Issue 15 item 10: 100000 replicas once said "port: out of range: 0".
  bad = small_fleet();
  bad.replicas = 100000;
  expect_field(bad, "replicas");
  bad = small_fleet();
  bad.replica_base_port = 65535;  // two replicas: 65535 and 65536
  expect_field(bad, "replica_base_port");
  bad = small_fleet();
  bad.profile = "no-such-gpu";
  expect_field(bad, "profile");
  expect_field(small_fleet("prefix_hash"), "strategy");
  bad = small_fleet();
  bad.host = "localhost:80";
  expect_field(bad, "host");
  bad = small_fleet();
  bad.io_threads = 0;
  expect_field(bad, "io_threads");
}

TEST(Fleet, StartThatCannotBindThrowsAndLeavesNothingRunning) {
  FleetOptions options = small_fleet();
  options.host = "192.0.2.1";      // TEST-NET-1: never an address of this machine
  options.admin_token = "unused";  // beyond loopback: required before anything binds
  Fleet fleet(options);
  EXPECT_THROW(fleet.start(), std::runtime_error);
  fleet.stop();  // nothing to stop; must not hang
}

TEST(Fleet, StreamsThroughTheRouterInVllmShape) {
  Fleet fleet(small_fleet());
  fleet.start();
  httplib::Client client(fleet.router_url());
  const json body = chat("Tell me about caches.", 5, true);
  auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_EQ(res->get_header_value("Transfer-Encoding"), "chunked");
  EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "0");

  const auto events = sse_events(res->body);
  ASSERT_EQ(events.size(), 1u + 5u + 1u + 1u) << res->body;
  const json first = event_json(events[0]);
  const CompletionId id{first.at("id"), first.at("created"), "sim-model"};
  EXPECT_EQ(events[0], sse_role_chunk(id));
  for (int i = 0; i < 5; ++i) {
    const json chunk = event_json(events[1 + i]);
    const std::string piece = chunk["choices"][0]["delta"]["content"];
    EXPECT_FALSE(piece.empty());
    EXPECT_EQ(events[1 + i], sse_content_chunk(id, piece, i == 4 ? "length" : "")) << i;
  }
  const int prompt_tokens = static_cast<int>(
      tokenize(render_prompt({{"system", "You are terse."}, {"user", "Tell me about caches."}}))
          .size());
  EXPECT_EQ(events[6], sse_usage_chunk(id, Usage{prompt_tokens, 5, 0}));
  EXPECT_EQ(events[7], "data: [DONE]\n\n");

  // Round-robin: the next request goes to the other replica.
  res = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "1");
}

TEST(Fleet, RepeatedRequestIsServedFromThePrefixCache) {
  Fleet fleet(small_fleet("prefix-hash"));
  fleet.start();
  httplib::Client client(fleet.router_url());
  std::string user;
  for (int i = 0; i < 40; ++i) user += "This sentence repeats to make a long shared prompt. ";
  const json body = chat(user, 4, false);

  auto first = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  auto second = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(second);
  ASSERT_EQ(second->status, 200) << second->body;
  EXPECT_EQ(first->get_header_value("x-kvsweep-replica"),
            second->get_header_value("x-kvsweep-replica"));

  const json reply = json::parse(second->body);
  EXPECT_EQ(reply["object"], "chat.completion");
  EXPECT_EQ(reply["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(reply["choices"][0]["message"]["content"].get<std::string>().empty());
  EXPECT_EQ(reply["usage"]["completion_tokens"], 4);
  EXPECT_EQ(json::parse(first->body)["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_GT(reply["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);

  double hits = 0, queries = 0, finished = 0;
  for (const std::string& url : fleet.replica_urls()) {
    const auto samples = scrape(url);
    hits += sum_metric(samples, "vllm:prefix_cache_hits_total").value_or(0);
    queries += sum_metric(samples, "vllm:prefix_cache_queries_total").value_or(0);
    finished += sum_metric(samples, "vllm:request_success_total").value_or(0);
  }
  EXPECT_GT(hits, 0);
  EXPECT_GT(queries, hits);
  EXPECT_EQ(finished, 2);
  const auto router = scrape(fleet.router_url());
  EXPECT_EQ(sum_metric(router, "kvsweep_router_decisions_total"), 2);
  for (const auto& sample : router) {
    if (sample.name == "kvsweep_router_decisions_total") {
      EXPECT_EQ(sample.labels.at("strategy"), "prefix-hash");
    }
  }
}

TEST(Fleet, AdminStrategySwitchesAndRejectsUnknownNames) {
  Fleet fleet(small_fleet());
  fleet.start();
  httplib::Client client(fleet.router_url());
  auto res = client.Get("/admin/strategy");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["strategy"], "round-robin");

  res = client.Post("/admin/strategy", R"({"strategy":"prefix-hash"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["strategy"], "prefix-hash");
  EXPECT_EQ(json::parse(client.Get("/admin/strategy")->body)["strategy"], "prefix-hash");

  res = client.Post("/admin/strategy", R"({"strategy":"prefix_hash"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  const json error = json::parse(res->body)["error"];
  EXPECT_EQ(error["type"], "BadRequestError");
  EXPECT_EQ(error["code"], 400);
  EXPECT_EQ(error["message"],
            "unknown strategy \"prefix_hash\"; did you mean \"prefix-hash\"?; valid: random, "
            "round-robin, least-load, prefix-hash, kv-aware, session, epp");
  EXPECT_EQ(json::parse(client.Get("/admin/strategy")->body)["strategy"], "prefix-hash");

  res = client.Post("/admin/strategy", "{", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

// Sends the same long chat request through the router; returns (cached tokens, replica).
std::pair<int, std::string> repeat_chat(const Fleet& fleet) {
  std::string user;
  for (int i = 0; i < 40; ++i) user += "This sentence repeats to make a long shared prompt. ";
  httplib::Client client(fleet.router_url());
  auto res = client.Post("/v1/chat/completions", chat(user, 2, false).dump(), "application/json");
  if (!res || res->status != 200) throw std::runtime_error("chat failed");
  return {json::parse(res->body)["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(),
          res->get_header_value("x-kvsweep-replica")};
}

double replicas_metric(const Fleet& fleet, const std::string& name) {
  double total = 0;
  for (const std::string& url : fleet.replica_urls()) total += metric(url, name);
  return total;
}

// Seed experiment 004: one server with --enable-prefix-caching against one without. Off, the
// replicas never hit and (as vLLM) do not count prefix-cache queries, so the hit rate is n/a.
TEST(Fleet, AdminEngineSwitchesPrefixCachingOnEveryReplica) {
  Fleet fleet(small_fleet("prefix-hash"));  // identical requests land on one replica
  fleet.start();
  httplib::Client client(fleet.router_url());
  auto res = client.Get("/admin/engine");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), json({{"enable_prefix_caching", true}}));

  res = client.Post("/admin/engine", R"({"enable_prefix_caching":false})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), json({{"enable_prefix_caching", false}}));
  EXPECT_EQ(json::parse(client.Get("/admin/engine")->body)["enable_prefix_caching"], false);
  const auto first = repeat_chat(fleet);
  const auto second = repeat_chat(fleet);
  EXPECT_EQ(first.second, second.second);
  EXPECT_EQ(first.first, 0);
  EXPECT_EQ(second.first, 0);
  EXPECT_EQ(replicas_metric(fleet, "vllm:prefix_cache_queries_total"), 0);
  EXPECT_EQ(replicas_metric(fleet, "vllm:prefix_cache_hits_total"), 0);
  EXPECT_EQ(replicas_metric(fleet, "vllm:request_success_total"), 2);

  res = client.Post("/admin/engine", R"({"enable_prefix_caching":true})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), json({{"enable_prefix_caching", true}}));
  EXPECT_EQ(repeat_chat(fleet).first, 0);  // a switched server starts cold
  EXPECT_GT(repeat_chat(fleet).first, 0);
  EXPECT_GT(replicas_metric(fleet, "vllm:prefix_cache_queries_total"), 0);
  EXPECT_GT(replicas_metric(fleet, "vllm:prefix_cache_hits_total"), 0);
}

TEST(Fleet, AdminEngineRejectsBadBodiesAndChangesNothing) {
  Fleet fleet(small_fleet());
  fleet.start();
  httplib::Client client(fleet.router_url());
  auto res = client.Post("/admin/engine", R"({"enable_prefix_cache":false})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json error = json::parse(res->body)["error"];
  EXPECT_EQ(error["type"], "BadRequestError");
  EXPECT_EQ(error["message"],
            "enable_prefix_cache: unknown parameter; did you mean \"enable_prefix_caching\"?; "
            "known: enable_prefix_caching");
  res = client.Post("/admin/engine", R"({"enable_prefix_caching":"no"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["message"],
            "enable_prefix_caching: expected true or false");
  for (const char* body : {"{", "[]", "false"}) {
    res = client.Post("/admin/engine", body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body;
  }
  // A mix of a good and a bad key applies neither.
  res =
      client.Post("/admin/engine", R"({"enable_prefix_caching":false,"x":1})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(client.Get("/admin/engine")->body)["enable_prefix_caching"], true);
  // An empty patch changes nothing and answers the state.
  res = client.Post("/admin/engine", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["enable_prefix_caching"], true);
}

TEST(Fleet, PrefixCachingOffFromTheOptionsOverridesTheProfile) {
  FleetOptions options = small_fleet("prefix-hash");
  options.enable_prefix_caching = false;
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  EXPECT_EQ(json::parse(client.Get("/admin/engine")->body)["enable_prefix_caching"], false);
  EXPECT_EQ(repeat_chat(fleet).first, 0);
  EXPECT_EQ(repeat_chat(fleet).first, 0);
  EXPECT_EQ(replicas_metric(fleet, "vllm:prefix_cache_queries_total"), 0);
  // A redeploy keeps the server's flags.
  ASSERT_TRUE(client.Post("/admin/restart", "{}", "application/json"));
  EXPECT_EQ(json::parse(client.Get("/admin/engine")->body)["enable_prefix_caching"], false);
}

TEST(Fleet, BadRequestsGetOpenAiErrors) {
  Fleet fleet(small_fleet());
  fleet.start();
  httplib::Client router(fleet.router_url());
  httplib::Client replica(fleet.replica_urls().at(1));
  for (httplib::Client* client : {&router, &replica}) {
    auto res = client->Post("/v1/chat/completions", "{oops", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400);
    EXPECT_EQ(json::parse(res->body)["error"]["type"], "BadRequestError");

    res = client->Post("/v1/chat/completions", R"({"model":"sim-model"})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400);
    EXPECT_EQ(json::parse(res->body)["error"]["param"], "messages");

    json wrong_model = chat("hi", 2, false);
    wrong_model["model"] = "gpt-9";
    res = client->Post("/v1/chat/completions", wrong_model.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
    EXPECT_EQ(json::parse(res->body)["error"]["message"], "The model `gpt-9` does not exist.");

    res =
        client->Post("/v1/chat/completions", chat("hi", 100000, false).dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400);
    EXPECT_NE(res->body.find("maximum context length is 16384 tokens"), std::string::npos);

    res = client->Get("/v2/nothing");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
    EXPECT_EQ(json::parse(res->body)["error"]["code"], 404);
  }
  EXPECT_TRUE(wait_router_idle(fleet));
}

TEST(Fleet, ModelsHealthAndResetOnRouterAndReplicas) {
  Fleet fleet(small_fleet());
  fleet.start();
  std::vector<std::string> urls = fleet.replica_urls();
  urls.push_back(fleet.router_url());
  for (const std::string& url : urls) {
    httplib::Client client(url);
    auto res = client.Get("/v1/models");
    ASSERT_TRUE(res) << url;
    const json models = json::parse(res->body);
    EXPECT_EQ(models["object"], "list");
    EXPECT_EQ(models["data"][0]["id"], "sim-model");
    EXPECT_EQ(models["data"][0]["object"], "model");
    res = client.Get("/health");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, "");
    res = client.Post("/reset_prefix_cache", "", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
}

// The router and a replica answer the shared paths through one implementation
// (sim/http/server_routes.cc): the same bytes where the answer is the same.
TEST(Fleet, RouterAndReplicaShareOneHttpSurface) {
  Fleet fleet(small_fleet());
  fleet.start();
  httplib::Client router(fleet.router_url());
  httplib::Client replica(fleet.replica_urls().at(0));
  // The fleet's model list is replica 0's entry as replica 0 wrote it.
  auto from_router = router.Get("/v1/models");
  auto from_replica = replica.Get("/v1/models");
  ASSERT_TRUE(from_router && from_replica);
  EXPECT_EQ(from_router->status, 200);
  EXPECT_EQ(from_router->body, from_replica->body);
  EXPECT_EQ(from_router->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(from_replica->get_header_value("Content-Type"), "application/json");
  for (const char* path : {"/v2/nothing", "/admin"}) {
    from_router = router.Get(path);
    from_replica = replica.Get(path);
    ASSERT_TRUE(from_router && from_replica);
    EXPECT_EQ(from_router->status, 404);
    EXPECT_EQ(from_replica->status, 404);
    EXPECT_EQ(from_router->body, from_replica->body);
    EXPECT_EQ(from_router->body, std::string(R"({"error":{"message":"Not Found: GET )") + path +
                                     R"(","type":"NotFoundError","param":null,"code":404}})");
  }
  from_router = router.Get("/metrics");
  from_replica = replica.Get("/metrics");
  ASSERT_TRUE(from_router && from_replica);
  EXPECT_EQ(from_router->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(from_router->get_header_value("Content-Type"),
            from_replica->get_header_value("Content-Type"));
}

// A liveness bound, not a timing assertion: true once the router reports `value` healthy.
bool wait_healthy_replicas(const Fleet& fleet, double value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    if (metric(fleet.router_url(), "kvsweep_router_healthy_replicas") == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(Fleet, AReplicaThatIsDownIsTakenOutOfRoutingAndPutBack) {
  FleetOptions options = small_fleet("round-robin");
  options.health.probe_interval = std::chrono::milliseconds(50);
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  auto res = client.Post("/admin/faults", R"({"replica":1,"down":true})", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  ASSERT_TRUE(wait_healthy_replicas(fleet, 1));
  for (int i = 0; i < 4; ++i) {
    res = client.Post("/v1/chat/completions", chat("hi", 2, false).dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "0");
  }
  EXPECT_EQ(metric(fleet.router_url(), "kvsweep_router_unavailable_total"), 0);
  res = client.Post("/admin/faults", R"({"replica":1,"down":false})", "application/json");
  ASSERT_TRUE(res);
  ASSERT_TRUE(wait_healthy_replicas(fleet, 2));
  std::set<std::string> served;
  for (int i = 0; i < 4; ++i) {
    res = client.Post("/v1/chat/completions", chat("hi", 2, false).dump(), "application/json");
    ASSERT_TRUE(res);
    served.insert(res->get_header_value("x-kvsweep-replica"));
  }
  EXPECT_EQ(served, (std::set<std::string>{"0", "1"}));
  res = client.Get("/admin/health");
  ASSERT_TRUE(res);
  const json events = json::parse(res->body)["events"];
  ASSERT_EQ(events.size(), 2u) << res->body;
  EXPECT_EQ(events[0]["name"], "replica 1");
  EXPECT_EQ(events[0]["event"], "ejected");
  EXPECT_EQ(events[0]["reason"], "3 consecutive failures; last: /health: down");
  EXPECT_EQ(events[1]["event"], "readmitted");
  EXPECT_EQ(metric(fleet.router_url(), "kvsweep_router_ejections_total"), 1);
}

TEST(Fleet, ClientThatDisconnectsMidStreamLeavesTheFleetHealthy) {
  Fleet fleet(small_fleet("least-load"));
  fleet.start();
  {
    httplib::Client client(fleet.router_url());
    httplib::Request request;
    request.method = "POST";
    request.path = "/v1/chat/completions";
    request.body = chat("stream a lot please", 5000, true).dump();
    request.set_header("Content-Type", "application/json");
    std::string received;
    request.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      received.append(data, n);
      return received.find("\"content\":\" ") == std::string::npos;  // stop at the first token
    };
    auto res = client.send(request);
    EXPECT_FALSE(res);  // cancelled by us
    EXPECT_NE(received.find("\"role\":\"assistant\""), std::string::npos);
    client.stop();
  }
  EXPECT_TRUE(wait_router_idle(fleet));
  double running = 0;
  for (const std::string& url : fleet.replica_urls()) {
    running += metric(url, "vllm:num_requests_running") + metric(url, "vllm:num_requests_waiting");
  }
  EXPECT_EQ(running, 0);

  httplib::Client client(fleet.router_url());
  auto res = client.Post("/v1/chat/completions", chat("still there?", 3, false).dump(),
                         "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(Fleet, StopEndsOpenStreams) {
  Fleet fleet(small_fleet());
  fleet.start();
  std::thread streamer([url = fleet.router_url()] {
    httplib::Client client(url);
    auto res =
        client.Post("/v1/chat/completions", chat("long", 16000, true).dump(), "application/json");
    EXPECT_TRUE(!res || res->body.find("[DONE]") == std::string::npos);
  });
  // Wait (bounded) until the stream is open, then stop under it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline &&
         metric(fleet.router_url(), "kvsweep_router_in_flight") < 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fleet.stop();
  fleet.stop();  // idempotent
  streamer.join();
}

}  // namespace
}  // namespace kvsweep::sim
