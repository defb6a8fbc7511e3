// vLLM's `random` dataset: a shared prefix, then random text of uniformly drawn lengths.
#include "driver/datasets/random_prompts.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "driver/datasets/dataset_error.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

// Streams for derive_seed (each kind of draw has its own generator family).
constexpr std::uint64_t kLengthStream = 1;
constexpr std::uint64_t kPrefixStream = 2;
constexpr std::uint64_t kTextStream = 3;

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw DatasetError("random: " + field + ": " + what);
}

struct Range {
  int low = 0;
  int high = 0;
};

// vLLM's bounds: floor for the low end, ceil for the high end.
Range range_of(int length, double ratio) {
  return {static_cast<int>(std::floor(length * (1.0 - ratio))),
          static_cast<int>(std::ceil(length * (1.0 + ratio)))};
}

std::string prompt_number_text(double value) {
  std::string text = std::to_string(value);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

Workload make_random_prompts(const DatasetOptions& options) {
  if (options.num_prompts < 1) {
    fail("num_prompts", "expected >= 1, got " + std::to_string(options.num_prompts));
  }
  const double ratio = options.random_range_ratio;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    fail("random_range_ratio", "expected a number in [0, 1), got " + prompt_number_text(ratio));
  }
  if (options.random_input_len < 0) {
    fail("random_input_len", "expected >= 0, got " + std::to_string(options.random_input_len));
  }
  if (options.random_output_len < 1) {
    fail("random_output_len", "expected >= 1, got " + std::to_string(options.random_output_len));
  }
  if (options.random_prefix_len < 0) {
    fail("random_prefix_len", "expected >= 0, got " + std::to_string(options.random_prefix_len));
  }
  const Range input = range_of(options.random_input_len, ratio);
  Range output = range_of(options.random_output_len, ratio);
  output.low = std::max(output.low, 1);  // as vLLM: never ask for 0 tokens
  if (options.random_prefix_len + input.low < 1) {
    fail("random_input_len", "a prompt could have no token: prefix " +
                                 std::to_string(options.random_prefix_len) + " + shortest input " +
                                 std::to_string(input.low) +
                                 "; raise random_input_len or random_prefix_len, or lower "
                                 "random_range_ratio");
  }

  std::mt19937_64 prefix_rng(derive_seed(options.seed, kPrefixStream, 0));
  const std::string prefix = text_of_tokens("", options.random_prefix_len, prefix_rng);
  // std::uniform_int_distribution is not pinned by the standard; libstdc++ is our only library.
  std::mt19937_64 length_rng(derive_seed(options.seed, kLengthStream, 0));
  std::uniform_int_distribution<int> input_length(input.low, input.high);
  std::uniform_int_distribution<int> output_length(output.low, output.high);

  Workload workload;
  workload.conversations.reserve(static_cast<std::size_t>(options.num_prompts));
  for (int i = 0; i < options.num_prompts; ++i) {
    const int input_tokens = input_length(length_rng);
    const int output_tokens = output_length(length_rng);
    std::mt19937_64 text_rng(derive_seed(options.seed, kTextStream, static_cast<std::uint64_t>(i)));
    Conversation conversation;
    conversation.user.push_back(
        prefix + text_of_tokens("R" + std::to_string(i) + ": ", input_tokens, text_rng));
    conversation.assistant.emplace_back();
    conversation.max_tokens.push_back(output_tokens);
    workload.conversations.push_back(std::move(conversation));
  }
  workload.description =
      "random: " + std::to_string(options.num_prompts) + " prompts, input " +
      std::to_string(options.random_input_len) + " tokens" +
      (ratio > 0 ? " [" + std::to_string(input.low) + ", " + std::to_string(input.high) + "]"
                 : std::string()) +
      (options.random_prefix_len > 0
           ? " after a shared prefix of " + std::to_string(options.random_prefix_len)
           : std::string()) +
      ", output " + std::to_string(options.random_output_len) +
      (ratio > 0 ? " [" + std::to_string(output.low) + ", " + std::to_string(output.high) + "]"
                 : std::string());
  return workload;
}

}  // namespace kvsweep::driver
