// What the fleet reads from a driver job: routing key, prompt tokens, max_tokens, ignore_eos.
#include "predict/replica_request.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error_kinds.h"
#include "sim/engine/chat_template.h"
#include "sim/router/epp_scheduler.h"

namespace kvsweep::predict {
namespace {

// The merged body's max_completion_tokens, else max_tokens, as the sim's request parser reads
// them (sim/http/openai_api.cc read_max_tokens): null means absent; anything but an integer
// >= 1 is the 400 it answers.
void read_limits(const nlohmann::json& body, ReplicaRequest& out) {
  out.max_tokens.reset();
  for (const char* field : {"max_completion_tokens", "max_tokens"}) {
    const auto it = body.find(field);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        it->get<std::int64_t>() > std::numeric_limits<int>::max()) {
      out.error = std::string(field) + " must be an integer >= 1";
      return;
    }
    out.max_tokens = it->get<int>();
    return;
  }
}

}  // namespace

BodyPatch read_body_patch(const driver::LoadOptions& options) {
  BodyPatch patch;
  if (options.extra_body_json.empty()) return patch;
  const nlohmann::json extra = nlohmann::json::parse(options.extra_body_json, nullptr, false);
  if (!extra.is_object()) throw UsageError("extra body: expected a JSON object");
  patch.present = true;
  patch.json = options.extra_body_json;
  return patch;
}

ReplicaRequest replica_request(const driver::Job& job, const driver::LoadOptions& options,
                               const BodyPatch& patch, bool with_epp_text) {
  ReplicaRequest out;
  out.max_tokens = job.max_tokens;
  out.ignore_eos = options.ignore_eos;
  if (job.max_tokens < 1) out.error = "max_tokens must be an integer >= 1";
  if (patch.present) {
    out.error.clear();
    nlohmann::json body = {{"max_tokens", job.max_tokens}, {"ignore_eos", options.ignore_eos}};
    body.merge_patch(nlohmann::json::parse(patch.json));
    read_limits(body, out);
    if (const auto it = body.find("ignore_eos");
        out.error.empty() && it != body.end() && !it->is_null()) {
      if (it->is_boolean()) {
        out.ignore_eos = it->get<bool>();
      } else {
        out.error = "ignore_eos must be a boolean";
      }
    }
  }
  std::string text;
  if (options.endpoint == driver::LoadOptions::Endpoint::kChat) {
    std::size_t size = 16;
    for (const driver::ChatMessage& m : job.messages) size += m.role.size() + m.content.size() + 6;
    text.reserve(size);
    bool keyed = false;
    for (const driver::ChatMessage& m : job.messages) {
      sim::append_chat_message(&text, m.role, m.content);
      if (with_epp_text) sim::append_epp_chat_message(&out.epp_text, m.role, m.content);
      if (!keyed && m.role == "user") {
        out.key = m.content;
        keyed = true;
      }
    }
    sim::append_assistant_header(&text);
  } else {
    for (std::size_t i = 0; i < job.messages.size(); ++i) {
      if (i > 0) text += '\n';
      text += job.messages[i].content;
    }
    out.key = text;
    if (with_epp_text) out.epp_text = text;
  }
  out.prompt = sim::tokenize(text);
  return out;
}

}  // namespace kvsweep::predict
