// JSONL prompts -> one single-turn conversation per line.
#include "driver/datasets/jsonl_prompts.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/json_input.h"

namespace kvsweep::driver {
namespace {

// {"messages": [...]}: an optional system message, then one user message.
void read_messages(const nlohmann::json& row, const std::string& location,
                   Conversation& conversation) {
  const nlohmann::json& messages = require_array(row, "messages", location);
  std::size_t m = 0;
  auto where = [&](std::size_t index) {
    return location + ": messages[" + std::to_string(index) + "]";
  };
  if (m < messages.size() && require_string(messages[m], "role", where(m)) == "system") {
    conversation.system_prompt = require_string(messages[m], "content", where(m));
    ++m;
  }
  if (m + 1 != messages.size()) {
    throw_field_error(location, "messages",
                      "expected an optional system message then one user message, got " +
                          std::to_string(messages.size()) +
                          " messages (for multi-turn history use the sharegpt kind)");
  }
  const std::string role = require_string(messages[m], "role", where(m));
  if (role != "user") {
    throw_field_error(where(m), "role", "expected \"user\", got \"" + role + "\"");
  }
  conversation.user.push_back(require_string(messages[m], "content", where(m)));
}

}  // namespace

Workload load_jsonl_prompts(const DatasetOptions& options) {
  if (options.path.empty()) throw DatasetError("jsonl: path: required");
  Workload workload;
  for_each_jsonl_row(options.path, [&](const nlohmann::json& row, int line) {
    const std::string location = line_location(options.path, line);
    Conversation conversation;
    const bool has_prompt = find_field(row, "prompt") != nullptr;
    const bool has_messages = find_field(row, "messages") != nullptr;
    if (has_prompt == has_messages) {
      throw DatasetError(location + (has_prompt
                                         ? ": has both \"prompt\" and \"messages\"; "
                                           "expected one of them"
                                         : ": expected a \"prompt\" or a \"messages\" field"));
    }
    if (has_prompt) {
      conversation.user.push_back(require_string(row, "prompt", location));
    } else {
      read_messages(row, location, conversation);
    }
    conversation.assistant.emplace_back();
    std::optional<std::int64_t> max_tokens = optional_integer(row, "max_tokens", location, 1);
    if (!max_tokens) max_tokens = optional_integer(row, "output_tokens", location, 1);
    if (max_tokens)
      conversation.max_tokens.push_back(
          static_cast<int>(std::min<std::int64_t>(*max_tokens, INT32_MAX)));
    workload.conversations.push_back(std::move(conversation));
  });
  if (workload.conversations.empty())
    throw DatasetError(options.path + ": no prompts (the file is empty)");
  workload.description = "jsonl: " + std::to_string(workload.conversations.size()) + " prompts";
  return workload;
}

}  // namespace kvsweep::driver
