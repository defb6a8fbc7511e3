// Tests for driver/datasets/mooncake_trace.cc against tests/fixtures/datasets/mooncake.jsonl.
#include "driver/datasets/mooncake_trace.h"

#include <gtest/gtest.h>

#include "driver/datasets/synthetic_text.h"
#include "tests/driver/datasets/dataset_test_support.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::fixture;
using testing::write_file;

DatasetOptions trace_options() {
  DatasetOptions options;
  options.kind = "mooncake";
  options.path = fixture("mooncake.jsonl");
  options.block_size = 16;
  return options;
}

// Length of the common prefix of two strings, in bytes.
std::size_t common_prefix(const std::string& a, const std::string& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

constexpr std::size_t kBlockBytes = 16 * kBytesPerToken;

TEST(MooncakeTrace, RowsSharingLeadingHashIdsShareTheirTextPrefix) {
  const Workload workload = load_mooncake_trace(trace_options());
  ASSERT_EQ(workload.conversations.size(), 4u);
  std::vector<std::string> prompts;
  for (const Conversation& c : workload.conversations) prompts.push_back(c.user.at(0));
  // Prompts are input_length tokens long: 40, 36, 32, 20.
  EXPECT_EQ(prompts[0].size(), 40 * static_cast<std::size_t>(kBytesPerToken));
  EXPECT_EQ(prompts[1].size(), 36 * static_cast<std::size_t>(kBytesPerToken));
  EXPECT_EQ(prompts[2].size(), 32 * static_cast<std::size_t>(kBytesPerToken));
  EXPECT_EQ(prompts[3].size(), 20 * static_cast<std::size_t>(kBytesPerToken));
  // [0,1,2] vs [0,1,5]: blocks 0 and 1 are shared, block 2 differs.
  EXPECT_EQ(common_prefix(prompts[0], prompts[1]) / kBlockBytes, 2u);
  EXPECT_LT(common_prefix(prompts[0], prompts[1]), 3 * kBlockBytes);
  // [9,1]: hash_id 1 in second place does not make a shared prefix.
  EXPECT_LT(common_prefix(prompts[0], prompts[2]), kBlockBytes);
  // [0] with input 20: block 0 then a 4-token row-unique tail.
  EXPECT_EQ(common_prefix(prompts[0], prompts[3]) / kBlockBytes, 1u);
  EXPECT_EQ(prompts[3].substr(kBlockBytes, 3), "3: ");
  // The same hash_id gives the same block wherever it sits: block 1 of rows 0 and 2.
  EXPECT_EQ(prompts[0].substr(kBlockBytes, kBlockBytes),
            prompts[2].substr(kBlockBytes, kBlockBytes));
}

TEST(MooncakeTrace, MaxTokensAreOutputLengthsAndArrivalsAreScaledFromTheFirstRow) {
  DatasetOptions options = trace_options();
  Workload workload = load_mooncake_trace(options);
  std::vector<int> max_tokens;
  for (const Conversation& c : workload.conversations) max_tokens.push_back(c.max_tokens.at(0));
  EXPECT_EQ(max_tokens, (std::vector<int>{7, 3, 12, 1}));
  EXPECT_EQ(workload.arrival_s, (std::vector<double>{0.0, 0.5, 3.0, 3.0}));
  EXPECT_EQ(workload.description, "mooncake: 4 requests, block_size 16, over 3.0 s");

  options.time_scale = 2.0;
  workload = load_mooncake_trace(options);
  EXPECT_EQ(workload.arrival_s, (std::vector<double>{0.0, 1.0, 6.0, 6.0}));
}

TEST(MooncakeTrace, BlockSizeIsRequiredAndTheErrorExplainsTheTrap) {
  DatasetOptions options = trace_options();
  options.block_size = 0;
  const std::string message = error_of([&] { load_mooncake_trace(options); });
  EXPECT_EQ(message.rfind("mooncake: block_size is required", 0), 0u) << message;
  EXPECT_NE(message.find("512"), std::string::npos) << message;
  EXPECT_NE(message.find("defaults to 16"), std::string::npos) << message;
}

TEST(MooncakeTrace, WrongBlockSizeShowsAsAHashIdCountMismatch) {
  DatasetOptions options = trace_options();
  options.block_size = 512;
  EXPECT_EQ(error_of([&] { load_mooncake_trace(options); }),
            options.path +
                ":1: field \"hash_ids\": 3 blocks of block_size 512 do not match "
                "input_length 40 (expected 0 or 1 blocks); this row fits a block_size "
                "of about 14: is block_size right? (Mooncake uses 512, vLLM defaults to 16)");
}

TEST(MooncakeTrace, BadRowsAreLocated) {
  kvsweep::testing::TempDir dir;
  DatasetOptions options = trace_options();
  options.path = dir.file("trace.jsonl");
  auto error_for = [&](const std::string& text) {
    write_file(options.path, text);
    return error_of([&] { load_mooncake_trace(options); });
  };
  EXPECT_EQ(error_for("{\"timestamp\": 0, \"input_length\": 16, \"output_length\": 1, "
                      "\"hash_ids\": [1]}\n{\"timestamp\": 5, \"input_length\": 16, "
                      "\"hash_ids\": [1]}\n"),
            options.path + ":2: field \"output_length\": missing");
  EXPECT_EQ(error_for("{\"timestamp\": 9, \"input_length\": 16, \"output_length\": 1, "
                      "\"hash_ids\": [1]}\n{\"timestamp\": 5, \"input_length\": 16, "
                      "\"output_length\": 1, \"hash_ids\": [1]}\n"),
            options.path +
                ":2: field \"timestamp\": rows must be in ascending time order, got "
                "number 5 after 9.0");
  EXPECT_EQ(error_for("{\"timestamp\": 0, \"input_length\": 16, \"output_length\": 1, "
                      "\"hash_ids\": [\"a\"]}\n"),
            options.path + ":1: field \"hash_ids\"[0]: expected an integer, got string \"a\"");
  EXPECT_EQ(error_for("{\"timestamp\": \"now\", \"input_length\": 16, \"output_length\": 1, "
                      "\"hash_ids\": []}\n"),
            options.path + ":1: field \"timestamp\": expected a number, got string \"now\"");
}

}  // namespace
}  // namespace kvsweep::driver
