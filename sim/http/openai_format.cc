// The OpenAI chat and completions reply formats: SSE chunks, whole replies, the model list.
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {
namespace {

// ordered_json keeps fields in the order vLLM writes them, so chunks read like vLLM's.
using Json = nlohmann::ordered_json;

Json chunk_head(ApiKind kind, const CompletionId& id) {
  return Json{{"id", id.id},
              {"object", kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion"},
              {"created", id.created},
              {"model", id.model}};
}

Json usage_json(const Usage& usage) {
  return Json{{"prompt_tokens", usage.prompt_tokens},
              {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
              {"completion_tokens", usage.completion_tokens},
              {"prompt_tokens_details", Json{{"cached_tokens", usage.cached_tokens}}}};
}

Json reason_json(std::string_view finish_reason) {
  return finish_reason.empty() ? Json(nullptr) : Json(finish_reason);
}

std::string sse(const Json& data) { return "data: " + json_text(data) + "\n\n"; }

}  // namespace

std::string sse_role_chunk(const CompletionId& id, int index, const Usage* usage) {
  Json chunk = chunk_head(ApiKind::kChat, id);
  chunk["choices"] = Json::array({Json{{"index", index},
                                       {"delta", Json{{"role", "assistant"}, {"content", ""}}},
                                       {"logprobs", nullptr},
                                       {"finish_reason", nullptr}}});
  if (usage) chunk["usage"] = usage_json(*usage);
  return sse(chunk);
}

std::string sse_token_chunk(ApiKind kind, const CompletionId& id, int index, std::string_view piece,
                            std::string_view finish_reason, const Usage* usage) {
  Json chunk = chunk_head(kind, id);
  if (kind == ApiKind::kChat) {
    chunk["choices"] = Json::array({Json{{"index", index},
                                         {"delta", Json{{"content", piece}}},
                                         {"logprobs", nullptr},
                                         {"finish_reason", reason_json(finish_reason)}}});
  } else {
    chunk["choices"] = Json::array({Json{{"index", index},
                                         {"text", piece},
                                         {"logprobs", nullptr},
                                         {"finish_reason", reason_json(finish_reason)},
                                         {"stop_reason", nullptr}}});
  }
  if (usage) chunk["usage"] = usage_json(*usage);
  return sse(chunk);
}

std::string sse_usage_chunk(ApiKind kind, const CompletionId& id, const Usage& usage) {
  Json chunk = chunk_head(kind, id);
  chunk["choices"] = Json::array();
  chunk["usage"] = usage_json(usage);
  return sse(chunk);
}

std::string sse_role_chunk(const CompletionId& id) { return sse_role_chunk(id, 0, nullptr); }

std::string sse_content_chunk(const CompletionId& id, std::string_view piece,
                              std::string_view finish_reason) {
  return sse_token_chunk(ApiKind::kChat, id, 0, piece, finish_reason, nullptr);
}

std::string sse_usage_chunk(const CompletionId& id, const Usage& usage) {
  return sse_usage_chunk(ApiKind::kChat, id, usage);
}

std::string response_body(ApiKind kind, const CompletionId& id,
                          const std::vector<ChoiceText>& choices, const Usage& usage) {
  Json list = Json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    const ChoiceText& choice = choices[i];
    if (kind == ApiKind::kChat) {
      list.push_back(Json{{"index", i},
                          {"message", Json{{"role", "assistant"}, {"content", choice.text}}},
                          {"logprobs", nullptr},
                          {"finish_reason", reason_json(choice.finish_reason)}});
    } else {
      list.push_back(Json{{"index", i},
                          {"text", choice.text},
                          {"logprobs", nullptr},
                          {"finish_reason", reason_json(choice.finish_reason)},
                          {"stop_reason", nullptr},
                          {"prompt_logprobs", nullptr}});
    }
  }
  return json_text(Json{{"id", id.id},
                        {"object", kind == ApiKind::kChat ? "chat.completion" : "text_completion"},
                        {"created", id.created},
                        {"model", id.model},
                        {"choices", list},
                        {"usage", usage_json(usage)}});
}

std::string completion_body(const CompletionId& id, std::string_view content,
                            std::string_view finish_reason, const Usage& usage) {
  return response_body(ApiKind::kChat, id,
                       {ChoiceText{std::string(content), std::string(finish_reason)}}, usage);
}

std::string models_list_body(const std::vector<std::string>& entries) {
  std::string body = R"({"object":"list","data":[)";
  for (std::size_t i = 0; i < entries.size(); ++i) body += (i == 0 ? "" : ",") + entries[i];
  return body + "]}";
}

std::string model_entry(std::string_view model, std::int64_t created) {
  return json_text(Json{{"id", model},
                        {"object", "model"},
                        {"created", created},
                        {"owned_by", "kvsweep"},
                        {"root", model},
                        {"parent", nullptr}});
}

std::string models_body(std::string_view model, std::int64_t created) {
  return models_list_body({model_entry(model, created)});
}

}  // namespace kvsweep::sim
