// Tests for driver/datasets/chat_threads.cc against tests/fixtures/datasets/chat_threads.json.
#include "driver/datasets/chat_threads.h"

#include <gtest/gtest.h>

#include "driver/conversation.h"
#include "tests/driver/datasets/dataset_test_support.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::fixture;
using testing::write_file;

DatasetOptions threads_options() {
  DatasetOptions options;
  options.kind = "chat-threads";
  options.path = fixture("chat_threads.json");
  return options;
}

TEST(ChatThreads, EveryThreadTakesItsHistoryFromTheServer) {
  const Workload workload = load_chat_threads(threads_options());
  ASSERT_EQ(workload.conversations.size(), 3u);
  for (const Conversation& c : workload.conversations) {
    EXPECT_TRUE(c.replies_from_server);
    EXPECT_EQ(c.assistant.size(), c.user.size());
    EXPECT_TRUE(c.max_tokens.empty());
  }
  EXPECT_EQ(workload.conversations[0].user,
            (std::vector<std::string>{"Tell me about caching.", "How does a prefix cache work?",
                                      "And eviction?"}));
  EXPECT_EQ(workload.conversations[0].system_prompt, "");
  EXPECT_EQ(workload.conversations[1].system_prompt, "Answer in one word.");
  EXPECT_EQ(workload.conversations[2].user[1], "Bare thread, second message.");
  EXPECT_EQ(workload.description, "chat-threads: 3 threads, 6 turns, replies from the server");

  const std::vector<std::string> replies{"what the server said"};
  const auto messages = messages_for_turn(workload.conversations[0], 1, &replies);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1].content, "what the server said");
}

TEST(ChatThreads, MaxConversationsKeepsTheFirstThreads) {
  DatasetOptions options = threads_options();
  options.max_conversations = 1;
  EXPECT_EQ(load_chat_threads(options).conversations.size(), 1u);
}

TEST(ChatThreads, BadMessageIsLocatedByJsonPath) {
  kvsweep::testing::TempDir dir;
  DatasetOptions options = threads_options();
  options.path = dir.file("threads.json");
  write_file(options.path, R"([["ok"], {"userMessages": ["ok", 7]}])");
  EXPECT_EQ(error_of([&] { load_chat_threads(options); }),
            options.path + ": [1].userMessages[1]: expected a string, got number 7");
  write_file(options.path, R"([{"userMessages": []}])");
  EXPECT_EQ(error_of([&] { load_chat_threads(options); }),
            options.path + ": [0].userMessages: expected at least one user message, got none");
  write_file(options.path, R"([{"messages": ["hi"]}])");
  EXPECT_EQ(error_of([&] { load_chat_threads(options); }),
            options.path + ": [0]: field \"userMessages\": missing");
}

}  // namespace
}  // namespace kvsweep::driver
