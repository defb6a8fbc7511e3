// Multi-turn conversations: turn messages and the seeded synthetic dataset.
#include "driver/conversation.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvsweep::driver {
namespace {

// A fixed vocabulary: the dataset must not depend on the machine's locale or files.
constexpr std::array<std::string_view, 64> kVocabulary = {
    "cache",     "prefix",  "token",    "router",     "replica", "latency", "stream",   "block",
    "memory",    "request", "model",    "server",     "batch",   "decode",  "prefill",  "queue",
    "policy",    "hash",    "load",     "balance",    "context", "window",  "answer",   "question",
    "system",    "user",    "reply",    "measure",    "result",  "sample",  "report",   "cluster",
    "node",      "gpu",     "kernel",   "tensor",     "layer",   "weight",  "vector",   "matrix",
    "attention", "head",    "sequence", "output",     "input",   "length",  "budget",   "rate",
    "time",      "first",   "second",   "throughput", "goodput", "engine",  "schedule", "evict",
    "reuse",     "warm",    "cold",     "hit",        "miss",    "route",   "shard",    "fleet",
};

std::string random_words(std::mt19937_64& rng, int count) {
  std::uniform_int_distribution<std::size_t> pick(0, kVocabulary.size() - 1);
  std::string text;
  for (int i = 0; i < count; ++i) {
    if (i > 0) text.push_back(' ');
    text.append(kVocabulary[pick(rng)]);
  }
  return text;
}

}  // namespace

std::string synthetic_words(std::mt19937_64& rng, int count) { return random_words(rng, count); }

std::uint64_t turn_fingerprint(const Conversation& conversation, int turn, int max_tokens) {
  if (turn < 0 || static_cast<std::size_t>(turn) >= conversation.user.size()) {
    throw std::out_of_range("turn_fingerprint: turn " + std::to_string(turn) +
                            " of a conversation with " + std::to_string(conversation.user.size()) +
                            " turns");
  }
  // RAII over xxHash's streaming state: one pass over the texts, no copy of the history.
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                       &XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) throw std::bad_alloc();
  const auto add = [&state](std::string_view text) {
    const std::uint64_t size = text.size();
    XXH3_64bits_update(state.get(), &size, sizeof size);
    XXH3_64bits_update(state.get(), text.data(), text.size());
  };
  add(conversation.system_prompt);
  for (int k = 0; k < turn; ++k) {
    const auto i = static_cast<std::size_t>(k);
    add(conversation.user[i]);
    add(i < conversation.assistant.size() ? std::string_view(conversation.assistant[i]) : "");
  }
  add(conversation.user[static_cast<std::size_t>(turn)]);
  const std::int64_t tokens = max_tokens;
  XXH3_64bits_update(state.get(), &tokens, sizeof tokens);
  const std::uint64_t hash = XXH3_64bits_digest(state.get());
  return hash == 0 ? 1 : hash;
}

std::vector<ChatMessage> messages_for_turn(const Conversation& conversation, int turn,
                                           const std::vector<std::string>* server_replies) {
  if (turn < 0 || static_cast<std::size_t>(turn) >= conversation.user.size()) {
    throw std::out_of_range("messages_for_turn: turn " + std::to_string(turn) +
                            " of a conversation with " + std::to_string(conversation.user.size()) +
                            " turns");
  }
  std::vector<ChatMessage> messages;
  messages.reserve(2 * static_cast<std::size_t>(turn) + 2);
  if (!conversation.system_prompt.empty()) {
    messages.push_back({"system", conversation.system_prompt});
  }
  for (int k = 0; k < turn; ++k) {
    messages.push_back({"user", conversation.user[k]});
    const std::vector<std::string>& replies =
        server_replies != nullptr ? *server_replies : conversation.assistant;
    const std::string reply =
        static_cast<std::size_t>(k) < replies.size() ? replies[static_cast<std::size_t>(k)] : "";
    messages.push_back({"assistant", reply});
  }
  messages.push_back({"user", conversation.user[turn]});
  return messages;
}

std::vector<Conversation> make_synthetic_multiturn(const SyntheticMultiTurnOptions& options) {
  // std::mt19937_64 with uniform_int_distribution: the engine is fully specified by the
  // standard; the distribution is not, but libstdc++ is the only library we build with.
  std::mt19937_64 rng(options.seed);
  const std::string system_prompt = random_words(rng, options.system_prompt_words);
  std::vector<Conversation> conversations;
  conversations.reserve(static_cast<std::size_t>(std::max(options.conversations, 0)));
  for (int c = 0; c < options.conversations; ++c) {
    Conversation conversation;
    conversation.system_prompt = system_prompt;
    for (int t = 0; t < options.turns; ++t) {
      std::string user = random_words(rng, options.user_words);
      // The leading tag keeps each conversation's first user message unique within its first
      // 100 characters, so prefix-hash routing can tell conversations apart.
      if (t == 0) user = "Conversation " + std::to_string(c) + ": " + user;
      conversation.user.push_back(std::move(user));
      conversation.assistant.push_back(random_words(rng, options.assistant_words));
    }
    conversations.push_back(std::move(conversation));
  }
  return conversations;
}

}  // namespace kvsweep::driver
