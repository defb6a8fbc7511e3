// One streamed chat or completions response: SSE events → content timing, usage, [DONE],
// per-request metrics.
#include "driver/stream_decoder.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "driver/chunk_fields.h"

namespace kvsweep::driver {
namespace {

constexpr std::size_t kMaxQuotedData = 120;  // how much of a bad event to keep in `error`

// The message of an error event: error.message when it is a string, else the error as JSON.
std::string error_text(const std::string& data) {
  const nlohmann::json chunk = nlohmann::json::parse(data, nullptr, false);
  const nlohmann::json& error = chunk["error"];
  const bool has_message =
      error.is_object() && error.contains("message") && error["message"].is_string();
  return (has_message ? error["message"].get<std::string>() : error.dump())
      .substr(0, kMaxQuotedData);
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
  ChunkFields chunk;
  if (!read_chunk(event.data, chunk) || !chunk.object) {
    if (malformed_.empty()) {
      malformed_ = "undecodable JSON in data event: " + event.data.substr(0, kMaxQuotedData);
    }
    return;
  }
  // vLLM reports an engine failure inside a 200 stream as {"error": {...}}: the request failed.
  // Rare, so its message is read from a whole document.
  if (chunk.error) {
    if (server_error_.empty()) server_error_ = "error event in stream: " + error_text(event.data);
    return;
  }
  // With continuous_usage_stats every chunk carries cumulative usage, so the difference from the
  // previous chunk is how many tokens this one holds; without it, one event is one token.
  // The split needs a previous cumulative count: a server that puts usage only on its last
  // content chunk must not have that chunk's gap divided by the whole completion.
  int tokens = 1;
  if (chunk.prompt_tokens) prompt_tokens_ = *chunk.prompt_tokens;
  if (chunk.completion_tokens && *chunk.completion_tokens >= 0) {
    if (completion_tokens_ >= 0) tokens = *chunk.completion_tokens - completion_tokens_;
    completion_tokens_ = *chunk.completion_tokens;
  }
  if (chunk.cached_tokens) cached_tokens_ = *chunk.cached_tokens;
  // Generated text: vLLM's client counts the role-only first chunk as the first token; we
  // don't, see metrics.md (vllm#27485). Reasoning text is generated tokens too, so it counts.
  if (chunk.content) {
    content_.push_back({now_s, std::max(tokens, 1)});
    if (keep_text_) text_ += *chunk.content;
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
  if (parser_.too_large()) {
    record.ok = false;
    record.error_kind = kErrorMalformed;
    record.error = "event too large: an SSE event passed " +
                   std::to_string(parser_.max_event_bytes()) +
                   " bytes without ending (the limit is --max-event-bytes); reading stopped";
  } else if (!server_error_.empty()) {
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
