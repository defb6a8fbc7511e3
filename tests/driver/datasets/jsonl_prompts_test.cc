// Tests for driver/datasets/jsonl_prompts.cc against tests/fixtures/datasets/prompts*.jsonl.
#include "driver/datasets/jsonl_prompts.h"

#include <gtest/gtest.h>

#include "tests/driver/datasets/dataset_test_support.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::driver {
namespace {

using testing::error_of;
using testing::fixture;
using testing::write_file;

DatasetOptions jsonl_options(const std::string& path) {
  DatasetOptions options;
  options.kind = "jsonl";
  options.path = path;
  return options;
}

TEST(JsonlPrompts, BothShapesBecomeSingleTurnConversations) {
  const Workload workload = load_jsonl_prompts(jsonl_options(fixture("prompts.jsonl")));
  ASSERT_EQ(workload.conversations.size(), 3u);  // the blank line is skipped
  const Conversation& prompt = workload.conversations[0];
  EXPECT_EQ(prompt.system_prompt, "");
  EXPECT_EQ(prompt.user,
            (std::vector<std::string>{"POLICY: be brief.\nQ: What is a KV cache?\nA:"}));
  EXPECT_EQ(prompt.assistant.size(), 1u);
  EXPECT_TRUE(prompt.max_tokens.empty());  // the run's max_tokens

  const Conversation& chat = workload.conversations[1];
  EXPECT_EQ(chat.system_prompt, "You are terse.");
  EXPECT_EQ(chat.user, (std::vector<std::string>{"Define TTFT."}));
  EXPECT_EQ(chat.max_tokens, (std::vector<int>{32}));

  EXPECT_EQ(workload.conversations[2].max_tokens, (std::vector<int>{16}));  // output_tokens
  EXPECT_EQ(workload.description, "jsonl: 3 prompts");
  EXPECT_TRUE(workload.arrival_s.empty());
}

TEST(JsonlPrompts, BadLineNamesFileLineAndField) {
  const std::string path = fixture("prompts_bad.jsonl");
  EXPECT_EQ(error_of([&] { load_jsonl_prompts(jsonl_options(path)); }),
            path + ":3: field \"prompt\": expected a string, got number 42");
}

TEST(JsonlPrompts, EachKindOfBadLineIsLocated) {
  kvsweep::testing::TempDir dir;
  const std::string path = dir.file("p.jsonl");
  const DatasetOptions options = jsonl_options(path);
  auto error_for = [&](const std::string& text) {
    write_file(path, text);
    return error_of([&] { load_jsonl_prompts(options); });
  };
  EXPECT_EQ(error_for("{\"prompt\": \"a\"}\n{\"prompt\": \"b\",}\n"),
            path +
                ":2:16: invalid JSON: syntax error while parsing object key - unexpected '}'; "
                "expected string literal");
  EXPECT_EQ(error_for("{\"prompt\": \"a\"}\n{\"prompt\": \"b\", \"max_tokens\": 1e999}\n"),
            path + ":2:31: invalid JSON: number 1e999 is beyond the range of a double");
  EXPECT_EQ(error_for("[1, 2]\n"), path + ":1: expected a JSON object, got array");
  // A long string is cut before a character, never inside one (a 3-byte character at bytes
  // 18-20 here): the message names what it got and is itself valid text.
  EXPECT_EQ(error_for("\"ffffffffffffffffff\xe6\x87\x87"
                      "ffff\"\n"),
            path + ":1: expected a JSON object, got string \"ffffffffffffffffff...\"");
  EXPECT_EQ(error_for("{\"id\": 1}\n"), path + ":1: expected a \"prompt\" or a \"messages\" field");
  EXPECT_EQ(error_for("{\"prompt\": \"a\", \"max_tokens\": 0}\n"),
            path + ":1: field \"max_tokens\": expected an integer >= 1, got 0");
  EXPECT_EQ(error_for("{\"prompt\": \"a\", \"output_tokens\": 2.5}\n"),
            path + ":1: field \"output_tokens\": expected an integer, got number 2.5");
  EXPECT_EQ(error_for("{\"messages\": [{\"role\": \"user\", \"content\": 1}]}\n"),
            path + ":1: messages[0]: field \"content\": expected a string, got number 1");
  EXPECT_EQ(error_for("{\"messages\": [{\"role\": \"assistant\", \"content\": \"x\"}]}\n"),
            path + ":1: messages[0]: field \"role\": expected \"user\", got \"assistant\"");
  EXPECT_EQ(error_for("{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, "
                      "{\"role\": \"assistant\", \"content\": \"b\"}]}\n"),
            path +
                ":1: field \"messages\": expected an optional system message then one user "
                "message, got 2 messages (for multi-turn history use the sharegpt kind)");
  EXPECT_EQ(error_for("\n\n"), path + ": no prompts (the file is empty)");
}

}  // namespace
}  // namespace kvsweep::driver
