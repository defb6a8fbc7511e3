// Tests for driver/datasets/shared_prefix.cc: identical prefixes within a group, distinct across.
#include "driver/datasets/shared_prefix.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "driver/datasets/synthetic_text.h"
#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;

DatasetOptions small_options() {
  DatasetOptions options;
  options.kind = "shared-prefix";
  options.num_prefixes = 3;
  options.prompts_per_prefix = 4;
  options.prefix_tokens = 64;
  options.suffix_tokens = 8;
  options.seed = 7;
  return options;
}

// The group a prompt belongs to, read back from its "Prefix g: " tag.
int group_of(const std::string& prompt) { return std::stoi(prompt.substr(7)); }

TEST(SharedPrefix, PrefixIsByteIdenticalWithinAGroupAndDiffersAcrossGroups) {
  const Workload workload = make_shared_prefix(small_options());
  ASSERT_EQ(workload.conversations.size(), 12u);
  const std::size_t prefix_bytes = 64 * kBytesPerToken;
  std::map<int, std::set<std::string>> prefixes;
  std::set<std::string> prompts;
  for (const Conversation& c : workload.conversations) {
    ASSERT_EQ(c.user.size(), 1u);
    const std::string& prompt = c.user[0];
    EXPECT_EQ(prompt.size(), (64 + 8) * static_cast<std::size_t>(kBytesPerToken));
    prefixes[group_of(prompt)].insert(prompt.substr(0, prefix_bytes));
    prompts.insert(prompt);
    EXPECT_EQ(prompt[prefix_bytes], '\n');  // seed 004's "<PREFIX>\nQ..." shape
  }
  ASSERT_EQ(prefixes.size(), 3u);
  std::set<std::string> distinct;
  for (const auto& [group, texts] : prefixes) {
    EXPECT_EQ(texts.size(), 1u) << "group " << group;
    distinct.insert(*texts.begin());
  }
  EXPECT_EQ(distinct.size(), 3u);
  EXPECT_EQ(prompts.size(), 12u);  // every suffix is unique
  EXPECT_EQ(workload.description, "shared-prefix: 3 prefixes x 4 prompts, 64 + 8 tokens, shuffled");
}

TEST(SharedPrefix, OrderedKeepsGroupsTogetherAndShuffleIsSeeded) {
  DatasetOptions options = small_options();
  options.ordered = true;
  const Workload ordered = make_shared_prefix(options);
  std::vector<int> groups;
  for (const Conversation& c : ordered.conversations) groups.push_back(group_of(c.user[0]));
  EXPECT_EQ(groups, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));

  options.ordered = false;
  const Workload a = make_shared_prefix(options);
  const Workload b = make_shared_prefix(options);
  std::vector<std::string> a_prompts, b_prompts, ordered_prompts;
  for (const Conversation& c : a.conversations) a_prompts.push_back(c.user[0]);
  for (const Conversation& c : b.conversations) b_prompts.push_back(c.user[0]);
  for (const Conversation& c : ordered.conversations) ordered_prompts.push_back(c.user[0]);
  EXPECT_EQ(a_prompts, b_prompts);
  EXPECT_NE(a_prompts, ordered_prompts);
  std::sort(a_prompts.begin(), a_prompts.end());
  std::sort(ordered_prompts.begin(), ordered_prompts.end());
  EXPECT_EQ(a_prompts, ordered_prompts);  // same prompts, other order

  options.seed = 8;
  EXPECT_NE(make_shared_prefix(options).conversations[0].user[0].substr(20, 100),
            a.conversations[0].user[0].substr(20, 100));
}

TEST(SharedPrefix, OutputTokensSetMaxTokens) {
  DatasetOptions options = small_options();
  EXPECT_TRUE(make_shared_prefix(options).conversations[0].max_tokens.empty());
  options.output_tokens = LengthDistribution{256};
  for (const Conversation& c : make_shared_prefix(options).conversations) {
    EXPECT_EQ(c.max_tokens, (std::vector<int>{256}));
  }
}

TEST(SharedPrefix, BadSizesNameTheField) {
  DatasetOptions options = small_options();
  options.prefix_tokens = 2;
  EXPECT_EQ(error_of([&] { make_shared_prefix(options); }),
            "shared-prefix: prefix_tokens: expected >= 4, got 2");
  options = small_options();
  options.num_prefixes = 0;
  EXPECT_EQ(error_of([&] { make_shared_prefix(options); }),
            "shared-prefix: num_prefixes: expected >= 1, got 0");
  options = small_options();
  options.output_tokens = LengthDistribution{0, 0, 10, 5};
  EXPECT_EQ(error_of([&] { make_shared_prefix(options); }),
            "shared-prefix: output_tokens: max 5 is below min 10");
}

}  // namespace
}  // namespace kvsweep::driver
