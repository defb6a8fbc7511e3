// The JSON body of one /v1/chat/completions or /v1/completions request.
#include "driver/request_body.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kvsweep::driver {
namespace {

nlohmann::json common_fields(const ChatRequest& request) {
  nlohmann::json body = {
      {"model", request.model},
      {"max_tokens", request.max_tokens},
      {"ignore_eos", request.ignore_eos},
      {"stream", request.stream},
      {"temperature", request.temperature.value_or(0.0)},
  };
  // Keep 0 an integer in the JSON when unset: some servers validate the type strictly.
  if (!request.temperature) body["temperature"] = 0;
  if (request.stream) body["stream_options"] = {{"include_usage", true}};
  return body;
}

std::string finish(nlohmann::json body, const std::string& extra_body_json) {
  if (!extra_body_json.empty()) {
    const nlohmann::json extra = nlohmann::json::parse(extra_body_json, nullptr, false);
    if (!extra.is_object()) throw std::invalid_argument("extra body: expected a JSON object");
    body.merge_patch(extra);
  }
  return body.dump();
}

}  // namespace

std::string chat_request_body(const ChatRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  for (const ChatMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  nlohmann::json body = common_fields(request);
  body["messages"] = std::move(messages);
  return finish(std::move(body), request.extra_body_json);
}

std::string completion_request_body(const ChatRequest& request) {
  std::string prompt;
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    if (i > 0) prompt += '\n';
    prompt += request.messages[i].content;
  }
  nlohmann::json body = common_fields(request);
  body["prompt"] = std::move(prompt);
  return finish(std::move(body), request.extra_body_json);
}

std::string extra_body_problem(const std::string& extra_body_json) {
  if (extra_body_json.empty()) return "";
  const nlohmann::json extra = nlohmann::json::parse(extra_body_json, nullptr, false);
  if (extra.is_discarded()) return "not valid JSON";
  if (!extra.is_object()) return "expected a JSON object, got " + std::string(extra.type_name());
  return "";
}

}  // namespace kvsweep::driver
