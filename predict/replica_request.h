// What the fleet reads from a driver job: routing key, prompt tokens, max_tokens, ignore_eos.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/load_options.h"
#include "driver/request_source.h"
#include "sim/engine/tokenizer.h"

namespace kvsweep::predict {

// A driver job as the router and the replica see it once its JSON body is parsed: the same
// text, template and tokens as the HTTP path (driver/request_body.h writes the body,
// sim/http/openai_api.h reads it), without writing or parsing JSON.
struct ReplicaRequest {
  // KubeAI's routing key source: the first user message (chat), or the whole prompt
  // (completions: the messages' contents joined by "\n", as completion_request_body sends it).
  std::string key;
  std::vector<sim::TokenId> prompt;  // what the replica tokenizes: the chat template's text
  // max_completion_tokens, else max_tokens of the body the driver would send; nullopt when
  // neither is set (the replica then uses its profile's default_max_tokens).
  std::optional<int> max_tokens;
  bool ignore_eos = true;
  std::string error;  // non-empty: the replica answers 400 with this message (bad max_tokens)
  // The text llm-d's EPP hashes (sim/router/epp_scheduler.h); only when asked for.
  std::string epp_text;
};

// LoadOptions::extra_body_json, checked once per run. Of the body it patches, the sim acts on
// max_completion_tokens, max_tokens and ignore_eos only; other fields change nothing there.
struct BodyPatch {
  bool present = false;
  std::string json;  // the extra body as given
};

// Throws std::invalid_argument when the extra body is not a JSON object (as the driver does).
BodyPatch read_body_patch(const driver::LoadOptions& options);

// `with_epp_text`: also fill epp_text (the routing strategy is llm-d's EPP with a prefix scorer).
ReplicaRequest replica_request(const driver::Job& job, const driver::LoadOptions& options,
                               const BodyPatch& patch, bool with_epp_text = false);

}  // namespace kvsweep::predict
