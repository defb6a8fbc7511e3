// The largest sizes a dataset may ask for or hold, and the checks that apply them: each far
// beyond any benchmark kvsweep runs, each small enough that a typo (conversations:
// 2000000000) is a clear error when the dataset is loaded, not a bad_alloc or hours of work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "driver/datasets/dataset_options.h"
#include "driver/datasets/length_distribution.h"

namespace kvsweep::driver {

// A dataset file (ShareGPT V3, the largest in common use, is 673 MB).
inline constexpr std::uintmax_t kMaxDatasetFileBytes = std::uintmax_t{1} << 30;
// Conversations, prompts or trace rows.
inline constexpr int kMaxConversations = 1'000'000;
inline constexpr int kMaxTurns = 1'000;  // turns per conversation
// system_prompt_words, user_words, assistant_words: one message's words.
inline constexpr int kMaxMessageWords = 1'000'000;
// One prompt's tokens (prefix_tokens, suffix_tokens, random_input_len, random_prefix_len, a
// trace row's input_length, block_size), and one request's output tokens (output_tokens,
// random_output_len, a trace row's output_length).
inline constexpr int kMaxPromptTokens = 1'000'000;
inline constexpr int kMaxOutputTokens = 1'000'000;
// All the text a dataset holds in memory for the run.
inline constexpr std::uintmax_t kMaxWorkloadTextBytes = std::uintmax_t{1} << 30;
inline constexpr double kMaxTimeScale = 1e6;  // mooncake time_scale

// Bytes a synthetic word takes in memory, space included: an upper estimate (the vocabulary's
// words are short English words).
inline constexpr int kBytesPerWordEstimate = 8;

// The largest length the distribution draws in practice: its max, else (normal draws without a
// max) mean + 6 stddev, beyond which a draw has odds of 1 in 10^9.
double practical_upper_bound(const LengthDistribution& distribution);

// Bytes of text the generated dataset holds at most (synthetic-multiturn, shared-prefix,
// random); 0 for the kinds that read a file, bounded by kMaxDatasetFileBytes instead.
std::uintmax_t generated_text_bytes(const DatasetOptions& options);

// A length distribution beyond its limit: the sub-field ("mean", "min", "max", "stddev") and
// what is wrong: "expected at most 1000, got 5000", or "with no max, draws reach about
// 2400000; give a max of at most 1000000".
struct LengthLimitProblem {
  std::string field;
  std::string message;
};
std::optional<LengthLimitProblem> length_limit_problem(const LengthDistribution& distribution,
                                                       int limit);

// Throws DatasetError "<kind>: <field>: <what>" for the first size of `options` beyond its
// limit, and for generated text beyond kMaxWorkloadTextBytes. The loaders call it first; the
// scenario loader reports the same limits at the file's line and column.
void check_dataset_limits(const DatasetOptions& options);

}  // namespace kvsweep::driver
