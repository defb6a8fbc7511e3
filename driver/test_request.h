// The one request sent before a load run to check the URL, model and key, as vLLM's client does.
#pragma once

#include "driver/load_options.h"
#include "driver/request_record.h"

namespace kvsweep::driver {

// The prompt of the test request: short and unlike any dataset's, so that it leaves nothing
// in a prefix cache that a measured prompt could hit (vLLM's client sends its first dataset
// prompt, which then runs warm).
inline constexpr const char* kTestRequestPrompt = "kvsweep test request: reply with one word.";

// Sends one chat or completions request with `options`' URL, endpoint, model, key, headers,
// body settings and timeouts, asking for one output token, and returns its record (never
// throws for a failed request: record.ok says). Throws std::invalid_argument for bad options.
RequestRecord send_test_request(const LoadOptions& options);

}  // namespace kvsweep::driver
