// The shard protocol's files: a plan round-trips whole, a records file proves it arrived whole
// (count and checksum) or says what is missing, and merging puts shards on one clock.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "driver/shard_merge.h"
#include "driver/shard_plan.h"
#include "driver/shard_records.h"

namespace kvsweep::driver {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

ShardResult shard_with(int index, int count, double epoch, std::vector<std::int64_t> indices) {
  ShardResult shard;
  shard.index = index;
  shard.count = count;
  shard.start_at_wall_s = 1000;
  shard.result.epoch_wall_s = epoch;
  shard.result.driver.measured = true;
  shard.result.driver.threads = 1;
  shard.result.driver.cpu_s = 0.5;
  shard.result.driver.send_delay_count = static_cast<std::int64_t>(indices.size());
  shard.result.driver.send_delay_p99_ms = 1.0 + index;
  shard.result.driver.first_ready_s = 0.1;
  shard.result.driver.ready_span_s = 2;
  shard.result.driver.first_sent_s = 0.1;
  shard.result.driver.sent_span_s = 2;
  for (const std::int64_t i : indices) {
    RequestRecord r;
    r.index = i;
    r.prompt_hash = 0xfedcba9876543210ULL + static_cast<std::uint64_t>(i);  // above 2^63
    r.ok = true;
    r.scheduled_s = 0.1 * static_cast<double>(i);
    r.sent_s = r.scheduled_s;
    r.first_token_s = r.sent_s + 0.01;
    r.last_token_s = r.sent_s + 0.02;
    r.ended_s = r.last_token_s;
    r.ttft_ms = 10;
    r.itl_ms = {1.5, 2.25};
    r.error = index == 1 ? "a \"quoted\" reason\nover two lines" : "";
    shard.result.records.push_back(r);
  }
  return shard;
}

TEST(ShardFiles, APlanRoundTripsWithoutTheApiKey) {
  ShardPlan plan;
  plan.options.base_url = "http://127.0.0.1:9";
  plan.options.api_key = "secret-key";
  plan.options.request_rate = std::numeric_limits<double>::infinity();
  plan.options.num_requests = 7;
  plan.options.shard.count = 3;
  plan.options.headers = {{"X-Team", "a"}};
  plan.options.turns = LoadOptions::Turns::kSequential;
  plan.api_key_env = "MY_KEY";
  Conversation c;
  c.system_prompt = "sys";
  c.user = {"u0", "u1"};
  c.assistant = {"a0", "a1"};
  c.max_tokens = {3, 0};
  plan.workload.conversations = {c};
  plan.workload.description = "one";
  const std::string text = shard_plan_json(plan);
  EXPECT_EQ(text.find("secret-key"), std::string::npos);
  const ShardPlan back = parse_shard_plan(text, "plan.json");
  EXPECT_TRUE(std::isinf(back.options.request_rate));
  EXPECT_EQ(back.options.num_requests, 7);
  EXPECT_EQ(back.options.shard.count, 3);
  EXPECT_EQ(back.options.headers, plan.options.headers);
  EXPECT_EQ(back.options.turns, LoadOptions::Turns::kSequential);
  EXPECT_TRUE(back.options.api_key.empty());
  EXPECT_EQ(back.api_key_env, "MY_KEY");
  ASSERT_EQ(back.workload.conversations.size(), 1u);
  EXPECT_EQ(back.workload.conversations[0].user, c.user);
  EXPECT_EQ(back.workload.conversations[0].max_tokens, c.max_tokens);
  EXPECT_EQ(error_of([] {
              parse_shard_plan(R"({"kvsweep_shard_plan":1,"options":{"headers":[]}})", "p.json");
            }),
            "p.json: workload: missing");
  EXPECT_EQ(
      error_of([] {
        parse_shard_plan(
            R"({"kvsweep_shard_plan":1,"options":{"headers":[],"max_tokens":"x"},"workload":{"conversations":[]}})",
            "p.json");
      }),
      "p.json: options: max_tokens: wrong type: string");
}

TEST(ShardFiles, ARecordsFileArrivesWholeOrSaysWhatIsMissing) {
  const ShardResult shard = shard_with(1, 2, 1000.002, {1, 3, 5});
  const std::string text = shard_records_text(shard);
  const ShardResult back = parse_shard_records(text, "shard 1");
  ASSERT_EQ(back.result.records.size(), 3u);
  EXPECT_EQ(back.result.records[2].index, 5);
  EXPECT_EQ(back.result.records[2].prompt_hash, 0xfedcba9876543215ULL);
  EXPECT_EQ(back.result.records[0].itl_ms, (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ(back.result.records[0].error, shard.result.records[0].error);
  EXPECT_DOUBLE_EQ(back.result.driver.send_delay_p99_ms, 2.0);

  // Cut after the second record: no trailer.
  std::size_t cut = 0;
  for (int line = 0; line < 3; ++line) cut = text.find('\n', cut) + 1;
  EXPECT_EQ(error_of([&] { parse_shard_records(text.substr(0, cut), "shard 1"); }),
            "shard 1: cut short: 2 of 3 records and no trailer");
  // A byte changed on the way.
  std::string garbled = text;
  garbled[garbled.find("\"ttft_ms\":10") + 10] = '9';
  EXPECT_NE(error_of([&] { parse_shard_records(garbled, "shard 1"); }).find("checksum mismatch"),
            std::string::npos);
  // A record line dropped whole: the counts disagree.
  std::string dropped = text;
  const std::size_t first = dropped.find('\n') + 1;
  dropped.erase(first, dropped.find('\n', first) + 1 - first);
  EXPECT_NE(error_of([&] {
              parse_shard_records(dropped, "shard 1");
            }).find("the trailer counts 3 records, the header 3, and 2 were read"),
            std::string::npos);
}

TEST(ShardFiles, MergingPutsEveryShardOnTheEarliestEpochInRunOrder) {
  std::vector<ShardResult> shards = {shard_with(1, 2, 1000.004, {1, 3}),
                                     shard_with(0, 2, 1000.001, {0, 2})};
  const MergedShards merged = merge_shards(shards);
  ASSERT_EQ(merged.result.records.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(merged.result.records[i].index, static_cast<std::int64_t>(i));
  EXPECT_DOUBLE_EQ(merged.result.epoch_wall_s, 1000.001);
  // Shard 1 started 3 ms later: its times move by 3 ms onto shard 0's epoch.
  EXPECT_NEAR(merged.result.records[1].sent_s, 0.1 + 0.003, 1e-9);
  EXPECT_NEAR(merged.result.records[0].sent_s, 0.0, 1e-9);
  EXPECT_EQ(merged.result.driver.threads, 2);
  EXPECT_DOUBLE_EQ(merged.result.driver.cpu_s, 1.0);
  EXPECT_DOUBLE_EQ(merged.result.driver.send_delay_p99_ms, 2.0);  // the larger shard's
  EXPECT_NEAR(merged.result.driver.sent_span_s, 2.003, 1e-9);
  ASSERT_EQ(merged.shards.size(), 2u);
  EXPECT_NEAR(merged.shards[1].start_skew_ms, 4.0, 1e-6);

  EXPECT_NE(error_of([&] {
              merge_shards({shard_with(0, 2, 1, {0}), shard_with(0, 2, 1, {1})});
            }).find("shard 1 of 2 is missing or doubled"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              merge_shards({shard_with(0, 2, 1, {0, 1}), shard_with(1, 2, 1, {1})});
            }).find("run index 1 was sent by two shards"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsweep::driver
