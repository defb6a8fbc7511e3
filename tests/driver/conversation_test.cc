// Tests for driver/conversation.cc: turn messages and the synthetic multi-turn dataset.
#include "driver/conversation.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <stdexcept>

namespace kvsweep::driver {
namespace {

int word_count(const std::string& text) {
  std::istringstream in(text);
  int count = 0;
  for (std::string word; in >> word;) ++count;
  return count;
}

TEST(SyntheticMultiTurn, SameSeedSameTextOtherSeedOtherText) {
  SyntheticMultiTurnOptions options;
  options.conversations = 8;
  options.seed = 42;
  const auto a = make_synthetic_multiturn(options);
  const auto b = make_synthetic_multiturn(options);
  ASSERT_EQ(a.size(), 8u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].system_prompt, b[i].system_prompt);
    EXPECT_EQ(a[i].user, b[i].user);
    EXPECT_EQ(a[i].assistant, b[i].assistant);
  }
  options.seed = 43;
  const auto c = make_synthetic_multiturn(options);
  EXPECT_NE(a[0].system_prompt, c[0].system_prompt);
  EXPECT_NE(a[3].user[2], c[3].user[2]);
}

TEST(SyntheticMultiTurn, ShapeFollowsTheOptions) {
  SyntheticMultiTurnOptions options;
  options.conversations = 5;
  options.turns = 3;
  options.system_prompt_words = 100;
  options.user_words = 7;
  options.assistant_words = 11;
  const auto conversations = make_synthetic_multiturn(options);
  ASSERT_EQ(conversations.size(), 5u);
  for (const Conversation& c : conversations) {
    EXPECT_EQ(c.system_prompt, conversations[0].system_prompt);  // shared by every conversation
    EXPECT_EQ(word_count(c.system_prompt), 100);
    ASSERT_EQ(c.user.size(), 3u);
    ASSERT_EQ(c.assistant.size(), 3u);
    EXPECT_EQ(word_count(c.user[1]), 7);
    EXPECT_EQ(word_count(c.user[0]), 7 + 2);  // "Conversation N:" tag
    EXPECT_EQ(word_count(c.assistant[2]), 11);
  }
  EXPECT_EQ(conversations[4].user[0].rfind("Conversation 4: ", 0), 0u);
}

TEST(SyntheticMultiTurn, FirstHundredCharactersOfFirstUserMessageAreDistinct) {
  SyntheticMultiTurnOptions options;
  options.conversations = 500;
  options.turns = 1;
  options.system_prompt_words = 10;
  const auto conversations = make_synthetic_multiturn(options);
  std::set<std::string> keys;
  for (const Conversation& c : conversations) keys.insert(c.user[0].substr(0, 100));
  EXPECT_EQ(keys.size(), conversations.size());
}

TEST(MessagesForTurn, SystemThenPriorTurnsWithDatasetRepliesThenUser) {
  Conversation c{"sys", {"u0", "u1", "u2"}, {"a0", "a1", "a2"}, {}, false};
  const auto first = messages_for_turn(c, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].role, "system");
  EXPECT_EQ(first[0].content, "sys");
  EXPECT_EQ(first[1].role, "user");
  EXPECT_EQ(first[1].content, "u0");

  const auto third = messages_for_turn(c, 2);
  ASSERT_EQ(third.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"system", "sys"}, {"user", "u0"},      {"assistant", "a0"},
      {"user", "u1"},    {"assistant", "a1"}, {"user", "u2"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(third[i].role, expected[i].first) << i;
    EXPECT_EQ(third[i].content, expected[i].second) << i;
  }
}

TEST(MessagesForTurn, ServerRepliesReplaceTheDatasetsWhenGiven) {
  Conversation c{"sys", {"u0", "u1"}, {"a0", "a1"}, {}, true};
  const std::vector<std::string> replies{"what the server said"};
  const auto messages = messages_for_turn(c, 1, &replies);
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[2].role, "assistant");
  EXPECT_EQ(messages[2].content, "what the server said");
}

TEST(MessagesForTurn, EmptySystemPromptIsLeftOut) {
  Conversation c{"", {"u0", "u1"}, {"a0", "a1"}, {}, false};
  const auto messages = messages_for_turn(c, 1);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].role, "user");
}

TEST(MessagesForTurn, TurnOutOfRangeThrows) {
  Conversation c{"s", {"u0"}, {"a0"}, {}, false};
  EXPECT_THROW(messages_for_turn(c, 1), std::out_of_range);
  EXPECT_THROW(messages_for_turn(c, -1), std::out_of_range);
}

// What a turn asks: its own text, the history's dataset text and its length count; the server's
// replies (not in the dataset) do not, and neither does anything after the turn.
TEST(TurnFingerprint, CoversTheDatasetsTurnAndItsHistoryNotWhatFollows) {
  const Conversation c{"sys", {"u0", "u1", "u2"}, {"a0", "a1", "a2"}, {}, false};
  const std::uint64_t turn1 = turn_fingerprint(c, 1, 16);
  EXPECT_NE(turn1, 0u);
  EXPECT_EQ(turn_fingerprint(c, 1, 16), turn1);
  EXPECT_NE(turn_fingerprint(c, 0, 16), turn1);
  EXPECT_NE(turn_fingerprint(c, 1, 17), turn1);
  Conversation later = c;
  later.user[2] = "changed";
  later.assistant[1] = "changed";
  later.replies_from_server = true;
  EXPECT_EQ(turn_fingerprint(later, 1, 16), turn1);
  Conversation system = c;
  system.system_prompt = "sys!";
  EXPECT_NE(turn_fingerprint(system, 1, 16), turn1);
  Conversation history = c;
  history.assistant[0] = "a0!";
  EXPECT_NE(turn_fingerprint(history, 1, 16), turn1);
  // Text moved across a message boundary is another prompt.
  const Conversation joined{"sysu", {"0"}, {""}, {}, false};
  const Conversation split{"sys", {"u0"}, {""}, {}, false};
  EXPECT_NE(turn_fingerprint(joined, 0, 16), turn_fingerprint(split, 0, 16));
  EXPECT_THROW(turn_fingerprint(c, 3, 16), std::out_of_range);
}

}  // namespace
}  // namespace kvsweep::driver
