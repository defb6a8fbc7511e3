// Tests for driver/datasets/synthetic_multiturn.cc: compatibility and length distributions.
#include "driver/datasets/synthetic_multiturn.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "driver/conversation.h"
#include "tests/driver/datasets/dataset_test_support.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;

int word_count(const std::string& text) {
  std::istringstream in(text);
  int count = 0;
  for (std::string word; in >> word;) ++count;
  return count;
}

TEST(SyntheticMultiTurnWorkload, ConstantLengthsGiveExactlyMakeSyntheticMultiturn) {
  DatasetOptions options;
  options.kind = "synthetic-multiturn";
  options.conversations = 5;
  options.turns = LengthDistribution{3};
  options.system_prompt_words = LengthDistribution{50};
  options.user_words = LengthDistribution{7};
  options.assistant_words = LengthDistribution{11};
  options.seed = 42;
  const Workload workload = make_synthetic_multiturn_workload(options);

  SyntheticMultiTurnOptions legacy;
  legacy.conversations = 5;
  legacy.turns = 3;
  legacy.system_prompt_words = 50;
  legacy.user_words = 7;
  legacy.assistant_words = 11;
  legacy.seed = 42;
  const std::vector<Conversation> expected = make_synthetic_multiturn(legacy);
  ASSERT_EQ(workload.conversations.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(workload.conversations[i].system_prompt, expected[i].system_prompt);
    EXPECT_EQ(workload.conversations[i].user, expected[i].user);
    EXPECT_EQ(workload.conversations[i].assistant, expected[i].assistant);
    EXPECT_TRUE(workload.conversations[i].max_tokens.empty());
  }
  EXPECT_EQ(workload.description, "synthetic-multiturn: 5 conversations, 15 turns");
}

TEST(SyntheticMultiTurnWorkload, DistributionsAreSeededAndClamped) {
  DatasetOptions options;
  options.conversations = 40;
  options.turns = LengthDistribution{0, 0, 2, 5};  // uniform 2..5
  options.system_prompt_words = LengthDistribution{20};
  options.user_words = LengthDistribution{30, 20, 10, 40};  // normal, clamped to 10..40
  options.assistant_words = LengthDistribution{5};
  options.output_tokens = LengthDistribution{64, 32, 16, 96};
  options.seed = 3;
  const Workload a = make_synthetic_multiturn_workload(options);
  const Workload b = make_synthetic_multiturn_workload(options);
  std::set<std::size_t> turn_counts;
  std::set<int> user_lengths;
  for (std::size_t i = 0; i < a.conversations.size(); ++i) {
    const Conversation& c = a.conversations[i];
    EXPECT_EQ(c.user, b.conversations[i].user);
    EXPECT_EQ(c.max_tokens, b.conversations[i].max_tokens);
    turn_counts.insert(c.user.size());
    ASSERT_EQ(c.max_tokens.size(), c.user.size());
    for (std::size_t t = 0; t < c.user.size(); ++t) {
      const int words = word_count(c.user[t]) - (t == 0 ? 2 : 0);  // "Conversation N:" tag
      EXPECT_GE(words, 10);
      EXPECT_LE(words, 40);
      user_lengths.insert(words);
      EXPECT_GE(c.max_tokens[t], 16);
      EXPECT_LE(c.max_tokens[t], 96);
    }
  }
  EXPECT_EQ(turn_counts, (std::set<std::size_t>{2, 3, 4, 5}));
  EXPECT_TRUE(user_lengths.count(10) == 1 && user_lengths.count(40) == 1);  // clamps reached
  EXPECT_GT(user_lengths.size(), 15u);

  options.seed = 4;
  EXPECT_NE(make_synthetic_multiturn_workload(options).conversations[0].user,
            a.conversations[0].user);
}

TEST(SyntheticMultiTurnWorkload, InvalidOptionsNameTheField) {
  DatasetOptions options;
  options.conversations = 0;
  EXPECT_EQ(error_of([&] { make_synthetic_multiturn_workload(options); }),
            "synthetic-multiturn: conversations: expected >= 1, got 0");
  options.conversations = 1;
  options.user_words = LengthDistribution{10, 0, 5, 2};
  EXPECT_EQ(error_of([&] { make_synthetic_multiturn_workload(options); }),
            "synthetic-multiturn: user_words: max 2 is below min 5");
}

}  // namespace
}  // namespace kvsweep::driver
