// The sim's deterministic chat template: how a chat's messages become the prompt text it tokenizes.
#include "sim/engine/chat_template.h"

namespace kvsweep::sim {

void append_chat_message(std::string* prompt, std::string_view role, std::string_view content) {
  prompt->append("<|").append(role).append("|>\n").append(content).push_back('\n');
}

void append_assistant_header(std::string* prompt) { prompt->append("<|assistant|>\n"); }

}  // namespace kvsweep::sim
