// ShareGPT JSON -> multi-turn conversations with output lengths from the dataset's replies.
#include "driver/datasets/sharegpt.h"

#include <algorithm>
#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/json_input.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

enum class Speaker { kUser, kAssistant, kSystem, kOther };

Speaker speaker_of(const std::string& from) {
  if (from == "human" || from == "user") return Speaker::kUser;
  if (from == "gpt" || from == "assistant" || from == "chatgpt" || from == "bard" ||
      from == "bing") {
    return Speaker::kAssistant;
  }
  if (from == "system") return Speaker::kSystem;
  return Speaker::kOther;
}

int reply_tokens(const std::string& reply) {
  return std::max<int>(1, static_cast<int>(reply.size() / kBytesPerToken));
}

// One ShareGPT entry as a Conversation (possibly with no turns).
Conversation read_conversation(const nlohmann::json& entry, const std::string& path,
                               const std::string& entry_path) {
  if (!entry.is_object()) {
    throw DatasetError(path_location(path, entry_path) + ": expected an object, got " +
                       describe_json(entry));
  }
  const nlohmann::json& messages =
      require_array(entry, "conversations", path_location(path, entry_path));
  Conversation conversation;
  bool want_user = true;
  for (std::size_t m = 0; m < messages.size(); ++m) {
    const std::string location =
        path_location(path, entry_path + ".conversations[" + std::to_string(m) + "]");
    const std::string from = require_string(messages[m], "from", location);
    std::string value = require_string(messages[m], "value", location);
    const Speaker speaker = speaker_of(from);
    if (m == 0 && speaker == Speaker::kSystem) {
      conversation.system_prompt = std::move(value);
    } else if (want_user && speaker == Speaker::kUser) {
      conversation.user.push_back(std::move(value));
      want_user = false;
    } else if (!want_user && speaker == Speaker::kAssistant) {
      conversation.max_tokens.push_back(reply_tokens(value));
      conversation.assistant.push_back(std::move(value));
      want_user = true;
    } else {
      break;  // the first break in human/gpt alternation ends the usable conversation
    }
  }
  if (!want_user) conversation.user.pop_back();  // a last question with no reply to size it
  return conversation;
}

}  // namespace

Workload load_sharegpt(const DatasetOptions& options) {
  if (options.path.empty()) throw DatasetError("sharegpt: path: required");
  if (options.min_messages < 0) {
    throw DatasetError("sharegpt: min_messages: expected >= 0, got " +
                       std::to_string(options.min_messages));
  }
  if (options.max_conversations < 0) {
    throw DatasetError("sharegpt: max_conversations: expected >= 0 (0: no limit), got " +
                       std::to_string(options.max_conversations));
  }
  const nlohmann::json document = parse_json_document(options.path);
  if (!document.is_array()) {
    throw DatasetError(options.path + ": expected a JSON array of conversations, got " +
                       describe_json(document));
  }
  Workload workload;
  std::size_t turns = 0;
  for (std::size_t i = 0; i < document.size(); ++i) {
    if (options.max_conversations > 0 &&
        workload.conversations.size() >= static_cast<std::size_t>(options.max_conversations)) {
      break;
    }
    Conversation conversation =
        read_conversation(document[i], options.path, "[" + std::to_string(i) + "]");
    const std::size_t usable_messages = 2 * conversation.user.size();
    if (conversation.user.empty() ||
        usable_messages < static_cast<std::size_t>(options.min_messages)) {
      continue;
    }
    turns += conversation.user.size();
    workload.conversations.push_back(std::move(conversation));
  }
  if (workload.conversations.empty()) {
    throw DatasetError(options.path + ": no conversation of " + std::to_string(document.size()) +
                       " has at least " + std::to_string(std::max(options.min_messages, 2)) +
                       " usable messages (alternating user/assistant); lower min_messages");
  }
  workload.description = "sharegpt: " + std::to_string(workload.conversations.size()) +
                         " conversations, " + std::to_string(turns) + " turns";
  if (options.min_messages > 0) {
    workload.description += " (min_messages " + std::to_string(options.min_messages) + ")";
  }
  return workload;
}

}  // namespace kvsweep::driver
