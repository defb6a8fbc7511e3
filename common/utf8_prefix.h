// Cutting text to a byte budget without cutting a UTF-8 character in two.
#pragma once

#include <cstddef>
#include <string_view>

namespace kvsweep {

// The longest prefix of `text` of at most `max_bytes` bytes that ends before a character, not
// inside one: a UTF-8 sequence cut short is no text a JSON writer accepts (nlohmann::json's
// dump() throws on it) nor one a terminal or a browser shows.
inline std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace kvsweep
