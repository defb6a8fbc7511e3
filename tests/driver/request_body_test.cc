// Tests for driver/request_body.cc: the chat and completions request JSON.
#include "driver/request_body.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kvsweep::driver {
namespace {

ChatRequest two_messages() {
  ChatRequest request;
  request.model = "m1";
  request.messages = {{"system", "s"}, {"user", "q \"quoted\""}};
  request.max_tokens = 17;
  request.ignore_eos = false;
  return request;
}

TEST(ChatRequestBody, StreamsWithUsageAtTemperatureZero) {
  const nlohmann::json body = nlohmann::json::parse(chat_request_body(two_messages()));
  EXPECT_EQ(body["model"], "m1");
  EXPECT_EQ(body["max_tokens"], 17);
  EXPECT_EQ(body["ignore_eos"], false);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["temperature"], 0);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "q \"quoted\"");
}

TEST(ChatRequestBody, NonStreamingTemperatureAndExtraBodyMergedLast) {
  ChatRequest request = two_messages();
  request.stream = false;
  request.temperature = 0.7;
  request.extra_body_json = R"({"top_k": 5, "max_tokens": 9, "nested": {"a": 1}})";
  const nlohmann::json body = nlohmann::json::parse(chat_request_body(request));
  EXPECT_EQ(body["stream"], false);
  EXPECT_FALSE(body.contains("stream_options"));
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  EXPECT_EQ(body["top_k"], 5);
  EXPECT_EQ(body["max_tokens"], 9);  // the extra body wins
  EXPECT_EQ(body["nested"]["a"], 1);
}

TEST(CompletionRequestBody, PromptIsTheMessagesJoinedByNewlines) {
  const nlohmann::json body = nlohmann::json::parse(completion_request_body(two_messages()));
  EXPECT_EQ(body["prompt"], "s\nq \"quoted\"");
  EXPECT_FALSE(body.contains("messages"));
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
}

// The body written as text is byte for byte what a JSON document of the same request dumps (the
// general path, taken when there is an extra body: an empty object patches nothing).
TEST(ChatRequestBody, TextIsTheSameBytesAsTheJsonDocument) {
  std::vector<ChatRequest> requests;
  requests.push_back(two_messages());
  ChatRequest odd = two_messages();
  odd.model = "m/\\\"x\"";
  odd.messages = {{"system", "tabs\tand\nnewlines\r, \x01 \x1f bell\b feed\f"},
                  {"user", "unicode \xc3\xa9\xe2\x82\xac \xf0\x9f\x99\x82 and \\ slash /"},
                  {"assistant", ""},
                  {"user", "last"}};
  odd.max_tokens = 123456;
  odd.ignore_eos = true;
  odd.temperature = 0.7;
  requests.push_back(odd);
  ChatRequest plain = odd;
  plain.stream = false;
  plain.temperature = 1;
  plain.messages = {};
  requests.push_back(plain);
  for (const ChatRequest& request : requests) {
    ChatRequest as_document = request;
    as_document.extra_body_json = "{}";
    EXPECT_EQ(chat_request_body(request), chat_request_body(as_document));
    EXPECT_EQ(completion_request_body(request), completion_request_body(as_document));
  }
}

TEST(ExtraBody, ProblemsAreNamed) {
  EXPECT_EQ(extra_body_problem(""), "");
  EXPECT_EQ(extra_body_problem(R"({"a":1})"), "");
  EXPECT_EQ(extra_body_problem("{oops"), "not valid JSON");
  EXPECT_EQ(extra_body_problem("[1]"), "expected a JSON object, got array");
}

}  // namespace
}  // namespace kvsweep::driver
