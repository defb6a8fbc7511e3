// The one normal form of an OpenAI-compatible server's base URL, whichever way a user wrote it.
#pragma once

#include <string>

namespace kvsweep {

// "http://host:8000", "http://host:8000/", "http://host:8000/v1" and "http://host:8000/v1/"
// all become "http://host:8000": the driver appends /v1/chat/completions, /v1/completions or
// /v1/models itself, so a base URL that already ends in /v1 would otherwise be sent to
// /v1/v1/... (as vLLM's --base-url takes it without /v1). A path before /v1 is kept
// ("http://kubeai/openai/v1" -> "http://kubeai/openai").
std::string normalize_base_url(std::string url);

}  // namespace kvsweep
