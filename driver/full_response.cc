// One non-streamed response body (stream=false): text, usage and timings into a RequestRecord.
#include "driver/full_response.h"

#include <nlohmann/json.hpp>

namespace kvsweep::driver {
namespace {

constexpr std::size_t kMaxQuoted = 120;

int int_at(const nlohmann::json& object, const char* key, int fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

// choices[0].message.content (chat) or choices[0].text (completions); nullptr when absent.
const nlohmann::json* text_of(const nlohmann::json& response) {
  const auto choices = response.find("choices");
  if (choices == response.end() || !choices->is_array() || choices->empty()) return nullptr;
  const nlohmann::json& choice = choices->front();
  if (!choice.is_object()) return nullptr;
  if (const auto text = choice.find("text"); text != choice.end() && text->is_string()) {
    return &*text;
  }
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) return nullptr;
  const auto content = message->find("content");
  return content != message->end() && content->is_string() ? &*content : nullptr;
}

}  // namespace

void decode_full_response(std::string_view body, double done_s, RequestRecord& record,
                          std::string* text) {
  const nlohmann::json response = nlohmann::json::parse(body, nullptr, false);
  const nlohmann::json* content = response.is_object() ? text_of(response) : nullptr;
  if (content == nullptr) {
    record.ok = false;
    record.error_kind = kErrorMalformed;
    record.error = "not a completion response: " + std::string(body.substr(0, kMaxQuoted));
    return;
  }
  const std::string& generated = content->get_ref<const std::string&>();
  if (text != nullptr) *text = generated;
  record.first_token_s = done_s;
  record.last_token_s = done_s;
  record.ttft_ms = (done_s - record.sent_s) * 1000.0;
  record.e2e_ms = record.ttft_ms;
  record.tpot_ms = 0;
  record.itl_ms.clear();
  record.output_tokens = generated.empty() ? 0 : 1;
  record.tokens_estimated = true;
  if (const auto usage = response.find("usage"); usage != response.end() && usage->is_object()) {
    record.prompt_tokens = int_at(*usage, "prompt_tokens", -1);
    const int completion = int_at(*usage, "completion_tokens", -1);
    if (completion >= 0) {
      record.output_tokens = completion;
      record.tokens_estimated = false;
    }
    const auto details = usage->find("prompt_tokens_details");
    if (details != usage->end() && details->is_object()) {
      record.cached_tokens = int_at(*details, "cached_tokens", -1);
    }
  }
  record.ok = true;
  record.error_kind.clear();
  record.error.clear();
}

}  // namespace kvsweep::driver
