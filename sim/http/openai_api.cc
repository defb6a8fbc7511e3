// The OpenAI chat and completions request formats: parse bodies, render prompts.
#include "sim/http/openai_api.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "sim/engine/chat_template.h"

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

std::optional<ApiError> read_max_tokens(const nlohmann::json& body, std::optional<int>* out) {
  for (const char* field : {"max_completion_tokens", "max_tokens"}) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        it->get<std::int64_t>() > std::numeric_limits<int>::max()) {
      return bad_request(std::string(field) + " must be an integer >= 1", field);
    }
    *out = it->get<int>();
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

// The fields chat and completions share.
template <typename Request>
std::optional<ApiError> read_common(const nlohmann::json& json, Request* out) {
  if (auto error = read_max_tokens(json, &out->max_tokens)) return error;
  if (auto error = read_bool(json, "stream", &out->stream, "stream")) return error;
  if (auto error = read_bool(json, "ignore_eos", &out->ignore_eos, "ignore_eos")) return error;
  if (const auto options = json.find("stream_options");
      options != json.end() && !options->is_null()) {
    if (!options->is_object())
      return bad_request("stream_options must be an object", "stream_options");
    if (auto error = read_bool(*options, "include_usage", &out->include_usage,
                               "stream_options.include_usage")) {
      return error;
    }
    if (auto error = read_bool(*options, "continuous_usage_stats", &out->continuous_usage,
                               "stream_options.continuous_usage_stats")) {
      return error;
    }
  }
  return std::nullopt;
}

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
  return read_common(json, out);
}

std::optional<ApiError> parse_completion_request(std::string_view body, CompletionRequest* out) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return bad_request("request body is not valid JSON", "");
  if (!json.is_object()) return bad_request("request body must be a JSON object", "");
  *out = CompletionRequest{};
  if (const auto model = json.find("model"); model != json.end() && !model->is_null()) {
    if (!model->is_string()) return bad_request("model must be a string", "model");
    out->model = model->get<std::string>();
  }
  const auto prompt = json.find("prompt");
  if (prompt == json.end() || prompt->is_null()) return bad_request("prompt is required", "prompt");
  if (prompt->is_string()) {
    out->prompts.push_back(prompt->get<std::string>());
  } else if (prompt->is_array() && !prompt->empty()) {
    for (const auto& item : *prompt) {
      // Token-id prompts are valid OpenAI input, but the sim tokenizes text only.
      if (!item.is_string()) {
        return bad_request("prompt must be a string or an array of strings", "prompt");
      }
      out->prompts.push_back(item.get<std::string>());
    }
  } else {
    return bad_request("prompt must be a string or a non-empty array of strings", "prompt");
  }
  return read_common(json, out);
}

ApiError not_found_error(std::string message) {
  return ApiError{404, "NotFoundError", std::move(message), ""};
}

std::string error_body(const ApiError& error) {
  const Json param = error.param.empty() ? Json(nullptr) : Json(error.param);
  return json_text(Json{{"error", Json{{"message", error.message},
                                       {"type", error.type},
                                       {"param", param},
                                       {"code", error.status}}}});
}

std::string render_prompt(const std::vector<ChatMessage>& messages) {
  std::string prompt;
  for (const ChatMessage& message : messages) {
    append_chat_message(&prompt, message.role, message.content);
  }
  append_assistant_header(&prompt);
  return prompt;
}

std::string_view first_user_message(const ChatRequest& request) {
  for (const ChatMessage& message : request.messages) {
    if (message.role == "user") return message.content;
  }
  return {};
}

}  // namespace kvsweep::sim
