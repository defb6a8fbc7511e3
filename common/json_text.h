// JSON text from a document that may hold bytes a peer or a file sent: never throws on them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kvsweep {

// nlohmann's dump() throws on a string that is not valid UTF-8 (a request path, a header, a
// name read from YAML); inside a server's handler that exception ends the process. Invalid
// bytes become U+FFFD instead, so the answer is still valid JSON and says what was sent.
template <class Json>
std::string json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace kvsweep
