// Multi-turn conversations: the dataset shape the load driver replays.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kvsweep::driver {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct Conversation {
  std::string system_prompt;           // may be empty
  std::vector<std::string> user;       // user message per turn
  std::vector<std::string> assistant;  // the dataset's reply per turn (same size as user)
  std::vector<int> max_tokens;         // per turn output length; empty, or 0 for a turn: the run's
  // When true, turn k's history carries the replies the server actually gave to turns < k
  // (the k6 chat client of seed 001), not the dataset's `assistant` texts.
  bool replies_from_server = false;
};

// Messages for turn k (0-based): system prompt, then user/assistant pairs of turns < k,
// then user message k. The assistant texts are `server_replies[i]` when given (one per earlier
// turn), else the dataset's.
std::vector<ChatMessage> messages_for_turn(
    const Conversation& conversation, int turn,
    const std::vector<std::string>* server_replies = nullptr);

// A fingerprint of what the dataset asks at turn k: the system prompt, the dataset's user and
// assistant texts of turns < k, user message k and the turn's output length. The replies a
// server gave are left out on purpose: they differ between a run and its replay, while the
// dataset's text does not, so a replay that regenerated the same traffic has the same
// fingerprints (kvsweep replay checks them). Fields are length-prefixed, so moving text from one
// message to the next changes it. Never 0: a stored 0 means "not recorded" (schema < 13).
std::uint64_t turn_fingerprint(const Conversation& conversation, int turn, int max_tokens);

struct SyntheticMultiTurnOptions {
  int conversations = 64;
  int turns = 6;                  // turns per conversation
  int system_prompt_words = 600;  // one long system prompt shared by every conversation
  int user_words = 40;            // per user message
  int assistant_words = 40;       // per dataset reply
  std::uint64_t seed = 1;
};

// Deterministic for a given seed: the same options always give the same text. The first user
// message of each conversation differs from every other within its first 100 characters, so
// prefix-hash routing can tell conversations apart.
std::vector<Conversation> make_synthetic_multiturn(const SyntheticMultiTurnOptions& options);

// `count` words drawn from a fixed vocabulary, space separated. make_synthetic_multiturn and the
// dataset generators under driver/datasets/ share it, so the same seed gives the same text.
std::string synthetic_words(std::mt19937_64& rng, int count);

}  // namespace kvsweep::driver
