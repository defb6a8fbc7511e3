// The OpenAI chat-completions wire format: parse requests, render prompts, format replies.
#include "sim/openai_api.h"

#include <limits>

#include <nlohmann/json.hpp>

namespace kvsweep::sim {
namespace {

// ordered_json keeps fields in the order vLLM writes them, so chunks read like vLLM's.
using Json = nlohmann::ordered_json;

ApiError bad_request(std::string message, std::string param) {
  return ApiError{400, "BadRequestError", std::move(message), std::move(param)};
}

// A content is a string, null, or an array of parts of which the {type:"text"} ones count.
std::optional<ApiError> read_content(const nlohmann::json& content, std::string* out) {
  if (content.is_null()) return std::nullopt;
  if (content.is_string()) {
    *out = content.get<std::string>();
    return std::nullopt;
  }
  if (!content.is_array()) return bad_request("content must be a string or an array", "messages");
  for (const auto& part : content) {
    if (!part.is_object()) return bad_request("content parts must be objects", "messages");
    const auto type = part.find("type");
    if (type == part.end() || *type != "text") continue;  // images etc. carry no text
    const auto text = part.find("text");
    if (text == part.end() || !text->is_string()) {
      return bad_request("a text content part needs a string \"text\"", "messages");
    }
    *out += text->get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> read_max_tokens(const nlohmann::json& body, ChatRequest* out) {
  for (const char* field : {"max_completion_tokens", "max_tokens"}) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        it->get<std::int64_t>() > std::numeric_limits<int>::max()) {
      return bad_request(std::string(field) + " must be an integer >= 1", field);
    }
    out->max_tokens = it->get<int>();
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ApiError> read_bool(const nlohmann::json& object, const char* field, bool* out,
                                  const std::string& param) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return bad_request(param + " must be a boolean", param);
  *out = it->get<bool>();
  return std::nullopt;
}

Json chunk_head(const CompletionId& id) {
  return Json{{"id", id.id}, {"object", "chat.completion.chunk"}, {"created", id.created},
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

std::string sse(const Json& data) { return "data: " + data.dump() + "\n\n"; }

}  // namespace

std::optional<ApiError> parse_chat_request(std::string_view body, ChatRequest* out) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return bad_request("request body is not valid JSON", "");
  if (!json.is_object()) return bad_request("request body must be a JSON object", "");
  *out = ChatRequest{};
  if (const auto model = json.find("model"); model != json.end() && !model->is_null()) {
    if (!model->is_string()) return bad_request("model must be a string", "model");
    out->model = model->get<std::string>();
  }
  const auto messages = json.find("messages");
  if (messages == json.end() || !messages->is_array() || messages->empty()) {
    return bad_request("messages must be a non-empty array", "messages");
  }
  for (const auto& message : *messages) {
    if (!message.is_object()) return bad_request("each message must be an object", "messages");
    const auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return bad_request("each message needs a string role", "messages");
    }
    ChatMessage parsed{role->get<std::string>(), ""};
    if (const auto content = message.find("content"); content != message.end()) {
      if (auto error = read_content(*content, &parsed.content)) return error;
    }
    out->messages.push_back(std::move(parsed));
  }
  if (auto error = read_max_tokens(json, out)) return error;
  if (auto error = read_bool(json, "stream", &out->stream, "stream")) return error;
  if (auto error = read_bool(json, "ignore_eos", &out->ignore_eos, "ignore_eos")) return error;
  if (const auto options = json.find("stream_options");
      options != json.end() && options->is_object()) {
    if (auto error = read_bool(*options, "include_usage", &out->include_usage,
                               "stream_options.include_usage")) {
      return error;
    }
  }
  return std::nullopt;
}

ApiError not_found_error(std::string message) {
  return ApiError{404, "NotFoundError", std::move(message), ""};
}

std::string error_body(const ApiError& error) {
  const Json param = error.param.empty() ? Json(nullptr) : Json(error.param);
  return Json{{"error", Json{{"message", error.message},
                             {"type", error.type},
                             {"param", param},
                             {"code", error.status}}}}
      .dump();
}

std::string render_prompt(const std::vector<ChatMessage>& messages) {
  std::string prompt;
  for (const ChatMessage& message : messages) {
    prompt += "<|" + message.role + "|>\n" + message.content + "\n";
  }
  return prompt + "<|assistant|>\n";
}

std::string_view first_user_message(const ChatRequest& request) {
  for (const ChatMessage& message : request.messages) {
    if (message.role == "user") return message.content;
  }
  return {};
}

std::string sse_role_chunk(const CompletionId& id) {
  Json chunk = chunk_head(id);
  chunk["choices"] = Json::array({Json{{"index", 0},
                                       {"delta", Json{{"role", "assistant"}, {"content", ""}}},
                                       {"logprobs", nullptr},
                                       {"finish_reason", nullptr}}});
  return sse(chunk);
}

std::string sse_content_chunk(const CompletionId& id, std::string_view piece,
                              std::string_view finish_reason) {
  Json chunk = chunk_head(id);
  chunk["choices"] = Json::array({Json{{"index", 0},
                                       {"delta", Json{{"content", piece}}},
                                       {"logprobs", nullptr},
                                       {"finish_reason", reason_json(finish_reason)}}});
  return sse(chunk);
}

std::string sse_usage_chunk(const CompletionId& id, const Usage& usage) {
  Json chunk = chunk_head(id);
  chunk["choices"] = Json::array();
  chunk["usage"] = usage_json(usage);
  return sse(chunk);
}

std::string completion_body(const CompletionId& id, std::string_view content,
                            std::string_view finish_reason, const Usage& usage) {
  return Json{{"id", id.id},
              {"object", "chat.completion"},
              {"created", id.created},
              {"model", id.model},
              {"choices", Json::array({Json{
                              {"index", 0},
                              {"message", Json{{"role", "assistant"}, {"content", content}}},
                              {"logprobs", nullptr},
                              {"finish_reason", reason_json(finish_reason)}}})},
              {"usage", usage_json(usage)}}
      .dump();
}

std::string models_body(std::string_view model, std::int64_t created) {
  return Json{{"object", "list"},
              {"data", Json::array({Json{{"id", model},
                                         {"object", "model"},
                                         {"created", created},
                                         {"owned_by", "kvsweep"},
                                         {"root", model},
                                         {"parent", nullptr}}})}}
      .dump();
}

}  // namespace kvsweep::sim
