// The JSON body of one /v1/chat/completions or /v1/completions request.
#include "driver/request_body.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error_kinds.h"

namespace kvsweep::driver {
namespace {

// ---- the general path: a JSON document, merge-patched with the extra body ----

nlohmann::json common_fields(const ChatRequest& request) {
  nlohmann::json body = {
      {"model", request.model},
      {"max_tokens", request.max_tokens},
      {"ignore_eos", request.ignore_eos},
      {"stream", request.stream},
      {"temperature", request.temperature.value_or(0.0)},
  };
  // Keep 0 an integer in the JSON when unset: some servers validate the type strictly.
  if (!request.temperature) body["temperature"] = 0;
  if (request.stream) body["stream_options"] = {{"include_usage", true}};
  return body;
}

std::string finish(nlohmann::json body, const std::string& extra_body_json) {
  const nlohmann::json extra = nlohmann::json::parse(extra_body_json, nullptr, false);
  if (!extra.is_object()) throw UsageError("extra body: expected a JSON object");
  body.merge_patch(extra);
  return body.dump();
}

// ---- the fast path: the same bytes written directly ----
//
// Without an extra body, every request has the same fields, so the body is written as text,
// keys in the order a JSON object dumps them (alphabetical), byte for byte what the general
// path gives (request_body_test checks both on the same requests). A document per request was
// a tenth of the transport's CPU at high request rates (docs/performance.md).

void append_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void append_int(std::string& out, int value) {
  char digits[16];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, result.ptr);
}

void append_model(std::string& out, const ChatRequest& request) {
  out += ",\"model\":";
  append_escaped(out, request.model);
}

// The last fields: stream, stream_options, temperature.
void append_tail(std::string& out, const ChatRequest& request) {
  out += request.stream ? ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"
                        : ",\"stream\":false";
  out += ",\"temperature\":";
  // A set temperature is printed as a JSON document prints a double; unset is the integer 0.
  out += request.temperature ? nlohmann::json(*request.temperature).dump() : std::string("0");
  out += '}';
}

// The first fields: ignore_eos, max_tokens (then messages, model, or model, prompt).
void append_head(std::string& out, const ChatRequest& request) {
  out += request.ignore_eos ? "{\"ignore_eos\":true" : "{\"ignore_eos\":false";
  out += ",\"max_tokens\":";
  append_int(out, request.max_tokens);
}

std::size_t text_size(const ChatRequest& request) {
  std::size_t size = 160 + request.model.size();
  for (const ChatMessage& m : request.messages) size += m.content.size() + m.role.size() + 32;
  return size;
}

}  // namespace

std::string chat_request_body(const ChatRequest& request) {
  if (!request.extra_body_json.empty()) {
    nlohmann::json messages = nlohmann::json::array();
    for (const ChatMessage& message : request.messages) {
      messages.push_back({{"role", message.role}, {"content", message.content}});
    }
    nlohmann::json body = common_fields(request);
    body["messages"] = std::move(messages);
    return finish(std::move(body), request.extra_body_json);
  }
  std::string out;
  out.reserve(text_size(request));
  append_head(out, request);
  out += ",\"messages\":[";
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    out += i == 0 ? "{\"content\":" : ",{\"content\":";
    append_escaped(out, request.messages[i].content);
    out += ",\"role\":";
    append_escaped(out, request.messages[i].role);
    out += '}';
  }
  out += ']';
  append_model(out, request);
  append_tail(out, request);
  return out;
}

std::string completion_request_body(const ChatRequest& request) {
  std::string prompt;
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    if (i > 0) prompt += '\n';
    prompt += request.messages[i].content;
  }
  if (!request.extra_body_json.empty()) {
    nlohmann::json body = common_fields(request);
    body["prompt"] = std::move(prompt);
    return finish(std::move(body), request.extra_body_json);
  }
  std::string out;
  out.reserve(text_size(request));
  append_head(out, request);
  append_model(out, request);
  out += ",\"prompt\":";
  append_escaped(out, prompt);
  append_tail(out, request);
  return out;
}

std::string extra_body_problem(const std::string& extra_body_json) {
  if (extra_body_json.empty()) return "";
  const nlohmann::json extra = nlohmann::json::parse(extra_body_json, nullptr, false);
  if (extra.is_discarded()) return "not valid JSON";
  if (!extra.is_object()) return "expected a JSON object, got " + std::string(extra.type_name());
  return "";
}

}  // namespace kvsweep::driver
