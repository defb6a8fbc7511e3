// Chat threads JSON -> conversations whose history is the server's own replies.
#include "driver/datasets/chat_threads.h"

#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/json_input.h"

namespace kvsweep::driver {

Workload load_chat_threads(const DatasetOptions& options) {
  if (options.path.empty()) throw DatasetError("chat-threads: path: required");
  if (options.max_conversations < 0) {
    throw DatasetError("chat-threads: max_conversations: expected >= 0 (0: no limit), got " +
                       std::to_string(options.max_conversations));
  }
  const nlohmann::json document = parse_json_document(options.path);
  if (!document.is_array()) {
    throw DatasetError(options.path + ": expected a JSON array of threads, got " +
                       describe_json(document));
  }
  Workload workload;
  std::size_t turns = 0;
  for (std::size_t i = 0; i < document.size(); ++i) {
    if (options.max_conversations > 0 &&
        workload.conversations.size() >= static_cast<std::size_t>(options.max_conversations)) {
      break;
    }
    const std::string thread_path = "[" + std::to_string(i) + "]";
    const nlohmann::json& thread = document[i];
    Conversation conversation;
    conversation.replies_from_server = true;
    const nlohmann::json* messages = &thread;
    std::string messages_path = thread_path;
    if (thread.is_object()) {
      const std::string location = path_location(options.path, thread_path);
      messages = &require_array(thread, "userMessages", location);
      messages_path += ".userMessages";
      if (find_field(thread, "systemPrompt") != nullptr) {
        conversation.system_prompt = require_string(thread, "systemPrompt", location);
      }
    } else if (!thread.is_array()) {
      throw DatasetError(path_location(options.path, thread_path) +
                         ": expected an array of user messages or an object with "
                         "\"userMessages\", got " +
                         describe_json(thread));
    }
    if (messages->empty()) {
      throw DatasetError(path_location(options.path, messages_path) +
                         ": expected at least one user message, got none");
    }
    for (std::size_t m = 0; m < messages->size(); ++m) {
      const std::string location =
          path_location(options.path, messages_path + "[" + std::to_string(m) + "]");
      conversation.user.push_back(expect_string((*messages)[m], location));
      conversation.assistant.emplace_back();  // never sent: the server's replies are
    }
    turns += conversation.user.size();
    workload.conversations.push_back(std::move(conversation));
  }
  if (workload.conversations.empty()) {
    throw DatasetError(options.path + ": no threads (the array is empty)");
  }
  workload.description = "chat-threads: " + std::to_string(workload.conversations.size()) +
                         " threads, " + std::to_string(turns) + " turns, replies from the server";
  return workload;
}

}  // namespace kvsweep::driver
