// Tests for driver/chunk_fields.cc: the one-pass reader gives what a parsed document gives.
#include "driver/chunk_fields.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kvsweep::driver {
namespace {

// The reference: the same fields read from a whole document (the decoder's former way).
ChunkFields from_document(const std::string& data, bool* valid) {
  ChunkFields fields;
  const nlohmann::json chunk = nlohmann::json::parse(data, nullptr, false);
  *valid = !chunk.is_discarded();
  if (!*valid || !chunk.is_object()) return fields;
  fields.object = true;
  const auto error = chunk.find("error");
  fields.error = error != chunk.end() && !error->is_null();
  const auto integer = [](const nlohmann::json& object, const char* key) -> std::optional<int> {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int>();
  };
  const auto usage = chunk.find("usage");
  if (usage != chunk.end() && usage->is_object()) {
    fields.prompt_tokens = integer(*usage, "prompt_tokens");
    fields.completion_tokens = integer(*usage, "completion_tokens");
    const auto details = usage->find("prompt_tokens_details");
    if (details != usage->end() && details->is_object()) {
      fields.cached_tokens = integer(*details, "cached_tokens");
    }
  }
  const auto text_of = [](const nlohmann::json& object, const char* key) -> const std::string* {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      return nullptr;
    }
    return &it->get_ref<const std::string&>();
  };
  const auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return fields;
  const nlohmann::json& choice = choices->front();
  if (!choice.is_object()) return fields;
  const std::string* text = text_of(choice, "text");
  const auto delta = choice.find("delta");
  if (text == nullptr && delta != choice.end() && delta->is_object()) {
    for (const char* key : {"content", "reasoning_content", "reasoning"}) {
      if ((text = text_of(*delta, key)) != nullptr) break;
    }
  }
  if (text != nullptr) fields.content = *text;
  return fields;
}

TEST(ChunkFields, SameFieldsAsAParsedDocument) {
  const std::vector<std::string> chunks = {
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})",
      R"({"id":"x","choices":[{"index":0,"delta":{"content":"Hel\"lo\n"},"logprobs":null}]})",
      R"({"choices":[{"index":0,"text":"he","logprobs":{"tokens":["a"],"top":[{"a":1}]}}]})",
      R"({"choices":[{"index":0,"text":"","delta":{"content":"both"}}]})",
      R"({"choices":[{"index":0,"delta":{"content":"","reasoning_content":"think"}}]})",
      R"({"choices":[{"index":0,"delta":{"reasoning":"r","content":null}}]})",
      R"({"choices":[{"delta":{"content":"first"}},{"delta":{"content":"second"}}]})",
      R"({"choices":[[{"delta":{"content":"nested array"}}]]})",
      R"({"choices":["text"]})",
      R"({"choices":{"0":{"delta":{"content":"not an array"}}}})",
      R"({"choices":[{"delta":{"content":7}}]})",
      R"({"choices":[{"delta":{"content":"a","content":""}}]})",
      R"({"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3,"total_tokens":53,)"
      R"("prompt_tokens_details":{"cached_tokens":32}}})",
      R"({"usage":{"prompt_tokens":5.0,"completion_tokens":18446744073,"prompt_tokens_details":null}})",
      R"({"usage":{"completion_tokens":2},"choices":[{"delta":{"content":"x"}}]})",
      R"({"usage":null,"details":{"cached_tokens":4},"prompt_tokens":9})",
      R"({"other":{"usage":{"prompt_tokens":1},"choices":[{"text":"deep"}]}})",
      R"({"error":{"message":"engine dead","code":500}})",
      R"({"error":null,"choices":[{"text":"ok"}]})",
      R"({"error":"plain"})",
      R"({"error":[1],"error":null})",
      R"([{"choices":[{"text":"array at top"}]}])",
      R"("a string")",
      R"(42)",
      R"({"choices":[{"text":"cut)",
      "not json at all",
      "",
  };
  for (const std::string& data : chunks) {
    SCOPED_TRACE(data);
    bool valid = false;
    const ChunkFields want = from_document(data, &valid);
    ChunkFields got;
    ASSERT_EQ(read_chunk(data, got), valid);
    EXPECT_EQ(got.object, want.object);
    EXPECT_EQ(got.error, want.error);
    EXPECT_EQ(got.content, want.content);
    EXPECT_EQ(got.prompt_tokens, want.prompt_tokens);
    EXPECT_EQ(got.completion_tokens, want.completion_tokens);
    EXPECT_EQ(got.cached_tokens, want.cached_tokens);
  }
}

}  // namespace
}  // namespace kvsweep::driver
