// What a dataset sends, counted as the simulated fleet counts it.
#include "orchestrator/scenario/dataset_tokens.h"

#include <string>
#include <vector>

#include "driver/conversation.h"
#include "sim/engine/chat_template.h"
#include "sim/engine/tokenizer.h"

namespace kvsweep::orchestrator {

double DatasetTokens::mean_prompt_tokens() const {
  return requests == 0 ? 0 : static_cast<double>(prompt_tokens) / static_cast<double>(requests);
}

double DatasetTokens::mean_output_tokens() const {
  return requests == 0 ? 0 : static_cast<double>(output_tokens) / static_cast<double>(requests);
}

DatasetTokens count_dataset_tokens(const driver::Workload& workload, int default_max_tokens) {
  DatasetTokens counted;
  const std::vector<std::string> no_server_replies;
  for (const driver::Conversation& conversation : workload.conversations) {
    const std::vector<std::string>* replies =
        conversation.replies_from_server ? &no_server_replies : nullptr;
    for (std::size_t turn = 0; turn < conversation.user.size(); ++turn) {
      std::string text;
      for (const driver::ChatMessage& m :
           driver::messages_for_turn(conversation, static_cast<int>(turn), replies)) {
        sim::append_chat_message(&text, m.role, m.content);
      }
      sim::append_assistant_header(&text);
      counted.prompt_tokens += static_cast<std::int64_t>(sim::tokenize(text).size());
      const int own = turn < conversation.max_tokens.size() ? conversation.max_tokens[turn] : 0;
      counted.output_tokens += own > 0 ? own : default_max_tokens;
      ++counted.requests;
    }
  }
  return counted;
}

}  // namespace kvsweep::orchestrator
