// The shard protocol's files: a plan round-trips whole, a records file proves it arrived whole
// (count and checksum) or says what is missing, and merging puts shards on one clock.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "driver/shard_merge.h"
#include "driver/shard_plan.h"
#include "driver/shard_records.h"
#include "driver/shard_run.h"

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
    r.worker = index;  // closed_plan's users: user u is shard u % count's
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

// A closed loop of `users` users over 4 two-turn conversations, `requests` requests in all.
ShardPlan closed_plan(int shards, int users, std::int64_t requests) {
  ShardPlan plan;
  plan.options.base_url = "http://127.0.0.1:9";
  plan.options.concurrency = users;
  plan.options.num_requests = requests;
  plan.options.max_tokens = 8;
  plan.options.shard.count = shards;
  for (int c = 0; c < 4; ++c) {
    Conversation conversation;
    conversation.user = {"u0", "u1"};
    conversation.assistant = {"a0", "a1"};
    plan.workload.conversations.push_back(conversation);
  }
  return plan;
}

// Shard `k` of closed_plan(2, 2, 10): run indexes k, k + 2, ... below 10.
ShardRecordBounds bounds_of(int k) { return shard_record_bounds(closed_plan(2, 2, 10), k); }

// The text with its trailer made again: what a forger (or a shard gone wrong) writes, whose
// checksum holds.
std::string resealed(const std::string& text) {
  std::string body = text.substr(0, text.rfind('\n', text.size() - 2) + 1);
  std::size_t records = 0;
  for (const char c : body) records += c == '\n' ? 1 : 0;
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(body)));
  return body + "{\"end\":" + std::to_string(records - 1) + ",\"fnv1a64\":\"" + sum + "\"}\n";
}

// `text` with the first `from` replaced by `to`, resealed.
std::string forged(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return text;
  return resealed(text.replace(at, from.size(), to));
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
  const ShardResult back = parse_shard_records(text, "shard 1", bounds_of(1));
  ASSERT_EQ(back.result.records.size(), 3u);
  EXPECT_EQ(back.result.records[2].index, 5);
  EXPECT_EQ(back.result.records[2].prompt_hash, 0xfedcba9876543215ULL);
  EXPECT_EQ(back.result.records[0].itl_ms, (std::vector<double>{1.5, 2.25}));
  EXPECT_EQ(back.result.records[0].error, shard.result.records[0].error);
  EXPECT_DOUBLE_EQ(back.result.driver.send_delay_p99_ms, 2.0);

  // Cut after the second record: no trailer.
  std::size_t cut = 0;
  for (int line = 0; line < 3; ++line) cut = text.find('\n', cut) + 1;
  EXPECT_EQ(error_of([&] { parse_shard_records(text.substr(0, cut), "shard 1", bounds_of(1)); }),
            "shard 1: cut short: 2 of 3 records and no trailer");
  // A byte changed on the way.
  std::string garbled = text;
  garbled[garbled.find("\"ttft_ms\":10") + 10] = '9';
  EXPECT_NE(error_of([&] {
              parse_shard_records(garbled, "shard 1", bounds_of(1));
            }).find("checksum mismatch"),
            std::string::npos);
  // A record line dropped whole: the counts disagree.
  std::string dropped = text;
  const std::size_t first = dropped.find('\n') + 1;
  dropped.erase(first, dropped.find('\n', first) + 1 - first);
  EXPECT_NE(error_of([&] {
              parse_shard_records(dropped, "shard 1", bounds_of(1));
            }).find("the trailer counts 3 records, the header 3, and 2 were read"),
            std::string::npos);
}

// Records whose checksum holds but which no shard of the plan could have sent: each is
// refused, naming the file's where, the line and record, and the field.
TEST(ShardFiles, AForgedRecordIsRefusedNamingTheLineAndField) {
  const std::string text = shard_records_text(shard_with(1, 2, 1000, {1, 3, 5}));
  const auto error = [&](const std::string& forgery) {
    return error_of(
        [&] { parse_shard_records(forgery, "shard 1 of 2: d/records.jsonl", bounds_of(1)); });
  };
  EXPECT_EQ(error(text), "(no error)");
  // Another shard's part of the schedule, an index twice, an index past the schedule's end.
  EXPECT_EQ(error(forged(text, "\"i\":3,", "\"i\":2,")),
            "shard 1 of 2: d/records.jsonl: line 3 (record 2): i: run index 2 of 2 belongs to "
            "shard 0, not this one");
  EXPECT_EQ(error(forged(text, "\"i\":3,", "\"i\":5,")),
            "shard 1 of 2: d/records.jsonl: record 3: run index 5 again (record 2 has it)");
  EXPECT_EQ(error(forged(text, "\"i\":5,", "\"i\":11,")),
            "shard 1 of 2: d/records.jsonl: line 4 (record 3): i: 11 is out of range (0 to 9)");
  // Another shard's user, a conversation or turn the workload does not have.
  EXPECT_EQ(error(forged(text, "\"worker\":1}", "\"worker\":0}")),
            "shard 1 of 2: d/records.jsonl: line 2 (record 1): worker: user 0 of 2 belongs to "
            "shard 0, not this one");
  EXPECT_NE(error(forged(text, "\"conversation\":0,", "\"conversation\":4,"))
                .find("line 2 (record 1): conversation: 4 is out of range (0 to 3)"),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"turn\":0,", "\"turn\":2,"))
                .find("line 2 (record 1): turn: 2 is out of range (0 to 1)"),
            std::string::npos);
  // Times: negative, past any run, infinite (JSON's 1e400), not a number at all.
  EXPECT_NE(error(forged(text, "\"ttft_ms\":10.0", "\"ttft_ms\":-1e308"))
                .find("line 2 (record 1): ttft_ms: -1e+308 is out of range (0 to "),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"sent_s\":0.1", "\"sent_s\":1e300"))
                .find("line 2 (record 1): sent_s: 1e+300 is out of range (0 to "),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"e2e_ms\":0.0", "\"e2e_ms\":1e400"))
                .find("d/records.jsonl: line 2 (record 1): not JSON: "),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"itl_ms\":[1.5,", "\"itl_ms\":[-1.5,"))
                .find("line 2 (record 1): itl_ms[0]: -1.5 is out of range"),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"scheduled_s\":0.1", "\"scheduled_s\":-2"))
                .find("scheduled_s: -2 is out of range"),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"http_status\":0", "\"http_status\":1e9"))
                .find("http_status: expected an integer, got 1e+09"),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"ok\":true", "\"ok\":1")).find("ok: expected true or false"),
            std::string::npos);
  // The header's figures: a count no plan allows (1e18 must not reach reserve()), and as a
  // float; a count the text cannot hold; another shard's file; the driver's figures.
  EXPECT_EQ(error(forged(text, "\"records\":3", "\"records\":1000000000000000000")),
            "shard 1 of 2: d/records.jsonl: line 1 (header): records: 1000000000000000000, more "
            "than the 5 requests this shard's part of the plan can send");
  EXPECT_NE(error(forged(text, "\"records\":3", "\"records\":1e18"))
                .find("line 1 (header): records: expected an integer, got 1e+18"),
            std::string::npos);
  const std::string two = shard_records_text(shard_with(1, 2, 1000, {1, 3}));
  EXPECT_NE(error_of([&] {
              parse_shard_records(forged(two, "\"records\":2", "\"records\":400"), "s",
                                  shard_record_bounds(closed_plan(2, 2, 1000), 1));
            }).find("s: line 1 (header): records: 400 records cannot fit in 1."),
            std::string::npos);
  EXPECT_EQ(error(forged(text, "\"shard\":1,", "\"shard\":0,")),
            "shard 1 of 2: d/records.jsonl: line 1 (header): shard: shard 0 of 2's records, not "
            "shard 1 of 2's");
  EXPECT_NE(error(forged(text, "\"cpu_s\":0.5", "\"cpu_s\":-0.5"))
                .find("line 1 (header): driver: cpu_s: -0.5 is out of range"),
            std::string::npos);
  EXPECT_NE(error(forged(text, "\"epoch_wall_s\":1000.0", "\"epoch_wall_s\":1e308"))
                .find("epoch_wall_s: 1e+308 is out of range"),
            std::string::npos);
}

TEST(ShardFiles, AnOpenLoopShardOwnsItsConversationsAndAFileIsBoundedByItsPlan) {
  ShardPlan plan = closed_plan(2, 0, 10);
  plan.options.request_rate = 5;
  const ShardRecordBounds bounds = shard_record_bounds(plan, 1);
  EXPECT_TRUE(bounds.by_conversation);
  EXPECT_EQ(bounds.max_records, 10);
  ShardResult shard = shard_with(1, 2, 1000, {0, 1, 2});
  for (RequestRecord& r : shard.result.records) {
    r.conversation = 1;
    r.worker = 0;
  }
  const std::string text = shard_records_text(shard);
  EXPECT_EQ(parse_shard_records(text, "s", bounds).result.records.size(), 3u);
  EXPECT_EQ(error_of([&] {
              parse_shard_records(forged(text, "\"conversation\":1,", "\"conversation\":2,"), "s",
                                  bounds);
            }),
            "s: line 2 (record 1): conversation: 2: conversation % 2 of 2 belongs to shard 0, "
            "not this one");
  // A file larger than the plan's requests can fill is refused before it is parsed; so is
  // a record line longer than one request of this plan can write.
  const std::string huge = text + std::string(bounds.max_bytes, ' ');
  EXPECT_NE(error_of([&] {
              parse_shard_records(huge, "s", bounds);
            }).find(" its plan's requests can fill"),
            std::string::npos);
  ShardResult wordy = shard;
  wordy.result.records[0].error = std::string(bounds.max_record_bytes, 'x');
  EXPECT_NE(error_of([&] {
              parse_shard_records(shard_records_text(wordy), "s", bounds);
            }).find("line 2 (record 1): longer than the "),
            std::string::npos);
  // A run the plan does not count (a closed loop with a duration) is still bounded.
  ShardPlan timed = closed_plan(2, 2, 0);
  timed.options.duration_s = 60;
  EXPECT_EQ(shard_record_bounds(timed, 0).max_records, kMaxUnplannedShardRecords);
}

// The records file as the coordinator reads it: a link (to /dev/zero) or a FIFO is refused at
// once, without reading or waiting; a file past the bound is refused unread.
TEST(ShardFiles, OnlyARegularFileWithinTheBoundIsRead) {
  char pattern[] = "/tmp/kvsweep-records-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string link = dir + "/link", fifo = dir + "/fifo", big = dir + "/big";
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    std::ofstream out(big);
    out << std::string(2000, 'x');
  }
  EXPECT_EQ(read_file_if_present(dir + "/absent"), std::nullopt);
  EXPECT_EQ(error_of([&] { read_file_if_present(link, 1 << 20); }),
            link + ": a symbolic link, not a protocol file");
  EXPECT_EQ(error_of([&] { read_file_if_present(fifo, 1 << 20); }),
            fifo + ": not a regular file (a FIFO)");
  EXPECT_EQ(error_of([&] { read_file_if_present(big, 1000); }),
            big + ": 2.0 KiB, more than the 1000 B allowed");
  EXPECT_EQ(read_file_if_present(big, 2000)->size(), 2000u);
  std::filesystem::remove_all(dir);
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
