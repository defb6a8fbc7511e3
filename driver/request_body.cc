// The JSON body of one streamed /v1/chat/completions request.
#include "driver/request_body.h"

#include <nlohmann/json.hpp>

namespace kvsweep::driver {

std::string chat_request_body(const ChatRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  for (const ChatMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  const nlohmann::json body = {
      {"model", request.model},
      {"messages", std::move(messages)},
      {"max_tokens", request.max_tokens},
      {"ignore_eos", request.ignore_eos},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}},
      {"temperature", 0},
  };
  return body.dump();
}

}  // namespace kvsweep::driver
