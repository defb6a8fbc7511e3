// The fields of one streamed chunk that the decoder needs, read without building a document.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvsweep::driver {

// From one `data:` event of an OpenAI-style stream (chat or completions chunk).
struct ChunkFields {
  bool object = false;  // the event is a JSON object (anything else is malformed)
  bool error = false;   // a top-level "error" that is not null (vLLM's failure in a 200 stream)
  // The generated text the chunk carries: choices[0].text (completions), else
  // choices[0].delta.content, .reasoning_content or .reasoning, whichever comes first in that
  // order and is a non-empty string; unset when none is (a role-only or usage-only chunk).
  std::optional<std::string> content;
  // usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details.cached_tokens
  // when they are integers.
  std::optional<int> prompt_tokens;
  std::optional<int> completion_tokens;
  std::optional<int> cached_tokens;
};

// Reads `data` in one pass (nlohmann's SAX interface: no JSON document, no allocation per
// node), with the meaning a parsed document would give: for a repeated key the last value
// counts. Returns false when `data` is not valid JSON. The decoder's cost per event was mostly
// building and freeing documents it read five fields from (docs/performance.md).
bool read_chunk(std::string_view data, ChunkFields& fields);

}  // namespace kvsweep::driver
