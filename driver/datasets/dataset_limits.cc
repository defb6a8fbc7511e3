// The largest sizes a dataset may ask for or hold, and the checks that apply them.
#include "driver/datasets/dataset_limits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/input_file.h"
#include "driver/datasets/dataset_error.h"
#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

constexpr double kPracticalStddevs = 6;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

[[noreturn]] void fail(const DatasetOptions& options, const std::string& field,
                       const std::string& what) {
  throw DatasetError(options.kind + ": " + field + ": " + what);
}

void check_int(const DatasetOptions& options, const std::string& field, int value, int limit) {
  if (value > limit) {
    fail(options, field,
         "expected at most " + std::to_string(limit) + ", got " + std::to_string(value));
  }
}

void check_length(const DatasetOptions& options, const std::string& field,
                  const LengthDistribution& distribution, int limit) {
  if (const auto problem = length_limit_problem(distribution, limit)) {
    fail(options, field + "." + problem->field, problem->message);
  }
}

}  // namespace

double practical_upper_bound(const LengthDistribution& d) {
  if (d.max > 0) return d.max;
  if (d.stddev > 0) return std::max<double>(d.min, d.mean + kPracticalStddevs * d.stddev);
  return std::max<double>(d.min, d.mean);
}

std::optional<LengthLimitProblem> length_limit_problem(const LengthDistribution& d, int limit) {
  const std::string at_most = "expected at most " + std::to_string(limit) + ", got ";
  if (d.mean > limit) return LengthLimitProblem{"mean", at_most + number(d.mean)};
  if (d.min > limit) return LengthLimitProblem{"min", at_most + std::to_string(d.min)};
  if (d.max > limit) return LengthLimitProblem{"max", at_most + std::to_string(d.max)};
  if (d.max == 0 && practical_upper_bound(d) > limit) {
    return LengthLimitProblem{"stddev", "with no max, draws reach about " +
                                            number(practical_upper_bound(d)) +
                                            "; give a max of at most " + std::to_string(limit)};
  }
  return std::nullopt;
}

std::uintmax_t generated_text_bytes(const DatasetOptions& o) {
  double bytes = 0;
  if (o.kind == "synthetic-multiturn") {
    // Every conversation holds its own copy of the system prompt.
    const double words =
        practical_upper_bound(o.system_prompt_words) +
        practical_upper_bound(o.turns) *
            (practical_upper_bound(o.user_words) + practical_upper_bound(o.assistant_words));
    bytes = static_cast<double>(o.conversations) * words * kBytesPerWordEstimate;
  } else if (o.kind == "shared-prefix") {
    bytes = static_cast<double>(o.num_prefixes) * o.prompts_per_prefix *
            (static_cast<double>(o.prefix_tokens) + o.suffix_tokens) * kBytesPerToken;
  } else if (o.kind == "random") {
    const double input = std::ceil(o.random_input_len * (1.0 + o.random_range_ratio));
    bytes = static_cast<double>(o.num_prompts) * (input + o.random_prefix_len) * kBytesPerToken;
  }
  // Doubles hold every product above exactly enough; clamp before converting back.
  return static_cast<std::uintmax_t>(std::min(bytes, 1e18));
}

void check_dataset_limits(const DatasetOptions& o) {
  const std::string& kind = o.kind;
  if (kind == "synthetic-multiturn") {
    check_int(o, "conversations", o.conversations, kMaxConversations);
    check_length(o, "turns", o.turns, kMaxTurns);
    check_length(o, "system_prompt_words", o.system_prompt_words, kMaxMessageWords);
    check_length(o, "user_words", o.user_words, kMaxMessageWords);
    check_length(o, "assistant_words", o.assistant_words, kMaxMessageWords);
    check_length(o, "output_tokens", o.output_tokens, kMaxOutputTokens);
  } else if (kind == "shared-prefix") {
    check_int(o, "num_prefixes", o.num_prefixes, kMaxConversations);
    check_int(o, "prompts_per_prefix", o.prompts_per_prefix, kMaxConversations);
    if (static_cast<double>(o.num_prefixes) * o.prompts_per_prefix > kMaxConversations) {
      fail(o, "prompts_per_prefix",
           "num_prefixes x prompts_per_prefix is " +
               number(static_cast<double>(o.num_prefixes) * o.prompts_per_prefix) +
               " prompts, more than the " + std::to_string(kMaxConversations) + " allowed");
    }
    check_int(o, "prefix_tokens", o.prefix_tokens, kMaxPromptTokens);
    check_int(o, "suffix_tokens", o.suffix_tokens, kMaxPromptTokens);
    check_length(o, "output_tokens", o.output_tokens, kMaxOutputTokens);
  } else if (kind == "random") {
    check_int(o, "num_prompts", o.num_prompts, kMaxConversations);
    check_int(o, "random_input_len", o.random_input_len, kMaxPromptTokens);
    check_int(o, "random_prefix_len", o.random_prefix_len, kMaxPromptTokens);
    check_int(o, "random_output_len", o.random_output_len, kMaxOutputTokens);
  } else if (kind == "sharegpt") {
    check_int(o, "max_conversations", o.max_conversations, kMaxConversations);
  } else if (kind == "mooncake") {
    check_int(o, "block_size", o.block_size, kMaxPromptTokens);
    if (o.time_scale > kMaxTimeScale) {
      fail(o, "time_scale",
           "expected at most " + number(kMaxTimeScale) + ", got " + std::to_string(o.time_scale));
    }
  }
  const std::uintmax_t bytes = generated_text_bytes(o);
  if (bytes > kMaxWorkloadTextBytes) {
    fail(o, "sizes",
         "these sizes make about " + format_bytes(bytes) +
             " of prompt text, more "
             "than the " +
             format_bytes(kMaxWorkloadTextBytes) +
             " a dataset may hold; lower the counts or lengths");
  }
}

}  // namespace kvsweep::driver
