// Tests for driver/datasets/sharegpt.cc against tests/fixtures/datasets/sharegpt.json.
#include "driver/datasets/sharegpt.h"

#include <gtest/gtest.h>

#include "driver/conversation.h"
#include "tests/driver/datasets/dataset_test_support.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::fixture;
using testing::write_file;

DatasetOptions sharegpt_options() {
  DatasetOptions options;
  options.kind = "sharegpt";
  options.path = fixture("sharegpt.json");
  return options;
}

TEST(ShareGpt, KeepsEveryConversationWithATurnCutAtTheFirstBreak) {
  const Workload workload = load_sharegpt(sharegpt_options());
  // starts-with-gpt has no usable turn; the other six remain, in file order.
  ASSERT_EQ(workload.conversations.size(), 6u);
  std::vector<std::size_t> turns;
  for (const Conversation& c : workload.conversations) turns.push_back(c.user.size());
  // long-with-system 4, one-turn 1, odd-roles 3 (cut at "tool", "Call the calculator." has
  // no reply), double-human 1 (cut at the second human), six-messages 3, trailing-question 2.
  EXPECT_EQ(turns, (std::vector<std::size_t>{4, 1, 3, 1, 3, 2}));
  EXPECT_TRUE(workload.arrival_s.empty());
  EXPECT_EQ(workload.description, "sharegpt: 6 conversations, 14 turns");
  for (const Conversation& c : workload.conversations) {
    EXPECT_EQ(c.assistant.size(), c.user.size());
    EXPECT_EQ(c.max_tokens.size(), c.user.size());
    EXPECT_FALSE(c.replies_from_server);
  }
}

TEST(ShareGpt, MinMessagesFiltersAndMaxConversationsCapsInFileOrder) {
  DatasetOptions options = sharegpt_options();
  options.min_messages = 6;
  Workload workload = load_sharegpt(options);
  ASSERT_EQ(workload.conversations.size(), 3u);  // long-with-system, odd-roles, six-messages
  EXPECT_EQ(workload.conversations[0].user[0], "What is the capital of France?");
  EXPECT_EQ(workload.conversations[1].user[0], "Count to two.");
  EXPECT_EQ(workload.conversations[2].user[0], "Name a prime.");
  EXPECT_EQ(workload.description, "sharegpt: 3 conversations, 10 turns (min_messages 6)");

  options.max_conversations = 2;
  workload = load_sharegpt(options);
  ASSERT_EQ(workload.conversations.size(), 2u);
  EXPECT_EQ(workload.conversations[1].user[0], "Count to two.");
}

TEST(ShareGpt, TurnsAreCumulativeWithTheDatasetsReplies) {
  DatasetOptions options = sharegpt_options();
  options.max_conversations = 1;
  const Conversation c = load_sharegpt(options).conversations.at(0);
  EXPECT_EQ(c.system_prompt, "You are a terse geography tutor.");
  // Seed 002: prompt 1 = message (1), prompt 2 = messages (1, 2, 3).
  const auto first = messages_for_turn(c, 0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].content, "What is the capital of France?");
  const auto second = messages_for_turn(c, 1);
  ASSERT_EQ(second.size(), 4u);
  EXPECT_EQ(second[1].content, "What is the capital of France?");
  EXPECT_EQ(second[2].role, "assistant");
  EXPECT_EQ(second[2].content, "Paris is the capital of France.");
  EXPECT_EQ(second[3].content, "And of Italy?");
}

TEST(ShareGpt, MaxTokensFollowTheRepliesAtFourBytesPerToken) {
  DatasetOptions options = sharegpt_options();
  options.max_conversations = 1;
  const Conversation c = load_sharegpt(options).conversations.at(0);
  // "Paris is the capital of France." is 31 bytes -> 7; "Rome." 5 -> 1; the 101-byte reply
  // -> 25; "You're welcome." 15 -> 3.
  EXPECT_EQ(c.max_tokens, (std::vector<int>{7, 1, 25, 3}));
}

TEST(ShareGpt, AssistantAliasesCountAsReplies) {
  DatasetOptions options = sharegpt_options();
  options.min_messages = 6;
  const Conversation c = load_sharegpt(options).conversations.at(1);
  EXPECT_EQ(c.user, (std::vector<std::string>{"Count to two.", "Now to three.", "And four?"}));
  EXPECT_EQ(c.assistant,
            (std::vector<std::string>{"One, two.", "One, two, three.", "One, two, three, four."}));
}

TEST(ShareGpt, NothingPassingTheFilterIsAnErrorThatSaysWhy) {
  DatasetOptions options = sharegpt_options();
  options.min_messages = 10;
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path +
                ": no conversation of 7 has at least 10 usable messages "
                "(alternating user/assistant); lower min_messages");
}

TEST(ShareGpt, BadFieldIsLocatedByJsonPath) {
  kvsweep::testing::TempDir dir;
  DatasetOptions options = sharegpt_options();
  options.path = dir.file("bad.json");
  write_file(options.path,
             R"([{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}]}
,{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": null}]}])");
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path + ": [1].conversations[1]: field \"value\": expected a string, got null");

  write_file(options.path, R"([{"id": "x", "conversation": []}])");
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path + ": [0]: field \"conversations\": missing");
}

TEST(ShareGpt, SyntaxErrorNamesLineAndColumn) {
  kvsweep::testing::TempDir dir;
  DatasetOptions options = sharegpt_options();
  options.path = dir.file("broken.json");
  write_file(options.path, "[\n  {\"conversations\": [}\n]\n");
  const std::string message = error_of([&] { load_sharegpt(options); });
  EXPECT_EQ(message.rfind(options.path + ":2:22: invalid JSON: ", 0), 0u) << message;
}

// nlohmann refuses 1e999 with an exception of another kind than a syntax error: it must still
// be a DatasetError at the number's line and column, whatever field it is in.
TEST(ShareGpt, ANumberBeyondADoublesRangeIsALocatedError) {
  kvsweep::testing::TempDir dir;
  DatasetOptions options = sharegpt_options();
  options.path = dir.file("huge.json");
  write_file(options.path, "[\n  {\"id\": 1e999, \"conversations\": []}\n]\n");
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path + ":2:10: invalid JSON: number 1e999 is beyond the range of a double");
  write_file(options.path, "[{\"conversations\": [{\"from\": -1e400}]}]");
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path + ":1:30: invalid JSON: number -1e400 is beyond the range of a double");
}

TEST(ShareGpt, MissingFileSaysSo) {
  DatasetOptions options = sharegpt_options();
  options.path = fixture("no_such_file.json");
  EXPECT_EQ(error_of([&] { load_sharegpt(options); }),
            options.path + ": cannot open: No such file or directory");
}

}  // namespace
}  // namespace kvsweep::driver
