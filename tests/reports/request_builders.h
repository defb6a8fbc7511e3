// Hand-made request rows and metric samples for reports tests.
#pragma once

#include <string>
#include <vector>

#include "store/rows.h"

namespace kvsweep::testing {

// A successful request; last_token_s follows from sent_s + e2e.
inline store::RequestRow ok_request(std::int64_t index, double sent_s, double ttft_ms,
                                    double e2e_ms, int prompt_tokens, int output_tokens,
                                    int cached_tokens, std::vector<double> itl_ms) {
  store::RequestRow r;
  r.index = index;
  r.conversation = static_cast<int>(index);  // a prompt of its own: no repeat
  r.ok = true;
  r.http_status = 200;
  r.sent_s = sent_s;
  r.first_token_s = sent_s + ttft_ms / 1000.0;
  r.last_token_s = sent_s + e2e_ms / 1000.0;
  r.ttft_ms = ttft_ms;
  r.e2e_ms = e2e_ms;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = output_tokens;
  r.cached_tokens = cached_tokens;
  r.itl_ms = std::move(itl_ms);
  return r;
}

// A failed request that never produced a token.
inline store::RequestRow failed_request(std::int64_t index, double sent_s, double e2e_ms,
                                        const std::string& error_kind) {
  store::RequestRow r;
  r.index = index;
  r.conversation = static_cast<int>(index);
  r.ok = false;
  r.error_kind = error_kind;
  r.error = error_kind + " after " + std::to_string(static_cast<int>(e2e_ms)) + " ms";
  r.sent_s = sent_s;
  r.e2e_ms = e2e_ms;
  r.prompt_tokens = 1000;
  r.cached_tokens = 999;  // must not count: failed requests are out of the client hit rate
  return r;
}

inline store::MetricSample sample(const std::string& phase, const std::string& source,
                                  const std::string& name, double value,
                                  const std::string& labels_json = R"({"model_name":"m"})") {
  store::MetricSample s;
  s.phase = phase;
  s.source = source;
  s.name = name;
  s.labels_json = labels_json;
  s.value = value;
  return s;
}

}  // namespace kvsweep::testing
