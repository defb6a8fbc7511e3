// Tests for sim/router/router.cc and router_admin.cc over fake replicas: the seams the router
// uses (serving, replica control), the shared HTTP surface, hashing only when needed.
#include "sim/router/router.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/prometheus_text.h"
#include "sim/http/openai_api.h"
#include "tests/sim/router/fake_replica.h"

namespace kvsweep::sim {
namespace {

using testing::FakeReplica;

// Keeps the bytes of one response; the tests read its status line, headers and body.
class KeepingSink final : public Exchange::Sink {
 public:
  void send(std::string bytes) override { bytes_ += bytes; }
  void complete(bool) override { complete_ = true; }

  bool complete() const { return complete_; }
  int status() const { return std::stoi(bytes_.substr(9, 3)); }  // "HTTP/1.1 404 ..."
  std::string body() const { return bytes_.substr(bytes_.find("\r\n\r\n") + 4); }
  bool has_header(const std::string& line) const {
    return bytes_.find("\r\n" + line + "\r\n") != std::string::npos;
  }

 private:
  std::string bytes_;
  bool complete_ = false;
};

class RouterTest : public ::testing::Test {
 protected:
  // A router over `replicas` fakes; health probes off, so nothing runs unless a test asks.
  // `remote`: the fakes stand for real servers behind the proxy (each has an address).
  Router& make(int replicas, const std::string& strategy, bool controllable = true,
               bool remote = false,
               std::chrono::milliseconds request_timeout = RouterOptions{}.request_timeout) {
    std::vector<RoutedReplica> routed;
    for (int i = 0; i < replicas; ++i) {
      fakes_.push_back(std::make_unique<FakeReplica>("model-" + std::to_string(i), controllable));
      routed.push_back(RoutedReplica{fakes_.back().get(), fakes_.back().get(),
                                     remote ? "http://fake-" + std::to_string(i) : ""});
    }
    RouterOptions options;
    options.strategy = strategy;
    options.health.probe_interval = std::chrono::milliseconds(0);
    options.request_timeout = request_timeout;
    router_ = std::make_unique<Router>(io_, std::move(routed), options);
    return *router_;
  }

  struct Call {
    std::shared_ptr<KeepingSink> sink;
    std::shared_ptr<Exchange> exchange;
  };
  // Hands one request to the router and runs what it queued (fan-out timers).
  Call send(const std::string& method, const std::string& target, std::string body = "") {
    Call call{std::make_shared<KeepingSink>(), nullptr};
    call.exchange = std::make_shared<Exchange>(call.sink, true);
    router_->handle(HttpRequest{method, target, std::move(body), {}}, call.exchange);
    io_.restart();
    io_.poll();
    return call;
  }
  Call chat(const std::string& text) {
    return send("POST", "/v1/chat/completions",
                R"({"messages":[{"role":"user","content":")" + text + R"("}]})");
  }
  double metric(const std::string& name) {
    const Call call = send("GET", "/metrics");
    return sum_metric(parse_prometheus_text(call.sink->body()), name).value_or(-1);
  }
  FakeReplica& fake(int i) { return *fakes_[static_cast<std::size_t>(i)]; }

  boost::asio::io_context io_;
  std::vector<std::unique_ptr<FakeReplica>> fakes_;
  std::unique_ptr<Router> router_;
};

TEST_F(RouterTest, AnUnknownPathOrMethodIsAnOpenAiShaped404) {
  make(1, "round-robin");
  Call call = send("GET", "/v2/nothing?x=1");
  EXPECT_EQ(call.sink->status(), 404);
  EXPECT_EQ(call.sink->body(), R"({"error":{"message":"Not Found: GET /v2/nothing",)"
                               R"("type":"NotFoundError","param":null,"code":404}})");
  call = send("GET", "/v1/chat/completions");
  EXPECT_EQ(call.sink->status(), 404);
  EXPECT_EQ(call.sink->body(), error_body(not_found_error("Not Found: GET /v1/chat/completions")));
  EXPECT_TRUE(fake(0).paths.empty());
}

TEST_F(RouterTest, TheModelListIsTheReplicasEntriesInTheirOwnForm) {
  make(2, "round-robin");
  const Call call = send("GET", "/v1/models");
  EXPECT_EQ(call.sink->status(), 200);
  // Each entry as its replica wrote it, field order included, in the list form a replica uses.
  EXPECT_EQ(call.sink->body(),
            models_list_body({model_entry("model-0", 7), model_entry("model-1", 7)}));
}

TEST_F(RouterTest, RoutesThroughTheServingSeamAndCountsInFlightUntilTheEnd) {
  make(2, "round-robin");
  fake(0).hold = true;
  Call held = chat("hi");
  EXPECT_EQ(fake(0).paths, (std::vector<std::string>{"POST /v1/chat/completions"}));
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{1, 0}));
  Call direct = chat("hi");
  EXPECT_TRUE(direct.sink->complete());
  EXPECT_TRUE(direct.sink->has_header("x-kvsweep-replica: 1"));
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{1, 0}));
  ASSERT_EQ(fake(0).held.size(), 1u);
  fake(0).held[0]->respond(json_response(200, "{}"));
  EXPECT_TRUE(held.sink->has_header("x-kvsweep-replica: 0"));
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{0, 0}));
  EXPECT_EQ(metric("kvsweep_router_decisions_total"), 2);
}

// Issue 27 item 7: nothing of a request was sent to a replica that refuses the connect, so it
// goes to another one, once.
TEST_F(RouterTest, AReplicaKnownDownIsSkippedOnceWithoutBeingServed) {
  make(2, "round-robin");
  fake(0).up = false;
  Call call = chat("hi");
  EXPECT_EQ(call.sink->status(), 200);
  EXPECT_TRUE(call.sink->has_header("x-kvsweep-replica: 1"));
  EXPECT_TRUE(fake(0).paths.empty());
  EXPECT_EQ(fake(1).paths, (std::vector<std::string>{"POST /v1/chat/completions"}));
  EXPECT_EQ(metric("kvsweep_router_unavailable_total"), 1);
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{0, 0}));
  EXPECT_EQ(metric("kvsweep_router_decisions_total"), 1);  // the request went out once

  // Both down: one more try, then a 502 naming both.
  fake(1).up = false;
  call = chat("hi");
  EXPECT_EQ(call.sink->status(), 502);
  EXPECT_NE(call.sink->body().find("are unavailable: connection refused"), std::string::npos)
      << call.sink->body();
  EXPECT_EQ(metric("kvsweep_router_unavailable_total"), 3);
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{0, 0}));
}

TEST_F(RouterTest, AReplicaAloneThatIsDownIsAnswered502) {
  make(1, "round-robin");
  fake(0).up = false;
  const Call call = chat("hi");
  EXPECT_EQ(call.sink->status(), 502);
  EXPECT_NE(call.sink->body().find("replica 0 is unavailable: connection refused"),
            std::string::npos);
  EXPECT_TRUE(fake(0).paths.empty());
}

// Issue 27 item 7: a routed request has a timeout of its own; the replica's load falls with it.
TEST_F(RouterTest, ARoutedRequestThatNeverEndsIsAnswered504AtTheRoutersTimeout) {
  make(2, "round-robin", true, false, std::chrono::milliseconds(20));
  fake(0).hold = true;
  Call held = chat("hi");
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{1, 0}));
  // A liveness bound, not a timing assertion: the timer fires on io_ within it.
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!held.sink->complete() && std::chrono::steady_clock::now() < bound) {
    io_.restart();
    io_.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(held.sink->complete());
  EXPECT_EQ(held.sink->status(), 504);
  EXPECT_NE(held.sink->body().find("no answer within 20 ms (the router's request timeout)"),
            std::string::npos)
      << held.sink->body();
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{0, 0}));
  // The replica's late answer goes nowhere.
  fake(0).held.at(0)->respond(json_response(200, "{}"));
  EXPECT_EQ(router_->in_flight(), (std::vector<int>{0, 0}));
}

// Issue 27 item 7: behind the proxy, /admin/restart resets every upstream's prefix cache and
// answers once all have, as /reset_prefix_cache does (it used to answer before any had).
TEST_F(RouterTest, TheProxysRestartWaitsForEveryUpstream) {
  make(2, "round-robin", /*controllable=*/false, /*remote=*/true);
  Call call = send("POST", "/admin/restart");
  EXPECT_EQ(call.sink->status(), 200);
  EXPECT_EQ(call.sink->body(), R"({"restarted":2})");
  EXPECT_EQ(fake(0).resets, 1);
  EXPECT_EQ(fake(1).resets, 1);
  EXPECT_EQ(fake(0).restarts, 0);  // a real server is not restarted from here
  fake(1).reset_status = 404;
  call = send("POST", "/admin/restart");
  EXPECT_EQ(call.sink->status(), 502);
  EXPECT_NE(call.sink->body().find("restart: reset_prefix_cache: 1 of 2 upstreams failed: "
                                   "upstream 0 (http://fake-0): HTTP 200; upstream 1 "
                                   "(http://fake-1): HTTP 404"),
            std::string::npos)
      << call.sink->body();
}

TEST_F(RouterTest, RestartAndResetReachEveryReplica) {
  make(2, "round-robin");
  Call call = send("POST", "/admin/restart");
  EXPECT_EQ(call.sink->body(), R"({"restarted":2})");
  EXPECT_EQ(fake(0).restarts, 1);
  EXPECT_EQ(fake(1).restarts, 1);
  call = send("POST", "/reset_prefix_cache");
  EXPECT_EQ(call.sink->status(), 200);
  EXPECT_EQ(fake(0).resets, 1);
  EXPECT_EQ(fake(1).resets, 1);
}

TEST_F(RouterTest, SettingsGoThroughTheControlSeam) {
  make(2, "round-robin");
  Call call = send("POST", "/admin/engine", R"({"enable_prefix_caching":false})");
  EXPECT_EQ(call.sink->body(), R"({"enable_prefix_caching":false})");
  EXPECT_FALSE(fake(0).prefix_caching);
  EXPECT_FALSE(fake(1).prefix_caching);
  call = send("POST", "/admin/faults", R"({"replica":1,"error_rate":0.5})");
  EXPECT_EQ(call.sink->status(), 200);
  EXPECT_EQ(fake(0).faults.error_rate, 0);
  EXPECT_EQ(fake(1).faults.error_rate, 0.5);
}

TEST_F(RouterTest, SettingsAReplicaCannotSwitchAreRefusedAndNothingChanges) {
  make(2, "round-robin", /*controllable=*/false);
  Call call = send("POST", "/admin/faults", R"({"error_rate":0.5})");
  EXPECT_EQ(call.sink->status(), 400);
  EXPECT_NE(call.sink->body().find("this backend does not support fault injection"),
            std::string::npos);
  call = send("POST", "/admin/engine", R"({"enable_prefix_caching":false})");
  EXPECT_EQ(call.sink->status(), 400);
  EXPECT_TRUE(fake(0).prefix_caching);
  call = send("GET", "/admin/engine");
  EXPECT_EQ(call.sink->body(), R"({"enable_prefix_caching":null})");
}

TEST_F(RouterTest, OnlyAStrategyThatReadsBlocksHasRequestsHashed) {
  make(2, "round-robin");
  for (int i = 0; i < 3; ++i) chat("the same long question, asked again and again");
  // Nothing hashed: no predicted overlap was observed.
  EXPECT_EQ(metric("kvsweep_router_predicted_overlap_blocks_count"), 0);
  EXPECT_EQ(send("POST", "/admin/strategy", R"({"strategy":"kv-aware"})").sink->status(), 200);
  for (int i = 0; i < 3; ++i) chat("the same long question, asked again and again");
  EXPECT_EQ(metric("kvsweep_router_predicted_overlap_blocks_count"), 3);
}

}  // namespace
}  // namespace kvsweep::sim
