// Tests for sim/http/openai_api.cc: request parsing, the chat template, and reply bytes.
#include "sim/http/openai_api.h"

#include <gtest/gtest.h>

namespace kvsweep::sim {
namespace {

TEST(OpenAiApi, ParsesStringAndArrayContent) {
  ChatRequest request;
  const auto error = parse_chat_request(R"({
    "model": "m", "stream": true, "stream_options": {"include_usage": true},
    "max_tokens": 9, "ignore_eos": true,
    "messages": [
      {"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hello "},
                                   {"type": "image_url", "image_url": {"url": "x"}},
                                   {"type": "text", "text": "world"}]}
    ]})",
                                        &request);
  ASSERT_FALSE(error.has_value()) << error->message;
  EXPECT_EQ(request.model, "m");
  EXPECT_TRUE(request.stream);
  EXPECT_TRUE(request.include_usage);
  EXPECT_TRUE(request.ignore_eos);
  EXPECT_EQ(request.max_tokens, 9);
  ASSERT_EQ(request.messages.size(), 2u);
  EXPECT_EQ(request.messages[1].content, "hello world");
  EXPECT_EQ(first_user_message(request), "hello world");
}

TEST(OpenAiApi, MaxCompletionTokensWinsOverMaxTokens) {
  ChatRequest request;
  ASSERT_FALSE(parse_chat_request(
      R"({"messages":[{"role":"user","content":"x"}],"max_tokens":5,"max_completion_tokens":7})",
      &request));
  EXPECT_EQ(request.max_tokens, 7);
  ASSERT_FALSE(parse_chat_request(R"({"messages":[{"role":"user","content":"x"}]})", &request));
  EXPECT_FALSE(request.max_tokens.has_value());
}

TEST(OpenAiApi, RejectsBadBodiesWithTheFieldNamed) {
  ChatRequest request;
  auto error = parse_chat_request("{not json", &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, 400);
  EXPECT_EQ(error->message, "request body is not valid JSON");

  error = parse_chat_request(R"({"model":"m"})", &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "messages");

  error = parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})",
                             &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "max_tokens");

  error = parse_chat_request(R"({"messages":[{"role":"user","content":5}]})", &request);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->param, "messages");
}

TEST(OpenAiApi, ErrorBodyHasOpenAiShape) {
  EXPECT_EQ(
      error_body(ApiError{400, "BadRequestError", "bad", "max_tokens"}),
      R"({"error":{"message":"bad","type":"BadRequestError","param":"max_tokens","code":400}})");
  EXPECT_EQ(error_body(not_found_error("The model `x` does not exist.")),
            R"({"error":{"message":"The model `x` does not exist.","type":"NotFoundError",)"
            R"("param":null,"code":404}})");
}

TEST(OpenAiApi, FirstUserMessageSkipsSystemPrompt) {
  ChatRequest request;
  request.messages = {{"system", "sys"}, {"assistant", "a"}, {"user", "u1"}, {"user", "u2"}};
  EXPECT_EQ(first_user_message(request), "u1");
  request.messages = {{"system", "sys"}};
  EXPECT_EQ(first_user_message(request), "");
}

TEST(OpenAiApi, ChatTemplateIsDeterministicAndPrefixStable) {
  const std::vector<ChatMessage> one{{"system", "S"}, {"user", "hi"}};
  EXPECT_EQ(render_prompt(one), "<|system|>\nS\n<|user|>\nhi\n<|assistant|>\n");
  std::vector<ChatMessage> two = one;
  two.push_back({"assistant", "yo"});
  two.push_back({"user", "more"});
  const std::string shared = "<|system|>\nS\n<|user|>\nhi\n";
  EXPECT_EQ(render_prompt(two).substr(0, shared.size()), shared);
}

TEST(OpenAiApi, SseChunksMatchVllmBytes) {
  const CompletionId id{"chatcmpl-0-1", 1700000000, "m"};
  const std::string head =
      R"({"id":"chatcmpl-0-1","object":"chat.completion.chunk","created":1700000000,"model":"m",)";
  EXPECT_EQ(sse_role_chunk(id),
            "data: " + head +
                R"("choices":[{"index":0,"delta":{"role":"assistant","content":""},)"
                R"("logprobs":null,"finish_reason":null}]})" +
                "\n\n");
  EXPECT_EQ(sse_content_chunk(id, " cat", ""),
            "data: " + head +
                R"("choices":[{"index":0,"delta":{"content":" cat"},"logprobs":null,)"
                R"("finish_reason":null}]})" +
                "\n\n");
  EXPECT_EQ(sse_content_chunk(id, " dog", "length"),
            "data: " + head +
                R"("choices":[{"index":0,"delta":{"content":" dog"},"logprobs":null,)"
                R"("finish_reason":"length"}]})" +
                "\n\n");
  EXPECT_EQ(sse_usage_chunk(id, Usage{10, 2, 8}),
            "data: " + head +
                R"("choices":[],"usage":{"prompt_tokens":10,"total_tokens":12,)"
                R"("completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}}})" +
                "\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

TEST(OpenAiApi, NonStreamingAndModelsBodies) {
  const CompletionId id{"chatcmpl-1-2", 5, "m"};
  EXPECT_EQ(
      completion_body(id, " a b", "length", Usage{3, 2, 0}),
      R"({"id":"chatcmpl-1-2","object":"chat.completion","created":5,"model":"m",)"
      R"("choices":[{"index":0,"message":{"role":"assistant","content":" a b"},)"
      R"("logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":3,)"
      R"("total_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}})");
  EXPECT_EQ(models_body("m", 5),
            R"({"object":"list","data":[{"id":"m","object":"model","created":5,)"
            R"("owned_by":"kvsweep","root":"m","parent":null}]})");
}

}  // namespace
}  // namespace kvsweep::sim
