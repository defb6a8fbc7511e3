// The JSON body of one /v1/chat/completions or /v1/completions request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/conversation.h"

namespace kvsweep::driver {

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  int max_tokens = 64;
  bool ignore_eos = true;
  bool stream = true;                 // streaming asks for usage in the last chunk
  std::optional<double> temperature;  // unset: 0, so repeated runs generate the same text
  std::string extra_body_json;        // "" or a JSON object merged last (RFC 7386 merge patch)
};

// Throws std::invalid_argument when extra_body_json is not a JSON object.
std::string chat_request_body(const ChatRequest& request);

// /v1/completions: the prompt is every message's content as plain text joined by "\n" (no
// chat template: the server sees exactly these characters, so prefixes stay comparable).
std::string completion_request_body(const ChatRequest& request);

// Checks an extra body once, before a run; returns "" when it is usable, else the reason.
std::string extra_body_problem(const std::string& extra_body_json);

}  // namespace kvsweep::driver
