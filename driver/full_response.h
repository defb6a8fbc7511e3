// One non-streamed response body (stream=false): text, usage and timings into a RequestRecord.
#pragma once

#include <string>
#include <string_view>

#include "driver/request_record.h"

namespace kvsweep::driver {

// A whole JSON completion that arrived at done_s. With no stream there is no first token to
// see, so TTFT = E2E = done_s - sent_s and there are no ITL gaps (documented in metrics.md's
// spirit: we never invent a time we did not observe). output_tokens comes from usage, else 1
// when any text came back (tokens_estimated). `text` receives the generated text if non-null.
// Sets ok, or malformed when the body is not a completion.
void decode_full_response(std::string_view body, double done_s, RequestRecord& record,
                          std::string* text);

}  // namespace kvsweep::driver
