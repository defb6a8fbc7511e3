// The JSON body of one streamed /v1/chat/completions request.
#pragma once

#include <string>
#include <vector>

#include "driver/conversation.h"

namespace kvsweep::driver {

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  int max_tokens = 64;
  bool ignore_eos = true;
};

// Always streams with usage included and temperature 0, so output_tokens comes from the server
// and repeated runs generate the same text.
std::string chat_request_body(const ChatRequest& request);

}  // namespace kvsweep::driver
