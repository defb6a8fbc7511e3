// Synthetic multi-turn conversations with sampled lengths (make_synthetic_multiturn-compatible).
#include "driver/datasets/synthetic_multiturn.h"

#include <algorithm>
#include <random>
#include <string>

#include "driver/conversation.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

constexpr std::uint64_t kTurnLengthStream = 11;

}  // namespace

Workload make_synthetic_multiturn_workload(const DatasetOptions& options) {
  if (options.conversations < 1) {
    throw DatasetError("synthetic-multiturn: conversations: expected >= 1, got " +
                       std::to_string(options.conversations));
  }
  validate_length_distribution(options.turns, "synthetic-multiturn: turns");
  validate_length_distribution(options.system_prompt_words,
                               "synthetic-multiturn: system_prompt_words");
  validate_length_distribution(options.user_words, "synthetic-multiturn: user_words");
  validate_length_distribution(options.assistant_words, "synthetic-multiturn: assistant_words");
  validate_length_distribution(options.output_tokens, "synthetic-multiturn: output_tokens");

  // Same engine and seed as make_synthetic_multiturn for the text; lengths come from their own
  // generator so constant distributions leave the text sequence untouched.
  std::mt19937_64 text_rng(options.seed);
  std::mt19937_64 length_rng(derive_seed(options.seed, kTurnLengthStream, 0));
  Workload workload;
  const std::string system_prompt =
      synthetic_words(text_rng, sample_length(options.system_prompt_words, length_rng));
  const bool sets_output = sets_max_tokens(options.output_tokens);
  std::size_t total_turns = 0;
  for (int c = 0; c < options.conversations; ++c) {
    Conversation conversation;
    conversation.system_prompt = system_prompt;
    const int turns = std::max(1, sample_length(options.turns, length_rng));
    for (int t = 0; t < turns; ++t) {
      std::string user = synthetic_words(text_rng, sample_length(options.user_words, length_rng));
      // As make_synthetic_multiturn: the tag keeps first messages distinct in 100 characters.
      if (t == 0) user = "Conversation " + std::to_string(c) + ": " + user;
      conversation.user.push_back(std::move(user));
      conversation.assistant.push_back(
          synthetic_words(text_rng, sample_length(options.assistant_words, length_rng)));
      if (sets_output)
        conversation.max_tokens.push_back(sample_length(options.output_tokens, length_rng));
    }
    total_turns += conversation.user.size();
    workload.conversations.push_back(std::move(conversation));
  }
  workload.description = "synthetic-multiturn: " + std::to_string(options.conversations) +
                         " conversations, " + std::to_string(total_turns) + " turns";
  return workload;
}

}  // namespace kvsweep::driver
