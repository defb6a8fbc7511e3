// Shared-prefix synthetic prompts: literally identical prefixes per group, unique suffixes.
#include "driver/datasets/shared_prefix.h"

#include <algorithm>
#include <random>
#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

// Streams for derive_seed: each kind of text gets its own generator family.
constexpr std::uint64_t kSharedPrefixStream = 1;
constexpr std::uint64_t kSuffixStream = 2;
constexpr std::uint64_t kOrderStream = 3;
constexpr std::uint64_t kOutputStream = 4;
constexpr int kMinTagTokens = 4;  // 16 bytes hold "Prefix 12345: " and "\nQ1234.1234: "

void require_at_least(int value, int minimum, const char* field) {
  if (value < minimum) {
    throw DatasetError(std::string("shared-prefix: ") + field + ": expected >= " +
                       std::to_string(minimum) + ", got " + std::to_string(value));
  }
}

}  // namespace

Workload make_shared_prefix(const DatasetOptions& options) {
  require_at_least(options.num_prefixes, 1, "num_prefixes");
  require_at_least(options.prompts_per_prefix, 1, "prompts_per_prefix");
  require_at_least(options.prefix_tokens, kMinTagTokens, "prefix_tokens");
  require_at_least(options.suffix_tokens, kMinTagTokens, "suffix_tokens");
  validate_length_distribution(options.output_tokens, "shared-prefix: output_tokens");

  const bool sets_output = sets_max_tokens(options.output_tokens);
  std::mt19937_64 output_rng(derive_seed(options.seed, kOutputStream, 0));
  Workload workload;
  workload.conversations.reserve(static_cast<std::size_t>(options.num_prefixes) *
                                 static_cast<std::size_t>(options.prompts_per_prefix));
  for (int g = 0; g < options.num_prefixes; ++g) {
    std::mt19937_64 prefix_rng(
        derive_seed(options.seed, kSharedPrefixStream, static_cast<std::uint64_t>(g)));
    const std::string prefix =
        text_of_tokens("Prefix " + std::to_string(g) + ": ", options.prefix_tokens, prefix_rng);
    for (int i = 0; i < options.prompts_per_prefix; ++i) {
      const std::uint64_t index =
          static_cast<std::uint64_t>(g) * static_cast<std::uint64_t>(options.prompts_per_prefix) +
          static_cast<std::uint64_t>(i);
      std::mt19937_64 suffix_rng(derive_seed(options.seed, kSuffixStream, index));
      Conversation conversation;
      conversation.user.push_back(
          prefix + text_of_tokens("\nQ" + std::to_string(g) + "." + std::to_string(i) + ": ",
                                  options.suffix_tokens, suffix_rng));
      conversation.assistant.emplace_back();
      if (sets_output)
        conversation.max_tokens.push_back(sample_length(options.output_tokens, output_rng));
      workload.conversations.push_back(std::move(conversation));
    }
  }
  if (!options.ordered) {
    // std::shuffle's algorithm is not pinned by the standard; libstdc++ is our only library.
    std::mt19937_64 order_rng(derive_seed(options.seed, kOrderStream, 0));
    std::shuffle(workload.conversations.begin(), workload.conversations.end(), order_rng);
  }
  workload.description = "shared-prefix: " + std::to_string(options.num_prefixes) + " prefixes x " +
                         std::to_string(options.prompts_per_prefix) + " prompts, " +
                         std::to_string(options.prefix_tokens) + " + " +
                         std::to_string(options.suffix_tokens) + " tokens" +
                         (options.ordered ? ", ordered" : ", shuffled");
  return workload;
}

}  // namespace kvsweep::driver
