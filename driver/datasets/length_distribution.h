// Length distributions for synthetic datasets (GuideLLM-style mean/stddev/min/max) and sampling.
#pragma once

#include <random>
#include <string>

namespace kvsweep::driver {

// What the user wrote; the unit (words, tokens, turns) is in the name of the field holding it.
// - stddev > 0: normal(mean, stddev), rounded, then clamped to [min, max];
// - stddev == 0, mean == 0 and max > 0: uniform integer in [min, max] (GuideLLM's rule when
//   only min/max are given);
// - otherwise the constant mean, rounded and clamped.
// max == 0 means no upper bound. `LengthDistribution{40}` is the constant 40.
struct LengthDistribution {
  double mean = 0;
  double stddev = 0;
  int min = 0;
  int max = 0;

  bool operator==(const LengthDistribution&) const = default;
};

// True when every sample is the same value (no random draw is made for it).
bool is_constant(const LengthDistribution& distribution);

// False for the constant 0 (after clamping): an output_tokens that leaves max_tokens to the run.
bool sets_max_tokens(const LengthDistribution& output_tokens);

// Throws DatasetError naming `field` ("synthetic-multiturn: user_words: ...") when the
// distribution cannot be sampled: negative numbers, or max below min.
void validate_length_distribution(const LengthDistribution& distribution, const std::string& field);

// One length >= 0. Draws from `rng` only when the distribution is not constant. std::normal_
// and uniform_int_distribution are not pinned by the standard; libstdc++ is our only library,
// so a seed gives the same lengths on every build we make.
int sample_length(const LengthDistribution& distribution, std::mt19937_64& rng);

}  // namespace kvsweep::driver
