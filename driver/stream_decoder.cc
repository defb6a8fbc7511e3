// One streamed chat or completions response: SSE events → content timing, usage, [DONE], per-request metrics.
#include "driver/stream_decoder.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kvsweep::driver {
namespace {

constexpr std::size_t kMaxQuotedData = 120;  // how much of a bad event to keep in `error`

const std::string* non_empty_string(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return nullptr;
  }
  return &it->get_ref<const std::string&>();
}

// The generated text a chunk carries, or nullptr when it carries none: choices[0] has
// non-empty text. The role-only first chunk ({"delta":{"role":"assistant","content":""}}) and
// the usage-only last chunk ("choices": []) do not: vLLM's client counts the role chunk as the
// first token; we don't, see metrics.md (vllm#27485). Reasoning text is generated tokens too,
// so it counts.
const std::string* content_of(const nlohmann::json& chunk) {
  const auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return nullptr;
  const nlohmann::json& choice = choices->front();
  if (!choice.is_object()) return nullptr;
  if (const std::string* text = non_empty_string(choice, "text")) return text;  // completions
  const auto delta = choice.find("delta");
  if (delta == choice.end() || !delta->is_object()) return nullptr;
  if (const std::string* text = non_empty_string(*delta, "content")) return text;
  if (const std::string* text = non_empty_string(*delta, "reasoning_content")) return text;
  return non_empty_string(*delta, "reasoning");
}

int int_or(const nlohmann::json& object, const char* key, int fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

void StreamDecoder::feed(std::string_view bytes, double now_s) {
  scratch_.clear();
  parser_.feed(bytes, scratch_);
  for (const SseEvent& event : scratch_) handle_event(event, now_s);
}

void StreamDecoder::handle_event(const SseEvent& event, double now_s) {
  if (done_) return;  // nothing after [DONE] belongs to this response
  if (event.data == "[DONE]") {
    done_ = true;
    return;
  }
  const nlohmann::json chunk = nlohmann::json::parse(event.data, nullptr, false);
  if (chunk.is_discarded() || !chunk.is_object()) {
    if (malformed_.empty()) {
      malformed_ = "undecodable JSON in data event: " + event.data.substr(0, kMaxQuotedData);
    }
    return;
  }
  // vLLM reports an engine failure inside a 200 stream as {"error": {...}}: the request failed.
  if (const auto error = chunk.find("error"); error != chunk.end() && !error->is_null()) {
    if (server_error_.empty()) {
      const bool has_message = error->is_object() && error->contains("message") &&
                               (*error)["message"].is_string();
      server_error_ = "error event in stream: " +
                      (has_message ? (*error)["message"].get<std::string>() : error->dump())
                          .substr(0, kMaxQuotedData);
    }
    return;
  }
  // With continuous_usage_stats every chunk carries cumulative usage, so the difference from the
  // previous chunk is how many tokens this one holds; without it, one event is one token.
  // The split needs a previous cumulative count: a server that puts usage only on its last
  // content chunk must not have that chunk's gap divided by the whole completion.
  int tokens = 1;
  const auto usage = chunk.find("usage");
  if (usage != chunk.end() && usage->is_object()) {
    prompt_tokens_ = int_or(*usage, "prompt_tokens", prompt_tokens_);
    const int completion = int_or(*usage, "completion_tokens", -1);
    if (completion >= 0) {
      if (completion_tokens_ >= 0) tokens = completion - completion_tokens_;
      completion_tokens_ = completion;
    }
    const auto details = usage->find("prompt_tokens_details");
    if (details != usage->end() && details->is_object()) {
      cached_tokens_ = int_or(*details, "cached_tokens", cached_tokens_);
    }
  }
  if (const std::string* text = content_of(chunk)) {
    content_.push_back({now_s, std::max(tokens, 1)});
    if (keep_text_) text_ += *text;
  }
}

void StreamDecoder::finish(RequestRecord& record) const {
  record.prompt_tokens = prompt_tokens_;
  record.cached_tokens = cached_tokens_;
  if (completion_tokens_ >= 0) {
    record.output_tokens = completion_tokens_;
    record.tokens_estimated = false;
  } else {
    record.output_tokens = static_cast<int>(content_.size());
    record.tokens_estimated = true;
  }
  record.itl_ms.clear();
  if (!content_.empty()) {
    record.first_token_s = content_.front().time_s;
    record.last_token_s = content_.back().time_s;
    record.ttft_ms = (record.first_token_s - record.sent_s) * 1000.0;
    record.e2e_ms = (record.last_token_s - record.sent_s) * 1000.0;
    for (std::size_t i = 1; i < content_.size(); ++i) {
      const int parts = content_[i].tokens;
      const double gap_ms = (content_[i].time_s - content_[i - 1].time_s) * 1000.0;
      for (int k = 0; k < parts; ++k) record.itl_ms.push_back(gap_ms / parts);
    }
  }
  record.tpot_ms = record.output_tokens > 1 && !content_.empty()
                       ? (record.e2e_ms - record.ttft_ms) / (record.output_tokens - 1)
                       : 0.0;
  if (!server_error_.empty()) {
    record.ok = false;
    record.error_kind = kErrorServer;
    record.error = server_error_;
  } else if (!malformed_.empty()) {
    record.ok = false;
    record.error_kind = kErrorMalformed;
    record.error = malformed_;
  } else if (!done_) {
    record.ok = false;
    record.error_kind = kErrorStreamDropped;
    record.error = "stream ended before data: [DONE]";
  } else {
    record.ok = true;
    record.error_kind.clear();
    record.error.clear();
  }
}

}  // namespace kvsweep::driver
