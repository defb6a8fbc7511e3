// Tests predict/virtual_load.cc: the driver's load shapes on the virtual fleet, with timings
// worked out by hand from the step-time model.
#include "predict/virtual_load.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>

#include "predict/fleet_samples.h"
#include "predict/virtual_records.h"
#include "sim/engine/chat_template.h"
#include "sim/engine/tokenizer.h"

namespace kvsweep::predict {
namespace {

// Every step costs 1 ms + 10 us per prefill token + 100 us per decode token.
sim::TimingProfile tiny_load_profile() {
  sim::TimingProfile p;
  p.name = "tiny";
  p.base_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_token_us = 100;
  p.max_num_seqs = 64;
  p.max_num_batched_tokens = 4096;
  p.num_gpu_blocks = 1024;
  p.block_size = 16;
  p.max_model_len = 4096;
  return p;
}

VirtualFleetOptions fleet_options(int replicas, const std::string& strategy = "round-robin") {
  VirtualFleetOptions o;
  o.replicas = replicas;
  o.profile = tiny_load_profile();
  o.model = "m";
  o.seed = 7;
  o.strategy = strategy;
  return o;
}

// One conversation per user message list, no system prompt.
driver::Workload workload(const std::vector<std::vector<std::string>>& conversations) {
  driver::Workload w;
  for (const auto& turns : conversations) {
    driver::Conversation c;
    for (const auto& text : turns) {
      c.user.push_back(text);
      c.assistant.push_back("ok");
    }
    w.conversations.push_back(c);
  }
  return w;
}

driver::LoadOptions closed_loop(int users, std::int64_t requests, int max_tokens) {
  driver::LoadOptions o;
  o.base_url = "predict://fleet";
  o.model = "m";
  o.concurrency = users;
  o.num_requests = requests;
  o.max_tokens = max_tokens;
  return o;
}

// The prompt tokens the replica sees for a one-message chat.
int chat_tokens(const std::string& user) {
  std::string text;
  sim::append_chat_message(&text, "user", user);
  sim::append_assistant_header(&text);
  return static_cast<int>(sim::tokenize(text).size());
}

const std::string kQuestion(200, 'q');  // 224 characters with the template: 56 tokens

TEST(VirtualLoad, OneRequestsTimingsFollowTheStepModel) {
  VirtualFleet fleet(fleet_options(1));
  const auto result =
      run_virtual_load(fleet, closed_loop(1, 1, 4), workload({{kQuestion}}), {}, {});
  ASSERT_EQ(result.load.records.size(), 1u);
  const driver::RequestRecord& r = result.load.records[0];
  const int prompt = chat_tokens(kQuestion);
  ASSERT_EQ(prompt, 56);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.replica, "0");
  EXPECT_EQ(r.prompt_tokens, prompt);
  EXPECT_EQ(r.cached_tokens, 0);
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_FALSE(r.tokens_estimated);
  // Prefill step: 1000 + 10 * 56 us; then three decode steps of 1100 us.
  EXPECT_DOUBLE_EQ(r.sent_s, 0);
  EXPECT_NEAR(r.ttft_ms, 1.56, 1e-9);
  EXPECT_NEAR(r.e2e_ms, 1.56 + 3 * 1.1, 1e-9);
  EXPECT_NEAR(r.tpot_ms, 1.1, 1e-9);
  ASSERT_EQ(r.itl_ms.size(), 3u);
  for (double gap : r.itl_ms) EXPECT_NEAR(gap, 1.1, 1e-9);
  EXPECT_NEAR(r.ended_s, r.last_token_s, 1e-12);
  EXPECT_NEAR(fleet.now_s(), 4.86e-3, 1e-12);
}

// Late in a long sweep the clock is large, and a gap taken as a difference of seconds carries
// the subtraction's noise in its last digits; stored, every gap is whole microseconds.
TEST(VirtualLoad, InterTokenGapsAreStoredToTheMicrosecond) {
  VirtualFleet fleet(fleet_options(1));
  fleet.advance_to(12345.678901);
  const auto result =
      run_virtual_load(fleet, closed_loop(1, 1, 6), workload({{kQuestion}}), {}, {});
  ASSERT_EQ(result.load.records.size(), 1u);
  ASSERT_EQ(result.load.records[0].itl_ms.size(), 5u);
  for (double gap : result.load.records[0].itl_ms) {
    EXPECT_EQ(gap, 1.1);
    EXPECT_EQ(nlohmann::json(gap).dump(), "1.1");
  }
}

TEST(VirtualLoad, ARepeatedPromptHitsTheCacheOnItsNextSend) {
  VirtualFleet fleet(fleet_options(1));
  const auto result =
      run_virtual_load(fleet, closed_loop(1, 2, 1), workload({{kQuestion}}), {}, {});
  ASSERT_EQ(result.load.records.size(), 2u);
  const auto& second = result.load.records[1];
  // 56 tokens: 3 full blocks; vLLM recomputes at least the last token, so 48 are cached.
  EXPECT_EQ(second.cached_tokens, 48);
  EXPECT_NEAR(second.ttft_ms, 1.0 + 0.01 * 8, 1e-9);
  // The closed loop sends the next request as the previous one ends.
  EXPECT_NEAR(second.sent_s, result.load.records[0].ended_s, 1e-12);
}

TEST(VirtualLoad, NetworkLatencyDelaysTheRequestAndEveryByteOfTheAnswer) {
  VirtualFleet fleet(fleet_options(1));
  VirtualLoadOptions v;
  v.network_latency_s = 0.005;
  const auto result = run_virtual_load(fleet, closed_loop(1, 2, 4), workload({{kQuestion}}), v, {});
  const auto& first = result.load.records[0];
  EXPECT_NEAR(first.ttft_ms, 1.56 + 10, 1e-9);
  EXPECT_NEAR(first.e2e_ms, 1.56 + 3.3 + 10, 1e-9);
  EXPECT_NEAR(first.tpot_ms, 1.1, 1e-9);
  EXPECT_NEAR(result.load.records[1].sent_s, first.ended_s, 1e-12);
}

TEST(VirtualLoad, ConcurrentRequestsShareSteps) {
  VirtualFleet fleet(fleet_options(1));
  // Two users start at once and the client sends both at the same instant: both prompts are
  // prefilled in one step of 1000 + 10 * 112 us.
  VirtualLoadOptions v;
  v.client_send_cost_s = 0;
  const auto result = run_virtual_load(fleet, closed_loop(2, 2, 2),
                                       workload({{kQuestion}, {std::string(200, 'z')}}), v, {});
  ASSERT_EQ(result.load.records.size(), 2u);
  for (const auto& r : result.load.records) {
    EXPECT_NEAR(r.ttft_ms, 2.12, 1e-9);
    EXPECT_NEAR(r.e2e_ms, 2.12 + 1.2, 1e-9);  // one decode step for both: 1000 + 2 * 100 us
  }
}

// As a real client: the second of two requests due at once leaves the client's send cost
// later, finds the replica's step for the first already running, and waits for the next one.
TEST(VirtualLoad, TheClientSendsOneRequestAtATime) {
  VirtualFleet fleet(fleet_options(1));
  VirtualLoadOptions v;
  v.client_send_cost_s = 20e-6;
  const auto result = run_virtual_load(fleet, closed_loop(2, 2, 2),
                                       workload({{kQuestion}, {std::string(200, 'z')}}), v, {});
  ASSERT_EQ(result.load.records.size(), 2u);
  const driver::RequestRecord& first = result.load.records[0];
  const driver::RequestRecord& second = result.load.records[1];
  EXPECT_DOUBLE_EQ(first.sent_s, 0);
  EXPECT_NEAR(second.sent_s, 20e-6, 1e-12);
  EXPECT_NEAR(first.ttft_ms, 1.56, 1e-9);  // its prefill step alone: 1000 + 10 * 56 us
  // The second's prefill starts when the first's step ends (1.56 ms), with the first's decode.
  EXPECT_GT(second.ttft_ms, first.ttft_ms + 1.0);
}

TEST(VirtualLoad, PrefixHashKeepsAConversationOnOneReplicaAndItsTurnsHit) {
  VirtualFleet fleet(fleet_options(4, "prefix-hash"));
  std::vector<std::vector<std::string>> conversations;
  for (int c = 0; c < 8; ++c) {
    conversations.push_back({"conversation " + std::to_string(c) + " " + std::string(300, 'a'),
                             std::string(100, 'b'), std::string(100, 'c')});
  }
  // One user: every replica is idle at each pick, so the bounded load never moves a request
  // off its conversation's ring position.
  const auto result =
      run_virtual_load(fleet, closed_loop(1, 24, 2), workload(conversations), {}, {});
  std::map<int, std::string> replica_of;
  for (const auto& r : result.load.records) {
    ASSERT_TRUE(r.ok);
    auto [it, fresh] = replica_of.emplace(r.conversation, r.replica);
    EXPECT_EQ(it->second, r.replica) << "conversation " << r.conversation;
    if (r.turn > 0) {
      EXPECT_GT(r.cached_tokens, 0) << "turn " << r.turn;
    }
  }
}

TEST(VirtualLoad, OpenLoopCapWaitsAndTheWaitIsScheduleLag) {
  VirtualFleet fleet(fleet_options(1));
  driver::LoadOptions o = closed_loop(0, 3, 4);
  o.request_rate = std::numeric_limits<double>::infinity();  // all due at 0
  o.max_concurrency = 1;
  const auto result = run_virtual_load(fleet, o, workload({{kQuestion}}), {}, {});
  ASSERT_EQ(result.load.records.size(), 3u);
  EXPECT_DOUBLE_EQ(result.load.records[0].schedule_lag_ms, 0);
  EXPECT_NEAR(result.load.records[1].schedule_lag_ms, result.load.records[0].ended_s * 1000, 1e-9);
  EXPECT_GT(result.load.records[2].schedule_lag_ms, result.load.records[1].schedule_lag_ms);
}

// A wake-up planned at epoch + t and read back as (epoch + t) - epoch can come out a hair
// before t when the epoch is large; the source then had nothing due, the wake-up was not
// re-armed and the run stopped with arrivals unsent. Every epoch must send every arrival.
TEST(VirtualLoad, AnOpenLoopRunAtAnyEpochSendsEveryArrival) {
  for (const double epoch : {0.0, 0.1, 12345.678901, 987654.321, 3.3e7}) {
    VirtualFleet fleet(fleet_options(2));
    fleet.advance_to(epoch);
    driver::LoadOptions o = closed_loop(0, 200, 2);
    o.request_rate = 37.3;
    o.seed = 11;
    const auto result =
        run_virtual_load(fleet, o, workload({{kQuestion}, {"other question"}}), {}, {});
    ASSERT_EQ(result.load.records.size(), 200u) << "epoch " << epoch;
    for (const auto& r : result.load.records) {
      EXPECT_TRUE(r.ok) << "epoch " << epoch << " request " << r.index << ": " << r.error;
      EXPECT_GE(r.sent_s, 0) << "epoch " << epoch << " request " << r.index;
    }
  }
}

TEST(VirtualLoad, ATimeoutFailsTheRequestWithWhatArrivedAndFreesItsReplica) {
  VirtualFleet fleet(fleet_options(1));
  driver::LoadOptions o = closed_loop(1, 1, 100);
  o.request_timeout_s = 0.005;  // prefill 1.56 ms, then 1.1 ms per token: 4 tokens in time
  const auto result = run_virtual_load(fleet, o, workload({{kQuestion}}), {}, {});
  ASSERT_EQ(result.load.records.size(), 1u);
  const auto& r = result.load.records[0];
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_kind, driver::kErrorTimeout);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_TRUE(r.tokens_estimated);
  EXPECT_EQ(r.prompt_tokens, -1);
  EXPECT_NEAR(r.ended_s, 0.005, 1e-12);
  EXPECT_EQ(fleet.router().in_flight()[0], 0);
  EXPECT_TRUE(fleet.replica(0).idle());
  // The step running at the deadline was run out; the next run starts after it.
  EXPECT_GE(fleet.now_s(), 0.005);
}

TEST(VirtualLoad, APromptLongerThanTheModelIsA400) {
  VirtualFleetOptions options = fleet_options(1);
  options.profile.max_model_len = 40;
  VirtualFleet fleet(options);
  const auto result =
      run_virtual_load(fleet, closed_loop(1, 1, 4), workload({{kQuestion}}), {}, {});
  const auto& r = result.load.records[0];
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.http_status, 400);
  EXPECT_EQ(r.error_kind, driver::kErrorHttpStatus);
  EXPECT_EQ(r.error,
            "HTTP 400: This model's maximum context length is 40 tokens. However, you requested "
            "60 tokens (56 in the messages, 4 in the completion). Please reduce the length of the "
            "messages or completion.");
}

TEST(VirtualLoad, NotStreamingTheWholeAnswerArrivesAtOnce) {
  VirtualFleet fleet(fleet_options(1));
  driver::LoadOptions o = closed_loop(1, 1, 4);
  o.stream = false;
  const auto result = run_virtual_load(fleet, o, workload({{kQuestion}}), {}, {});
  const auto& r = result.load.records[0];
  EXPECT_TRUE(r.ok);
  EXPECT_NEAR(r.ttft_ms, r.e2e_ms, 1e-12);
  EXPECT_NEAR(r.e2e_ms, 1.56 + 3.3, 1e-9);
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_TRUE(r.itl_ms.empty());
}

TEST(VirtualLoad, SamplesBeforeDuringAndAfterOnTheRunsEpoch) {
  VirtualFleet fleet(fleet_options(2));
  VirtualLoadOptions v;
  v.sample_interval_s = 0.002;
  const auto result =
      run_virtual_load(fleet, closed_loop(2, 8, 4), workload({{kQuestion}, {"other"}}), v, {});
  double queries_after = 0;
  int during = 0;
  double last_during_t = -1;
  for (const auto& s : result.samples) {
    if (s.phase == "before") {
      EXPECT_EQ(s.t_s, 0);
    }
    if (s.phase == "during" && s.name == "vllm:num_requests_running") {
      ++during;
      EXPECT_GT(s.t_s, last_during_t - 1e-12);
      last_during_t = s.t_s;
    }
    if (s.phase == "after" && s.name == "vllm:prefix_cache_queries_total") queries_after += s.value;
  }
  EXPECT_GT(during, 2 * 3);  // two replicas, a scrape every 2 ms of a run of about 10 ms
  double prompts = 0;
  for (const auto& r : result.load.records) prompts += r.prompt_tokens;
  EXPECT_EQ(queries_after, prompts);
}

TEST(VirtualLoad, ASecondRunStartsWhereTheFirstEndedWithItsOwnEpoch) {
  VirtualFleet fleet(fleet_options(1));
  const auto first = run_virtual_load(fleet, closed_loop(1, 1, 4), workload({{kQuestion}}), {}, {});
  const double end = fleet.now_s();
  const auto second =
      run_virtual_load(fleet, closed_loop(1, 1, 4), workload({{kQuestion}}), {}, {});
  EXPECT_DOUBLE_EQ(second.load.epoch_wall_s, kVirtualEpochS + end);
  EXPECT_DOUBLE_EQ(second.load.records[0].sent_s, 0);
  EXPECT_EQ(second.load.records[0].cached_tokens, 48);  // the fleet kept its cache
}

TEST(VirtualLoad, TheStopFlagCancelsWhatIsInFlight) {
  VirtualFleet fleet(fleet_options(1));
  std::atomic<bool> stop{true};
  driver::LoadOptions o = closed_loop(4, 100000, 64);
  o.stop = &stop;
  const auto result = run_virtual_load(fleet, o, workload({{kQuestion}}), {}, {});
  EXPECT_TRUE(result.load.interrupted);
  ASSERT_FALSE(result.load.records.empty());
  EXPECT_LT(result.load.records.size(), 100000u);
  EXPECT_EQ(result.load.records.back().error_kind, driver::kErrorCancelled);
  EXPECT_EQ(fleet.router().in_flight()[0], 0);
}

TEST(VirtualLoad, TheSameInputsGiveTheSameRecords) {
  auto once = [] {
    VirtualFleet fleet(fleet_options(3, "random"));
    driver::LoadOptions o = closed_loop(0, 200, 8);
    o.request_rate = 500;
    std::vector<std::vector<std::string>> conversations;
    for (int c = 0; c < 20; ++c) {
      conversations.push_back({"c" + std::to_string(c) + std::string(100, 'x'), "more", "again"});
    }
    return run_virtual_load(fleet, o, workload(conversations), {}, {});
  };
  const auto a = once();
  const auto b = once();
  ASSERT_EQ(a.load.records.size(), b.load.records.size());
  for (std::size_t i = 0; i < a.load.records.size(); ++i) {
    EXPECT_EQ(a.load.records[i].replica, b.load.records[i].replica);
    EXPECT_EQ(a.load.records[i].ttft_ms, b.load.records[i].ttft_ms);
    EXPECT_EQ(a.load.records[i].itl_ms, b.load.records[i].itl_ms);
    EXPECT_EQ(a.load.records[i].cached_tokens, b.load.records[i].cached_tokens);
  }
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    EXPECT_EQ(a.samples[i].value, b.samples[i].value);
  }
}

}  // namespace
}  // namespace kvsweep::predict
