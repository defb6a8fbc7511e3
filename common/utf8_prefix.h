// Cutting text to a byte budget without cutting a UTF-8 character in two, and the short,
// escaped excerpt of an input's text that a message may quote.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
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

// `text` as a message may quote it: every control character escaped (\n, \t, \r, \x1B: a
// terminal shows no escape sequence, a line stays one line) and, when that is longer than
// max_bytes, cut before a character and ended with "...". An input file (a private key named by
// mistake) is never quoted whole.
inline std::string escaped_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::string piece;
    if (c == '\n') {
      piece = "\\n";
    } else if (c == '\t') {
      piece = "\\t";
    } else if (c == '\r') {
      piece = "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      piece = hex;
    } else {
      std::size_t end = i + 1;  // a whole UTF-8 character, never part of one
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) ++end;
      piece = std::string(text.substr(i, end - i));
      i = end - 1;
    }
    if (out.size() + piece.size() > max_bytes) return out + "...";
    out += piece;
  }
  return out;
}

}  // namespace kvsweep
