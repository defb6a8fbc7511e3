// Tests for sim/proxy.cc and sim/http/http_upstream.cc: the router before a Fleet's replicas over
// HTTP.
#include "sim/proxy.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/engine/tokenizer.h"
#include "sim/fleet.h"
#include "sim/http/openai_api.h"
#include "tests/sim/fleet_client.h"
#include "tests/support/plain_vllm_server.h"

namespace kvsweep::sim {
namespace {

using nlohmann::json;
using testing::metric_sum;
using testing::sse_data;

// Two simulated replicas serve as the "real" servers; the proxy never sees their router.
FleetOptions upstream_fleet() {
  FleetOptions options;
  options.replicas = 2;
  options.strategy = "round-robin";
  options.seed = 5;
  return options;
}

ProxyOptions proxy_over(const Fleet& fleet, std::string strategy) {
  ProxyOptions options;
  options.upstreams = fleet.replica_urls();
  options.strategy = std::move(strategy);
  options.port = 0;
  return options;
}

json chat_turns(const std::vector<std::pair<std::string, std::string>>& turns, int max_tokens,
                bool stream) {
  json messages = json::array({json{{"role", "system"}, {"content", "You are terse."}}});
  for (const auto& [role, content] : turns)
    messages.push_back({{"role", role}, {"content", content}});
  json body{{"model", "sim-model"},
            {"messages", messages},
            {"max_tokens", max_tokens},
            {"stream", stream}};
  if (stream) body["stream_options"] = json{{"include_usage", true}};
  return body;
}

httplib::Result proxy_post(const std::string& url, const std::string& path, const json& body) {
  httplib::Client client(url);
  client.set_read_timeout(20);
  return client.Post(path, body.dump(), "application/json");
}

// The upstream replica that answered, from the header the sim's replicas put on every reply.
std::string replica_of(const httplib::Result& res) {
  return res ? res->get_header_value("x-kvsweep-replica") : "no reply";
}

// A liveness bound, not a timing assertion: true once `name` sums to `value` on `url`.
bool wait_metric(const std::string& url, const std::string& name, double value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    if (metric_sum(url, name) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::string long_text(const std::string& seed) {
  std::string text;
  for (int i = 0; i < 30; ++i)
    text += seed + " sentence " + std::to_string(i) + " of a long prompt. ";
  return text;
}

TEST(Proxy, ConstructorNamesTheBadField) {
  ProxyOptions options;
  EXPECT_THROW(Proxy{options}, std::invalid_argument);  // no upstreams
  options.upstreams = {"https://127.0.0.1:1"};
  EXPECT_THROW(Proxy{options}, std::invalid_argument);  // https is not supported
  options.upstreams = {"http://127.0.0.1:1"};
  options.strategy = "prefix_hash";
  try {
    Proxy proxy(options);
    ADD_FAILURE() << "accepted an unknown strategy";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("strategy:", 0), 0u) << e.what();
  }
}

TEST(Proxy, StreamingChatPassesThroughByteForByte) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  auto res = proxy_post(proxy.url(), "/v1/chat/completions",
                        chat_turns({{"user", "Tell me about caches."}}, 5, true));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "0");

  // Rebuild the whole body from the replica's own formatters: any byte the proxy added, lost
  // or reordered makes the two differ.
  const auto events = sse_data(res->body);
  ASSERT_EQ(events.size(), 1u + 5u + 1u + 1u) << res->body;
  const json first = json::parse(events[0]);
  const CompletionId id{first.at("id"), first.at("created"), "sim-model"};
  std::string expected = sse_role_chunk(id);
  for (int i = 0; i < 5; ++i) {
    const std::string piece = json::parse(events[1 + i])["choices"][0]["delta"]["content"];
    expected += sse_content_chunk(id, piece, i == 4 ? "length" : "");
  }
  const int prompt_tokens = static_cast<int>(
      tokenize(render_prompt({{"system", "You are terse."}, {"user", "Tell me about caches."}}))
          .size());
  expected += sse_usage_chunk(id, Usage{prompt_tokens, 5, 0});
  expected += kSseDone;
  EXPECT_EQ(res->body, expected);
}

TEST(Proxy, StreamingCompletionPassesThroughByteForByte) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  const json body{{"model", "sim-model"},
                  {"prompt", "Once upon a time"},
                  {"max_tokens", 3},
                  {"stream", true},
                  {"stream_options", {{"include_usage", true}}}};
  auto res = proxy_post(proxy.url(), "/v1/completions", body);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  const auto events = sse_data(res->body);
  ASSERT_EQ(events.size(), 3u + 1u + 1u) << res->body;  // no role chunk on completions
  const json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "text_completion");
  const CompletionId id{first.at("id"), first.at("created"), "sim-model"};
  std::string expected;
  for (int i = 0; i < 3; ++i) {
    const std::string piece = json::parse(events[i])["choices"][0]["text"];
    expected +=
        sse_token_chunk(ApiKind::kCompletion, id, 0, piece, i == 2 ? "length" : "", nullptr);
  }
  const int prompt_tokens = static_cast<int>(tokenize("Once upon a time").size());
  expected += sse_usage_chunk(ApiKind::kCompletion, id, Usage{prompt_tokens, 3, 0});
  expected += kSseDone;
  EXPECT_EQ(res->body, expected);
}

TEST(Proxy, WholeRepliesKeepTheUpstreamsBodyAndHeaders) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  auto res =
      proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hello"}}, 4, false));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("x-kvsweep-replica"), "0");
  const json reply = json::parse(res->body);
  EXPECT_EQ(reply["object"], "chat.completion");
  EXPECT_EQ(reply["usage"]["completion_tokens"], 4);
  // Errors from the upstream (here its 404 for an unknown model) come back unchanged.
  json wrong = chat_turns({{"user", "hello"}}, 4, false);
  wrong["model"] = "gpt-9";
  res = proxy_post(proxy.url(), "/v1/chat/completions", wrong);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["message"], "The model `gpt-9` does not exist.");
}

TEST(Proxy, RoundRobinAlternatesUpstreams) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  std::vector<std::string> replicas;
  for (int i = 0; i < 4; ++i) {
    replicas.push_back(replica_of(proxy_post(proxy.url(), "/v1/chat/completions",
                                             chat_turns({{"user", "same question"}}, 2, true))));
  }
  EXPECT_EQ(replicas, (std::vector<std::string>{"0", "1", "0", "1"}));
  const std::string metrics = testing::metrics_text(proxy.url());
  EXPECT_NE(
      metrics.find("kvsweep_router_decisions_total{replica=\"0\",strategy=\"round-robin\"} 2\n"),
      std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find("kvsweep_router_decisions_total{replica=\"1\",strategy=\"round-robin\"} 2\n"),
      std::string::npos)
      << metrics;
  EXPECT_EQ(metric_sum(proxy.url(), "kvsweep_router_decision_seconds_count"), 4);
}

// Real servers are configured by their command line: the proxy cannot switch their flags.
TEST(Proxy, AdminEngineIsRefusedForRealUpstreams) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  httplib::Client client(proxy.url());
  auto res = client.Get("/admin/engine");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(json::parse(res->body)["enable_prefix_caching"].is_null());
  res = client.Post("/admin/engine", R"({"enable_prefix_caching":false})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["param"], "enable_prefix_caching");
}

TEST(Proxy, PrefixHashKeepsAConversationOnOneUpstream) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "prefix-hash"));
  proxy.start();
  std::vector<std::string> first_replicas;
  for (int c = 0; c < 8; ++c) {
    const std::string opening = "Conversation " + std::to_string(c) + ": plan a trip to Lisbon.";
    std::vector<std::pair<std::string, std::string>> turns{{"user", opening}};
    std::string first;
    for (int turn = 0; turn < 3; ++turn) {
      auto res = proxy_post(proxy.url(), "/v1/chat/completions", chat_turns(turns, 3, false));
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 200) << res->body;
      const std::string replica = replica_of(res);
      if (turn == 0) first = replica;
      EXPECT_EQ(replica, first) << "conversation " << c << " turn " << turn;
      turns.emplace_back("assistant", json::parse(res->body)["choices"][0]["message"]["content"]);
      turns.emplace_back("user", "and then what? " + std::to_string(turn));
    }
    first_replicas.push_back(first);
  }
  // The key hashes spread conversations over both upstreams (fixed keys, so deterministic).
  EXPECT_NE(std::find(first_replicas.begin(), first_replicas.end(), "0"), first_replicas.end());
  EXPECT_NE(std::find(first_replicas.begin(), first_replicas.end(), "1"), first_replicas.end());
}

TEST(Proxy, KvAwareSendsARepeatedPrefixBackWhereItWasRouted) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  // Round-robin first, to place prompt A on upstream 0 and prompt B on upstream 1; the
  // approximate index records every routed request whatever the strategy.
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  const json a = chat_turns({{"user", long_text("Alpha")}}, 2, false);
  const json b = chat_turns({{"user", long_text("Bravo")}}, 2, false);
  ASSERT_EQ(replica_of(proxy_post(proxy.url(), "/v1/chat/completions", a)), "0");
  ASSERT_EQ(replica_of(proxy_post(proxy.url(), "/v1/chat/completions", b)), "1");

  httplib::Client admin(proxy.url());
  auto res = admin.Post("/admin/strategy", R"({"strategy":"kv-aware"})", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  // With nothing in flight and no overlap, kv-aware ties go to upstream 0, so B landing on 1
  // can only come from the index.
  EXPECT_EQ(replica_of(proxy_post(proxy.url(), "/v1/chat/completions", b)), "1");
  EXPECT_EQ(replica_of(proxy_post(proxy.url(), "/v1/chat/completions", a)), "0");
  const json c = chat_turns({{"user", long_text("Charlie")}}, 2, false);
  EXPECT_EQ(replica_of(proxy_post(proxy.url(), "/v1/chat/completions", c)), "0");  // new: the tie
  EXPECT_GT(metric_sum(proxy.url(), "kvsweep_router_predicted_overlap_blocks_sum"), 0);
}

// A refused connect sent nothing: the request goes to the other upstream, once (issue 27 item
// 7). With both down, the client gets an OpenAI-shaped 502.
TEST(Proxy, AnUpstreamDownIsSkippedOnceThenBothDownGiveAnOpenAiShaped502) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  // Probes off: this test is about what the client sees before the upstream is taken out.
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.health.probe_interval = std::chrono::milliseconds(0);
  Proxy proxy(options);
  proxy.start();
  // Replica 1 closes its port: the proxy's connections to it are refused.
  httplib::Client fleet_admin(fleet.router_url());
  auto down = fleet_admin.Post("/admin/faults", R"({"replica":1,"down":true})", "application/json");
  ASSERT_TRUE(down);
  ASSERT_EQ(down->status, 200) << down->body;

  for (bool stream : {false, true}) {
    auto ok =
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, stream));
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << ok->body;
    EXPECT_EQ(replica_of(ok), "0");
    auto skipped =
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, stream));
    ASSERT_TRUE(skipped);
    EXPECT_EQ(skipped->status, 200) << skipped->body;
    EXPECT_EQ(replica_of(skipped), "0");  // round-robin's turn was 1's, which refused
  }
  // Round-robin's cursor moves on each pick, the second pick of a refused request too: after
  // the first, every request's turn is upstream 1's (requests 2, 3 and 4 are refused once each).
  EXPECT_EQ(metric_sum(proxy.url(), "kvsweep_router_unavailable_total"), 3);
  down = fleet_admin.Post("/admin/faults", R"({"replica":0,"down":true})", "application/json");
  ASSERT_TRUE(down);
  ASSERT_EQ(down->status, 200) << down->body;
  for (bool stream : {false, true}) {
    auto bad =
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, stream));
    ASSERT_TRUE(bad) << httplib::to_string(bad.error());
    EXPECT_EQ(bad->status, 502);
    EXPECT_EQ(bad->get_header_value("Content-Type"), "application/json");
    const json error = json::parse(bad->body).at("error");
    EXPECT_EQ(error["type"], "BadGateway");
    EXPECT_EQ(error["code"], 502);
    EXPECT_TRUE(error["param"].is_null());
    // The upstream it could not reach, by address.
    EXPECT_NE(error["message"].get<std::string>().find("127.0.0.1:"), std::string::npos)
        << error["message"];
  }
  EXPECT_TRUE(wait_metric(proxy.url(), "kvsweep_router_in_flight", 0));
  httplib::Client client(proxy.url());
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(Proxy, ClientDisconnectMidStreamEndsTheUpstreamRequest) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "least-load"));
  proxy.start();
  {
    httplib::Client client(proxy.url());
    httplib::Request request;
    request.method = "POST";
    request.path = "/v1/chat/completions";
    request.body = chat_turns({{"user", "stream a lot please"}}, 5000, true).dump();
    request.set_header("Content-Type", "application/json");
    std::string received;
    request.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      received.append(data, n);
      return received.find("\"content\":\" ") == std::string::npos;  // stop at the first token
    };
    bool saw_in_flight = false;
    request.response_handler = [&](const httplib::Response&) {
      saw_in_flight = metric_sum(proxy.url(), "kvsweep_router_in_flight") == 1;
      return true;
    };
    EXPECT_FALSE(client.send(request));  // cancelled by us
    EXPECT_TRUE(saw_in_flight);
    EXPECT_NE(received.find("\"role\":\"assistant\""), std::string::npos);
    client.stop();
  }
  EXPECT_TRUE(wait_metric(proxy.url(), "kvsweep_router_in_flight", 0));
  // The proxy closed its upstream connection, so the replica dropped the request too.
  const std::string replica = fleet.replica_urls().at(0);
  EXPECT_TRUE(wait_metric(replica, "vllm:num_requests_running", 0));
  EXPECT_EQ(metric_sum(replica, "vllm:request_success_total"), 0);

  auto res = proxy_post(proxy.url(), "/v1/chat/completions",
                        chat_turns({{"user", "still there?"}}, 3, false));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// vLLM answers POST /reset_prefix_cache 404 unless VLLM_SERVER_DEV_MODE=1: the proxy must not
// say 200 for a reset that did not happen, and must name who refused.
TEST(Proxy, ResetPrefixCacheFailsNamingEachUpstreamThatRefused) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  kvsweep::testing::PlainVllmServer plain("sim-model");
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.upstreams = {fleet.replica_urls()[0], plain.url()};
  Proxy proxy(options);
  proxy.start();
  httplib::Client client(proxy.url());
  auto res = client.Post("/reset_prefix_cache", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502) << res->body;
  EXPECT_EQ(plain.resets(), 1);  // forwarded, and answered before the proxy answered
  const json error = json::parse(res->body).at("error");
  EXPECT_EQ(error["type"], "BadGateway");
  const std::string message = error["message"];
  EXPECT_EQ(message,
            "reset_prefix_cache: 1 of 2 upstreams failed: upstream 0 (" + fleet.replica_urls()[0] +
                "): HTTP 200; upstream 1 (" + plain.url() +
                "): HTTP 404: {\"detail\":\"Not Found\"} (vLLM serves this route only with "
                "VLLM_SERVER_DEV_MODE=1)");
}

TEST(Proxy, ResetPrefixCacheAnswers200OnlyOnceEveryUpstreamHasReset) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  Proxy proxy(proxy_over(fleet, "round-robin"));
  proxy.start();
  // Fill both upstreams' caches with the same long prompt.
  const json body = chat_turns({{"user", long_text("Cached")}}, 2, false);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(proxy_post(proxy.url(), "/v1/chat/completions", body));
  for (const std::string& url : fleet.replica_urls()) {
    EXPECT_GT(metric_sum(url, "vllm:prefix_cache_hits_total"), 0) << url;
  }
  httplib::Client client(proxy.url());
  auto res = client.Post("/reset_prefix_cache", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  // Straight after the 200, neither upstream holds the prompt any more.
  for (const std::string& url : fleet.replica_urls()) {
    auto direct = proxy_post(url, "/v1/chat/completions", body);
    ASSERT_TRUE(direct);
    EXPECT_EQ(json::parse(direct->body)["usage"]["prompt_tokens_details"]["cached_tokens"], 0)
        << url << " " << direct->body;
  }
  // An upstream that cannot be reached is named too.
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.upstreams.push_back("http://127.0.0.1:1");
  Proxy with_dead(options);
  with_dead.start();
  res = httplib::Client(with_dead.url()).Post("/reset_prefix_cache", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502);
  EXPECT_NE(json::parse(res->body)["error"]["message"].get<std::string>().find(
                "upstream 2 (http://127.0.0.1:1): HTTP 502: upstream 127.0.0.1:1: "),
            std::string::npos)
      << res->body;
}

// /v1/models lists what the upstreams serve, merged in upstream order, each id once.
TEST(Proxy, ModelsAreTheUpstreamsMergedLists) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  kvsweep::testing::PlainVllmServer plain("llama-3.1-8b");
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.upstreams = {fleet.replica_urls()[0], plain.url(), fleet.replica_urls()[1]};
  Proxy proxy(options);
  proxy.start();
  auto res = httplib::Client(proxy.url()).Get("/v1/models");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json models = json::parse(res->body);
  EXPECT_EQ(models["object"], "list");
  std::vector<std::string> ids;
  for (const auto& entry : models["data"]) ids.push_back(entry["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"sim-model", "llama-3.1-8b"}));
  EXPECT_EQ(models["data"][1]["owned_by"], "vllm");  // each entry as its upstream wrote it
}

// Each reply names the upstream that served it by its index in the upstream list, whatever
// the upstream itself says (here two one-replica fleets, both of which call themselves 0).
TEST(Proxy, EveryReplyNamesTheUpstreamThatServedIt) {
  FleetOptions one = upstream_fleet();
  one.replicas = 1;
  Fleet first(one);
  Fleet second(one);
  first.start();
  second.start();
  ProxyOptions options = proxy_over(first, "round-robin");
  options.upstreams = {first.replica_urls()[0], second.replica_urls()[0]};
  Proxy proxy(options);
  proxy.start();
  std::vector<std::string> replicas;
  for (bool stream : {false, true, false, true}) {
    replicas.push_back(replica_of(
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, stream))));
  }
  EXPECT_EQ(replicas, (std::vector<std::string>{"0", "1", "0", "1"}));
  // A reply the proxy makes itself (the upstream is unreachable) names it as well.
  options.upstreams = {"http://127.0.0.1:1"};
  options.health.probe_interval = std::chrono::milliseconds(0);
  Proxy dead(options);
  dead.start();
  auto res = proxy_post(dead.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, false));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 502);
  EXPECT_EQ(replica_of(res), "0");
}

// GET /admin/health as JSON.
json health_of(const std::string& url) {
  auto res = httplib::Client(url).Get("/admin/health");
  return res && res->status == 200 ? json::parse(res->body) : json();
}

// Refused connects alone take an upstream out (probes are an hour apart here), deterministically.
TEST(Proxy, AnUpstreamThatRefusesConnectionsIsTakenOutAfterThreeFailures) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.upstreams = {fleet.replica_urls()[0], "http://127.0.0.1:1"};
  options.health.probe_interval = std::chrono::hours(1);
  Proxy proxy(options);
  proxy.start();
  std::vector<int> statuses;
  std::vector<std::string> replicas;
  for (int i = 0; i < 10; ++i) {
    auto res =
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, false));
    ASSERT_TRUE(res);
    statuses.push_back(res->status);
    replicas.push_back(replica_of(res));
  }
  // Round-robin: upstream 1 refuses its 3 turns, each sent on to upstream 0 (issue 27 item 7),
  // then it is out and every request goes to upstream 0 directly.
  EXPECT_EQ(statuses, std::vector<int>(10, 200));
  EXPECT_EQ(replicas, std::vector<std::string>(10, "0"));
  EXPECT_EQ(metric_sum(proxy.url(), "kvsweep_router_unavailable_total"), 3);
  EXPECT_EQ(metric_sum(proxy.url(), "kvsweep_router_healthy_replicas"), 1);
  const std::string metrics = testing::metrics_text(proxy.url());
  EXPECT_NE(metrics.find("kvsweep_router_replica_healthy{replica=\"1\"} 0\n"), std::string::npos);
  EXPECT_NE(metrics.find("kvsweep_router_ejections_total{replica=\"1\"} 1\n"), std::string::npos);
  const json health = health_of(proxy.url());
  ASSERT_EQ(health["events"].size(), 1u) << health.dump();
  EXPECT_EQ(health["events"][0]["replica"], 1);
  EXPECT_EQ(health["events"][0]["event"], "ejected");
  EXPECT_EQ(health["events"][0]["name"], "upstream 1 (http://127.0.0.1:1)");
  EXPECT_EQ(health["events"][0]["reason"],
            "3 consecutive failures; last: connect: Connection refused");
  EXPECT_EQ(health["replicas"][1]["healthy"], false);
  EXPECT_EQ(health["replicas"][1]["address"], "http://127.0.0.1:1");
  // ?since= is a cursor: nothing after the first event.
  auto later = httplib::Client(proxy.url()).Get("/admin/health?since=1");
  ASSERT_TRUE(later);
  EXPECT_TRUE(json::parse(later->body)["events"].empty());
}

// A liveness bound, not a timing assertion: true once /metrics shows `value` healthy replicas.
bool wait_healthy(const std::string& url, double value) {
  return wait_metric(url, "kvsweep_router_healthy_replicas", value);
}

TEST(Proxy, ProbesTakeADeadUpstreamOutAndPutItBackWhenItAnswers) {
  Fleet fleet(upstream_fleet());
  fleet.start();
  ProxyOptions options = proxy_over(fleet, "round-robin");
  options.health.probe_interval = std::chrono::milliseconds(50);
  Proxy proxy(options);
  proxy.start();
  httplib::Client fleet_admin(fleet.router_url());
  ASSERT_TRUE(
      fleet_admin.Post("/admin/faults", R"({"replica":1,"down":true})", "application/json"));
  ASSERT_TRUE(wait_healthy(proxy.url(), 1));
  for (int i = 0; i < 4; ++i) {
    auto res =
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, false));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(replica_of(res), "0");
  }
  ASSERT_TRUE(
      fleet_admin.Post("/admin/faults", R"({"replica":1,"down":false})", "application/json"));
  ASSERT_TRUE(wait_healthy(proxy.url(), 2));
  std::set<std::string> served;
  for (int i = 0; i < 4; ++i) {
    served.insert(replica_of(
        proxy_post(proxy.url(), "/v1/chat/completions", chat_turns({{"user", "hi"}}, 2, false))));
  }
  EXPECT_EQ(served, (std::set<std::string>{"0", "1"}));
  const json events = health_of(proxy.url())["events"];
  ASSERT_EQ(events.size(), 2u) << events.dump();
  EXPECT_EQ(events[0]["event"], "ejected");
  EXPECT_NE(events[0]["reason"].get<std::string>().find("last: /health: HTTP 502: upstream "),
            std::string::npos)
      << events[0]["reason"];
  EXPECT_EQ(events[1]["event"], "readmitted");
  EXPECT_EQ(events[1]["reason"], "/health answered 200");
  EXPECT_EQ(metric_sum(proxy.url(), "kvsweep_router_ejections_total"), 1);
}

}  // namespace
}  // namespace kvsweep::sim
