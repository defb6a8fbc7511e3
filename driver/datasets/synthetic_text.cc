// Deterministic filler text of a given token length, and per-item seeds.
#include "driver/datasets/synthetic_text.h"

#include "driver/conversation.h"

namespace kvsweep::driver {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ index);
}

std::string text_of_tokens(const std::string& head, int tokens, std::mt19937_64& rng) {
  const std::size_t length = tokens > 0 ? static_cast<std::size_t>(tokens) * kBytesPerToken : 0;
  std::string text = head;
  text.reserve(length + 16);
  while (text.size() < length) {
    if (!text.empty() && text.back() != ' ' && text.back() != '\n') text.push_back(' ');
    text.append(synthetic_words(rng, 1));
  }
  text.resize(length);
  return text;
}

}  // namespace kvsweep::driver
