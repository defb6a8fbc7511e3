// Deterministic tokenizer stand-in: identical text prefixes give identical token prefixes.
#include "sim/engine/tokenizer.h"

#include <xxhash.h>

#include <array>

namespace kvsweep::sim {
namespace {

constexpr std::size_t kPieceBytes = 4;
// Llama 3's vocabulary size, so ids look like real ones. Collisions are harmless: only equal
// pieces need equal ids.
constexpr std::uint64_t kTokenizerVocabSize = 128256;
constexpr std::uint64_t kPieceSeed = 0x746f6b656e697a65ULL;

// Common short English words: generated text reads like text and tokenizes like it (each
// piece plus its space is 3 to 6 bytes, about one 4-byte token).
constexpr std::array<const char*, 48> kWords = {
    "the",  "of",    "and",  "to",    "in",    "is",   "that", "for",  "it",    "as",
    "was",  "with",  "be",   "by",    "on",    "not",  "he",   "this", "are",   "or",
    "his",  "from",  "at",   "which", "but",   "have", "an",   "had",  "they",  "you",
    "were", "their", "one",  "all",   "we",    "can",  "her",  "has",  "there", "been",
    "if",   "more",  "when", "will",  "would", "who",  "so",   "no"};

}  // namespace

std::vector<TokenId> tokenize(std::string_view text) {
  std::vector<TokenId> tokens;
  tokens.reserve((text.size() + kPieceBytes - 1) / kPieceBytes);
  for (std::size_t at = 0; at < text.size(); at += kPieceBytes) {
    const std::string_view piece = text.substr(at, kPieceBytes);
    tokens.push_back(static_cast<TokenId>(
        XXH3_64bits_withSeed(piece.data(), piece.size(), kPieceSeed) % kTokenizerVocabSize));
  }
  return tokens;
}

std::string generated_piece(std::uint64_t seed, int index) {
  const std::uint64_t key[2] = {seed, static_cast<std::uint64_t>(index)};
  const std::uint64_t pick = XXH3_64bits_withSeed(key, sizeof(key), kPieceSeed) % kWords.size();
  return std::string(" ") + kWords[pick];
}

}  // namespace kvsweep::sim
