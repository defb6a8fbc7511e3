// The sim's deterministic chat template: how a chat's messages become the prompt text it tokenizes.
#pragma once

#include <string>
#include <string_view>

namespace kvsweep::sim {

// "<|role|>\n{content}\n" per message, then "<|assistant|>\n" once after the last: identical
// leading messages therefore give an identical leading text, hence shared tokens. The replica
// (sim/http) and the virtual-time predictor (predict/) render through these two calls, so both
// see the same tokens for the same chat.
void append_chat_message(std::string* prompt, std::string_view role, std::string_view content);
void append_assistant_header(std::string* prompt);

}  // namespace kvsweep::sim
