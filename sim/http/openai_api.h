// The OpenAI chat and completions wire format: parse requests (openai_api.cc), render prompts,
// format replies (openai_format.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::sim {

struct ChatMessage {
  std::string role;
  std::string content;  // a string content, or the text parts of an array concatenated
};

// The sub-set of the request the simulator acts on; unknown fields are accepted and ignored.
struct ChatRequest {
  std::string model;  // empty when absent: the served model is assumed, as vLLM does
  std::vector<ChatMessage> messages;
  std::optional<int> max_tokens;  // max_completion_tokens wins over max_tokens, as in vLLM
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  bool continuous_usage = false;  // stream_options.continuous_usage_stats: usage on every chunk
  bool ignore_eos = false;        // false: output stops at a natural length (scheduler.h)
};

// POST /v1/completions: the same knobs, with one or more prompt strings (one choice each).
struct CompletionRequest {
  std::string model;
  std::vector<std::string> prompts;  // "prompt": a string, or an array of strings
  std::optional<int> max_tokens;
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage = false;
  bool ignore_eos = false;
};

// An error reply in OpenAI's shape: {"error":{"message","type","param","code"}}.
struct ApiError {
  int status = 400;
  std::string type = "BadRequestError";
  std::string message;
  std::string param;  // empty renders as null
};

// Parses a chat-completions body. Returns the error to send when the JSON is malformed or a
// field has the wrong type or value (missing/empty messages, max_tokens < 1, ...).
std::optional<ApiError> parse_chat_request(std::string_view body, ChatRequest* out);
std::optional<ApiError> parse_completion_request(std::string_view body, CompletionRequest* out);

ApiError not_found_error(std::string message);
std::string error_body(const ApiError& error);

// The sim's chat template (sim/engine/chat_template.h) over a parsed request's messages.
std::string render_prompt(const std::vector<ChatMessage>& messages);

// KubeAI's routing key source: the first message with role "user"; empty when there is none.
std::string_view first_user_message(const ChatRequest& request);

// Which endpoint a reply belongs to: chat ("chat.completion[.chunk]", delta/message) or text
// completions ("text_completion", text).
enum class ApiKind { kChat, kCompletion };

// Identity repeated on every chunk of one completion.
struct CompletionId {
  std::string id;            // "chatcmpl-..." or "cmpl-..."
  std::int64_t created = 0;  // unix seconds
  std::string model;
};

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;  // usage.prompt_tokens_details.cached_tokens
};

// Server-sent events, each "data: <json>\n\n". vLLM sends the role chunk with an empty
// content first, then one chunk per token; finish_reason is set on the last content chunk.
std::string sse_role_chunk(const CompletionId& id);
std::string sse_content_chunk(const CompletionId& id, std::string_view piece,
                              std::string_view finish_reason);  // empty: null
std::string sse_usage_chunk(const CompletionId& id, const Usage& usage);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// Non-streaming reply: one "chat.completion" object.
std::string completion_body(const CompletionId& id, std::string_view content,
                            std::string_view finish_reason, const Usage& usage);

// The general forms, for either endpoint and any choice index. `usage` (may be null) is added
// to the chunk: continuous_usage_stats puts the running usage on every chunk, as vLLM does.
std::string sse_token_chunk(ApiKind kind, const CompletionId& id, int index, std::string_view piece,
                            std::string_view finish_reason, const Usage* usage);
std::string sse_role_chunk(const CompletionId& id, int index, const Usage* usage);
std::string sse_usage_chunk(ApiKind kind, const CompletionId& id, const Usage& usage);

struct ChoiceText {
  std::string text;
  std::string finish_reason;
};
std::string response_body(ApiKind kind, const CompletionId& id,
                          const std::vector<ChoiceText>& choices, const Usage& usage);

// GET /v1/models: {"object":"list","data":[...]} with `entries` (JSON objects as text) in order,
// the one form a replica and the router both answer with.
std::string models_list_body(const std::vector<std::string>& entries);
// One served model's entry, with vLLM's fields.
std::string model_entry(std::string_view model, std::int64_t created);
// A server of one model: models_list_body({model_entry(model, created)}).
std::string models_body(std::string_view model, std::int64_t created);

}  // namespace kvsweep::sim
