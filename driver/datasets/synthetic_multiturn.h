// Synthetic multi-turn conversations whose lengths follow LengthDistributions.
#pragma once

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"

namespace kvsweep::driver {

// options.conversations conversations; per conversation a number of turns from options.turns
// (at least 1), per turn user and assistant messages of user_words / assistant_words words,
// one system prompt of system_prompt_words words shared by all, max_tokens from output_tokens.
// Text is drawn from the same generator, in the same order, as make_synthetic_multiturn, and
// lengths from a separate one: with every distribution constant the conversations equal
// make_synthetic_multiturn's for the same seed, and changing a distribution's spread changes
// lengths without reshuffling which words come first.
Workload make_synthetic_multiturn_workload(const DatasetOptions& options);

}  // namespace kvsweep::driver
