// Tests for driver/datasets/random_prompts.cc: vLLM's random dataset (lengths, prefix, seed).
#include "driver/datasets/random_prompts.h"

#include <gtest/gtest.h>

#include <set>

#include "driver/datasets/load_workload.h"
#include "driver/datasets/synthetic_text.h"
#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;

DatasetOptions random_options() {
  DatasetOptions options;
  options.kind = "random";
  options.num_prompts = 400;
  options.random_input_len = 100;
  options.random_output_len = 20;
  options.random_range_ratio = 0.5;
  options.random_prefix_len = 32;
  options.seed = 3;
  return options;
}

TEST(RandomPrompts, LengthsAreUniformWithinVllmsBoundsAfterASharedPrefix) {
  const Workload workload = load_workload(random_options());
  ASSERT_EQ(workload.conversations.size(), 400u);
  const std::size_t prefix_bytes = 32 * kBytesPerToken;
  const std::string prefix = workload.conversations[0].user[0].substr(0, prefix_bytes);
  std::set<int> inputs, outputs;
  std::set<std::string> prompts;
  for (std::size_t i = 0; i < workload.conversations.size(); ++i) {
    const Conversation& c = workload.conversations[i];
    ASSERT_EQ(c.user.size(), 1u);
    ASSERT_EQ(c.max_tokens.size(), 1u);
    EXPECT_TRUE(c.system_prompt.empty());
    const std::string& prompt = c.user[0];
    EXPECT_EQ(prompt.substr(0, prefix_bytes), prefix) << i;  // shared, byte for byte
    const std::string tag = "R" + std::to_string(i) + ": ";  // unique right after the prefix
    EXPECT_EQ(prompt.compare(prefix_bytes, tag.size(), tag), 0) << prompt.substr(prefix_bytes, 20);
    ASSERT_EQ(prompt.size() % kBytesPerToken, 0u);
    const int input = static_cast<int>(prompt.size() / kBytesPerToken) - 32;
    EXPECT_GE(input, 50);   // floor(100 * 0.5)
    EXPECT_LE(input, 150);  // ceil(100 * 1.5)
    EXPECT_GE(c.max_tokens[0], 10);
    EXPECT_LE(c.max_tokens[0], 30);
    inputs.insert(input);
    outputs.insert(c.max_tokens[0]);
    prompts.insert(prompt);
  }
  EXPECT_EQ(prompts.size(), 400u);
  // Uniform over the whole range: with 400 draws both ends and most values in between appear.
  EXPECT_EQ(*inputs.begin(), 50);
  EXPECT_EQ(*inputs.rbegin(), 150);
  EXPECT_GT(inputs.size(), 80u);
  EXPECT_EQ(outputs.size(), 21u);  // every value of [10, 30]
}

TEST(RandomPrompts, RatioZeroGivesExactLengthsAndTheSeedFixesTheText) {
  DatasetOptions options = random_options();
  options.random_range_ratio = 0;
  options.random_prefix_len = 0;
  const Workload workload = make_random_prompts(options);
  for (const Conversation& c : workload.conversations) {
    EXPECT_EQ(c.user[0].size(), 100u * kBytesPerToken);
    EXPECT_EQ(c.max_tokens[0], 20);
  }
  EXPECT_EQ(workload.description, "random: 400 prompts, input 100 tokens, output 20");
  const Workload again = make_random_prompts(options);
  EXPECT_EQ(again.conversations[7].user, workload.conversations[7].user);
  options.seed = 4;
  EXPECT_NE(make_random_prompts(options).conversations[7].user, workload.conversations[7].user);
}

TEST(RandomPrompts, OutOfRangeOptionsAreNamed) {
  DatasetOptions options = random_options();
  options.random_range_ratio = 1.0;
  EXPECT_EQ(error_of([&] { make_random_prompts(options); }),
            "random: random_range_ratio: expected a number in [0, 1), got 1");
  options = random_options();
  options.random_output_len = 0;
  EXPECT_EQ(error_of([&] { make_random_prompts(options); }),
            "random: random_output_len: expected >= 1, got 0");
  options = random_options();
  options.random_input_len = 0;
  options.random_prefix_len = 0;
  EXPECT_NE(error_of([&] { make_random_prompts(options); }).find("a prompt could have no token"),
            std::string::npos);
}

}  // namespace
}  // namespace kvsweep::driver
